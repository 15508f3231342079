"""Chat model backends: one streaming protocol; closing the stream cancels the request."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

import anyio
import httpx

from ..errors import StreamRagError
from ..types import Message
from .body import direct_pieces
from .client import openai_client, post_streaming, warm_up
from .network import closed_idle
from .stream import StreamReplyError, content_pieces
from .transport import lean_transport

if TYPE_CHECKING:
    from openai import APIStatusError, AsyncAPIResponse, AsyncStream
    from openai.types.chat import ChatCompletionChunk, ChatCompletionMessageParam


def _timeout_types() -> tuple[type[BaseException], ...]:
    """Read timeouts of the HTTP library the openai client uses (httpx, or httpx2 in openai
    3.x): a read timeout mid-stream is a stall."""
    types: list[type[BaseException]] = [httpx.TimeoutException]
    try:
        httpx2 = importlib.import_module("httpx2")
    except ImportError:
        pass
    else:
        types.append(httpx2.TimeoutException)
    return tuple(types)


_TIMEOUTS = _timeout_types()
_DRAIN_S = 1.0
# Sends of one request whose reused connection the server closed as idle: each failure drops
# one pooled connection, so a few more than once covers a pool whose connections all expired
# together; bounded so that a server closing every reused connection still gets an error.
_CLOSED_IDLE_TRIES = 16
_T = TypeVar("_T")


class ModelError(StreamRagError):
    """The chat model failed: unreachable, an error reply, or a stall past the timeout."""

    code = "upstream_error"
    status = 502


class ModelTimeoutError(ModelError):
    code = "upstream_timeout"
    status = 504


class ChatModel(Protocol):
    name: str

    def stream(self, messages: Sequence[Message]) -> AsyncGenerator[str, None]:
        """Text pieces as the model writes them. Use with `contextlib.aclosing` so that an
        abandoned answer closes the upstream request at once."""
        ...


class OpenAIChatModel:
    """Any OpenAI-compatible `/v1/chat/completions` (OpenAI, vLLM, Ollama, llama.cpp...)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        stall_s: float = 20.0,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> None:
        from openai import DEFAULT_CONNECTION_LIMITS, Timeout

        self.name = f"openai:{model}"
        self.model = model
        self.max_tokens = max_tokens
        self.temperature = temperature
        # Ask for token counts (`stream_options.include_usage`) until the server refuses it.
        self.include_usage = True
        # A local model server (vLLM, llama.cpp, Ollama) at plain HTTP: one socket read per
        # token, so the read path's own CPU counts (network.py), and the SDK's platform
        # headers are for OpenAI's servers only (client.py).
        local = base_url.lower().startswith("http://")
        # With the SDK's own limits, which its default transport would have; made for the
        # httpx the SDK sends through (the package of its `Limits`).
        limits = DEFAULT_CONNECTION_LIMITS
        http = importlib.import_module(type(limits).__module__.split(".")[0])
        self.transport = lean_transport(http, limits) if local else None
        self._client = openai_client(
            base_url,
            api_key or "not-needed",
            # The read timeout bounds the gap between two chunks: a stalled stream fails.
            Timeout(timeout_s, read=stall_s),
            lean_headers=local,
            transport=self.transport,
        )
        # The chat types are imported on first use: here, not on the event loop under the
        # first request (that import takes ~150 ms).
        warm_up()

    async def stream(self, messages: Sequence[Message]) -> AsyncGenerator[str, None]:
        import openai

        payload = cast("list[ChatCompletionMessageParam]", [m.to_json() for m in messages])
        try:
            response = await self._open(payload)
        except openai.APITimeoutError:
            raise ModelTimeoutError("the model did not answer in time") from None
        except openai.APIError as exc:
            raise ModelError(f"the model request failed: {_describe(exc)}") from None
        try:
            chunks = _body(response.http_response)
            # Read past httpx when the reply allows it (body.py), else through httpx.
            direct = direct_pieces(response.http_response)
            async with contextlib.aclosing(direct or content_pieces(chunks)) as pieces:
                async for piece in pieces:
                    yield piece
            # What follows `[DONE]` (the body's end) is read too: a response closed before
            # its end takes its connection along, and the next answer would open a new one.
            # The answer is complete by now, so a failure here only costs the connection.
            with anyio.move_on_after(_DRAIN_S), contextlib.suppress(Exception):
                async for _ in chunks:
                    pass
        except StreamReplyError as exc:
            raise ModelError(exc.message) from None
        except _TIMEOUTS:
            raise ModelTimeoutError("the model stalled mid-answer") from None
        except Exception as exc:  # the HTTP layer's own errors
            raise ModelError(f"the model stream broke: {_describe(exc)}") from None
        finally:
            # Shielded: on cancellation (client gone) the upstream connection must still close.
            with anyio.CancelScope(shield=True):
                await response.close()

    async def _open(
        self, payload: list[ChatCompletionMessageParam]
    ) -> AsyncAPIResponse[AsyncStream[ChatCompletionChunk]]:
        """Send the request; without the usage option when the server refuses it."""
        import openai

        try:
            return await self._send_again(payload, include_usage=self.include_usage)
        except openai.APIStatusError as exc:
            # Some OpenAI-compatible servers refuse fields they do not know: when the refusal
            # names the usage option, ask again without it and never send it to this one again.
            # Any other 400 (a bad message, a context too long) would fail again.
            if not (self.include_usage and exc.status_code in (400, 422) and _about_usage(exc)):
                raise
            response = await self._send_again(payload, include_usage=False)
            self.include_usage = False
            return response

    async def _send_again(
        self, payload: list[ChatCompletionMessageParam], *, include_usage: bool
    ) -> AsyncAPIResponse[AsyncStream[ChatCompletionChunk]]:
        """`_send`, sent again after the connection failures that a new try cures."""
        return await _resent(lambda: self._send(payload, include_usage=include_usage))

    async def _send(
        self, payload: list[ChatCompletionMessageParam], *, include_usage: bool
    ) -> AsyncAPIResponse[AsyncStream[ChatCompletionChunk]]:
        # The raw response: the client still sends, maps HTTP errors and retries, but the body
        # is parsed by `PieceDecoder`, not turned into one typed object per token. The body is
        # what `chat.completions.create` sends for these fields (client.py says why it is
        # posted directly), in the same order.
        body: dict[str, object] = {
            "messages": payload,
            "stream": True,
            "model": self.model,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }
        if include_usage:
            body["stream_options"] = {"include_usage": True}
        return await post_streaming(self._client, "/chat/completions", body)

    async def check(self) -> None:
        """Raise unless the endpoint answers (`/readyz`): its model list, which costs no tokens.
        Sent again, as an answer's request is, when a reused connection was closed as idle."""
        await _resent(self._list_models)

    async def _list_models(self) -> None:
        await self._client.models.list()

    async def aclose(self) -> None:
        await self._client.close()


async def _resent(send: Callable[[], Awaitable[_T]]) -> _T:
    """`send()`, called again after the connection failures that a new try cures."""
    import openai

    retried = False
    for _ in range(_CLOSED_IDLE_TRIES):
        try:
            return await send()
        except openai.APITimeoutError:
            raise
        except openai.APIConnectionError as exc:
            # Connections are reused: one the server closes as idle (its keep-alive timeout)
            # just as a request goes out on it ends before any reply, and the server never
            # read the request. The connections that went idle with it may be closing too, so
            # each such failure is sent again, on the pool's next connection; any other
            # connection error once.
            if closed_idle(exc):
                continue
            if retried:
                raise
            retried = True
    raise ModelError("the model server closed every reused connection without a reply")


def _body(response: Any) -> AsyncIterator[bytes]:
    """The body's bytes as they arrive: undecoded when the server sent them uncompressed (one
    generator less per token), else through httpx's decoder."""
    if response.headers.get("content-encoding", "identity").lower() == "identity":
        return cast("AsyncIterator[bytes]", response.aiter_raw())
    return cast("AsyncIterator[bytes]", response.aiter_bytes())


def _about_usage(exc: APIStatusError) -> bool:
    """Whether a refusal is about `stream_options.include_usage` (its message or its body,
    e.g. a validation error's field path, names it)."""
    text = f"{exc.message} {exc.body}"
    return "stream_options" in text or "include_usage" in text


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]
