"""The openai client as the chat model uses it: the same requests, less of the event loop's
CPU for each.

The client still builds, sends and retries every request and maps its errors; what changes is
work it repeats for every request although the result never changes: parsing the same
`/chat/completions` URL twice (the SDK joins it to the base URL, formats it to a string, and
httpx parses that string again), merging the same headers, and, for a model server at plain
HTTP, the SDK's platform headers (`X-Stainless-OS`, `-Arch`, `-Runtime`...), which describe the
client to OpenAI's servers; no local server reads them, and each costs a merge, a check and a
parse at both ends of every request.

And a chat request is posted as `chat.completions.create` would post it, without the method's
own work: it runs every argument (some forty, unused ones included) through the SDK's
type-driven transform and checks the required ones, ~0.1-0.2 ms of the loop per answer for a
body that is plain JSON already. The client's `post` builds, sends, retries and raises as
`create` does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ..request_context import new_id

if TYPE_CHECKING:
    from openai import AsyncAPIResponse, AsyncOpenAI, AsyncStream
    from openai.types.chat import ChatCompletionChunk

# Distinct URLs and header sets a client sends are few (one per endpoint); the caches stop
# growing past this, in case a caller sends many.
_MEMO_LIMIT = 64


class UrlMemo:
    """URLs made from paths, kept (up to `_MEMO_LIMIT`) while the base URL is the same object:
    setting `base_url` again starts over."""

    __slots__ = ("_base", "_found")

    def __init__(self) -> None:
        self._base: object = None
        self._found: dict[str, Any] = {}

    def get(self, base: object, path: str, make: Callable[[str], Any]) -> Any:
        if self._base is not base:
            self._base, self._found = base, {}
        found = self._found.get(path)
        if found is None:
            found = make(path)
            if len(self._found) < _MEMO_LIMIT:
                self._found[path] = found
        return found


@functools.cache
def client_class() -> type[AsyncOpenAI]:
    """`AsyncOpenAI` with the per-request work above memoised (see the module)."""
    from openai import AsyncOpenAI

    class Client(AsyncOpenAI):
        _lean_headers = False

        def _idempotency_key(self) -> str:
            # The client makes an idempotency key for every POST and sends it only when the API
            # has an idempotency header, which OpenAI's has not. `uuid4` reads the system's
            # randomness, a system call that lets go of the GIL, and on a busy server the event
            # loop then waits for a worker thread to hand it back.
            return f"stream-rag-{new_id()}"

        def _prepare_url(self, url: str) -> Any:
            memo = self.__dict__.get("_url_memo")
            if memo is None:
                memo = self._url_memo = UrlMemo()
            # An immutable `httpx.URL`.
            return memo.get(self._base_url, url, super()._prepare_url)

        def platform_headers(self) -> dict[str, str]:
            return {} if self._lean_headers else super().platform_headers()

    # The SDK names itself in `User-Agent` by its class's name.
    Client.__name__ = Client.__qualname__ = "AsyncOpenAI"
    return Client


@functools.cache
def http_client_class() -> type[Any]:
    """The openai client's default httpx client (its limits, redirects), with the merge of a
    request's URL and headers with the client's memoised: both are the same every request."""
    from openai import DefaultAsyncHttpxClient

    class HttpClient(DefaultAsyncHttpxClient):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._url_memo = UrlMemo()
            self._memo_headers: dict[tuple[Any, ...], Any] = {}

        def _merge_url(self, url: Any) -> Any:
            if not isinstance(url, str):
                return super()._merge_url(url)
            return self._url_memo.get(self._base_url, url, super()._merge_url)

        def _merge_headers(self, headers: Any = None) -> Any:
            if not isinstance(headers, list):
                return super()._merge_headers(headers)
            # The client's own headers are part of the key: they may be changed in place.
            key = (*headers, None, *self._headers.raw)
            found = self._memo_headers.get(key)
            if found is None:
                found = super()._merge_headers(headers)
                if len(self._memo_headers) < _MEMO_LIMIT:
                    self._memo_headers[key] = found
            # A copy: the request adds its own (`Host`, `Content-Length`) to what it is given.
            copy: Any = type(found)
            return copy(found)

    return HttpClient


def openai_client(
    base_url: str,
    api_key: str,
    timeout: Any,
    *,
    lean_headers: bool = False,
    transport: Any = None,
) -> AsyncOpenAI:
    """An openai client with no retries of its own (the caller's `_resent` decides), sending
    through `transport` (an `httpx2.AsyncBaseTransport`; by default httpx2's)."""
    http_client = http_client_class()(base_url=base_url, timeout=timeout, transport=transport)
    client = client_class()(
        base_url=base_url,
        api_key=api_key,
        timeout=timeout,
        max_retries=0,
        http_client=http_client,
    )
    client._lean_headers = lean_headers  # type: ignore[attr-defined]
    return client


def warm_up() -> None:
    """Import what a chat request needs (~150 ms, once): best not on the event loop."""
    import openai.types.chat  # noqa: F401


async def post_streaming(
    client: AsyncOpenAI, path: str, body: dict[str, object]
) -> AsyncAPIResponse[AsyncStream[ChatCompletionChunk]]:
    """POST `body` through `chat.completions.with_streaming_response.create`: the response
    unread, its body for the caller to stream and close (`response.close()`, which is what
    leaving the SDK's context manager does)."""
    if path != "/chat/completions":
        raise ValueError(f"only /chat/completions is posted, not {path!r}")
    manager = client.chat.completions.with_streaming_response.create(**cast("Any", body))
    response = await manager.__aenter__()
    return cast("AsyncAPIResponse[AsyncStream[ChatCompletionChunk]]", response)
