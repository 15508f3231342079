"""Commands against a running server (`--url`): one request, its error said plainly."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from .keys import client_headers, error_message

if TYPE_CHECKING:
    import httpx


def server_url(value: str) -> str:
    """The type of every `--url`: an http(s) URL with a host, checked before anything runs
    (`http://[::1` was a traceback from deep in the request)."""
    import httpx

    try:
        url = httpx.URL(value)
    except (httpx.InvalidURL, ValueError) as exc:
        raise argparse.ArgumentTypeError(f"{value!r} is not a URL: {exc}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a server's URL: give http:// or https:// and a host, "
            "e.g. http://127.0.0.1:8000"
        )
    return value


class RemoteFailed(Exception):
    """The request did not succeed; the message is printed and the command exits 1."""


def call(url: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
    """A 2xx response to `method path` on the server at `url`, with STREAM_RAG_API_KEY."""
    import httpx

    try:
        response = httpx.request(
            method,
            f"{url.rstrip('/')}{path}",
            headers=client_headers(),
            timeout=httpx.Timeout(30, read=300),
            **kwargs,
        )
    except httpx.InvalidURL as exc:
        raise RemoteFailed(f"--url {url} is not a URL: {exc}") from None
    except httpx.HTTPError as exc:
        raise RemoteFailed(f"cannot reach {url}: {exc}") from None
    if not response.is_success:
        raise RemoteFailed(error_message(response))
    return response


def body(response: httpx.Response) -> Any:
    """The response's JSON, or `RemoteFailed` when what answered is not a stream_rag server."""
    try:
        return response.json()
    except ValueError:
        raise RemoteFailed(f"{response.request.url} answered with something not JSON") from None


def fail(exc: RemoteFailed) -> int:
    print(f"stream-rag: error: {exc}", file=sys.stderr)
    return 1
