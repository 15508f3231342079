"""`stream-rag serve`'s HTTP protocol (http/serving.py): httptools, with a bound on the time
and the size of a request head, against a real uvicorn in a thread."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, StreamingResponse
from starlette.routing import Route

from stream_rag.http.serving import MAX_HEAD_BYTES, GuardedHttpToolsProtocol

from .helpers import HANG_GUARD_S, free_port, serving_thread


async def echo(request: Request) -> PlainTextResponse:
    if request.query_params.get("wait"):
        # Longer than the shortest head timeout below, measured on the server's own clock.
        await anyio.sleep(0.6)
    return PlainTextResponse(f"{len(await request.body())} bytes")


@contextmanager
def serving(
    header_timeout_s: float,
    early: Callable[[Request], Awaitable[PlainTextResponse]] | None = None,
    stream: Callable[[Request], Awaitable[StreamingResponse]] | None = None,
) -> Iterator[tuple[str, int]]:
    protocol = type("Guarded", (GuardedHttpToolsProtocol,), {"header_timeout_s": header_timeout_s})
    routes = [Route("/", echo, methods=["GET", "POST"])]
    if early is not None:
        routes.append(Route("/early", early, methods=["POST"]))
    if stream is not None:
        routes.append(Route("/stream", stream))
    app = Starlette(routes=routes)
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", http=protocol)
    with serving_thread(config):
        yield "127.0.0.1", port


def read_all(sock: socket.socket) -> bytes:
    """Everything until the server closes the connection."""
    sock.settimeout(HANG_GUARD_S)
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_a_head_past_the_limit_gets_400_and_the_connection_closes() -> None:
    with serving(HANG_GUARD_S) as address, socket.create_connection(address) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        line = b"X-Filler: " + b"a" * 1000 + b"\r\n"
        for _ in range(MAX_HEAD_BYTES // len(line) + 1):  # never the blank line
            sock.sendall(line)
        reply = read_all(sock)
    assert reply.startswith(b"HTTP/1.1 400 ")


def test_a_large_body_sent_with_its_head_is_not_counted_as_head() -> None:
    body = b"x" * (4 * MAX_HEAD_BYTES)
    with serving(HANG_GUARD_S) as address, socket.create_connection(address) as sock:
        head = b"POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %d\r\n\r\n"
        sock.sendall(head % len(body) + body)  # in one write
        reply = read_all(sock)
    assert reply.startswith(b"HTTP/1.1 200 ")
    assert reply.endswith(b"%d bytes" % len(body))


def test_an_unfinished_head_is_closed_after_the_timeout_and_others_are_served() -> None:
    with serving(0.2) as address, socket.create_connection(address) as slow:
        slow.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and never the rest
        with socket.create_connection(address) as other:
            # Two requests on one connection: the timer restarts after the first response.
            other.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            other.settimeout(HANG_GUARD_S)
            first = other.recv(65536)
            other.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            second = read_all(other)
        assert first.startswith(b"HTTP/1.1 200 ")
        assert second.startswith(b"HTTP/1.1 200 ")
        assert read_all(slow) == b""  # closed without a response


def test_a_pipelined_request_answered_after_the_head_timeout_is_not_cut() -> None:
    # Two requests in one write: the second waits while the first (slow) one is answered, longer
    # than the head timeout; its head arrived long before, so its answer goes out in full.
    with serving(0.2) as address, socket.create_connection(address) as sock:
        sock.sendall(
            b"GET /?wait=1 HTTP/1.1\r\nHost: x\r\n\r\n"
            b"GET /?wait=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        reply = read_all(sock)
    assert reply.count(b"HTTP/1.1 200 ") == 2


async def early(request: Request) -> PlainTextResponse:
    # Answers without reading the body, as the JSON and upload limits do past their bound.
    return PlainTextResponse("too large", status_code=413)


def test_the_rest_of_a_body_answered_early_is_not_read_as_a_head() -> None:
    # The 413 goes out before the 1 MB body has arrived; the rest of it is that request's body
    # (uvicorn discards it), not a head past the limit, so the next request is answered.
    body = b"x" * (16 * MAX_HEAD_BYTES)
    with serving(HANG_GUARD_S, early) as address, socket.create_connection(address) as sock:
        sock.sendall(b"POST /early HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body))
        sock.sendall(body)
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        reply = read_all(sock)
    assert reply.startswith(b"HTTP/1.1 413 ")
    assert b"HTTP/1.1 400 " not in reply
    assert reply.count(b"HTTP/1.1 200 ") == 1
    assert reply.endswith(b"0 bytes")


def test_a_head_past_the_limit_in_one_write_gets_400() -> None:
    filler = b"X-Filler: " + b"a" * (MAX_HEAD_BYTES + 8 * 1024) + b"\r\n"
    with serving(HANG_GUARD_S) as address, socket.create_connection(address) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n" + filler + b"\r\n")
        reply = read_all(sock)
    assert reply.startswith(b"HTTP/1.1 400 ")
    assert json.loads(reply.partition(b"\r\n\r\n")[2])["error"]["message"] == (
        "the request head is over 64 KB"
    )


def test_a_head_just_under_the_limit_is_served() -> None:
    filler = b"X-Filler: " + b"a" * (MAX_HEAD_BYTES - 1024) + b"\r\n"
    with serving(HANG_GUARD_S) as address, socket.create_connection(address) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + filler + b"\r\n")
        reply = read_all(sock)
    assert reply.startswith(b"HTTP/1.1 200 ")


async def pieces(request: Request) -> StreamingResponse:
    async def body() -> AsyncIterator[bytes]:
        for piece in (b"data: one\n\n", b"data: two\n\n"):
            yield piece

    return StreamingResponse(body(), media_type="text/event-stream", headers=KEEP_ALIVE)


KEEP_ALIVE = {"Connection": "keep-alive"}  # as sse-starlette's responses carry


def test_an_http_1_0_client_gets_a_body_it_can_read_without_chunking() -> None:
    # HTTP/1.0 has no chunked coding (RFC 9112 6.1: a server must not send it to a 1.0
    # request): a body of unknown length is the bytes as they are, ended by the close.
    with serving(HANG_GUARD_S, stream=pieces) as address, socket.create_connection(address) as sock:
        sock.sendall(b"GET /stream HTTP/1.0\r\n\r\n")
        reply = read_all(sock)
    head, _, body = reply.partition(b"\r\n\r\n")
    fields = [line.lower() for line in head.split(b"\r\n")[1:]]
    assert head.startswith(b"HTTP/1.1 200 ")
    assert not [f for f in fields if f.startswith(b"transfer-encoding:")]
    assert [f for f in fields if f.startswith(b"connection:")] == [b"connection: close"]
    assert body == b"data: one\n\ndata: two\n\n"


def test_an_http_1_1_client_still_gets_chunks_and_keeps_the_connection() -> None:
    with serving(HANG_GUARD_S, stream=pieces) as address, socket.create_connection(address) as sock:
        sock.sendall(
            b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n"
            b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        reply = read_all(sock)
    assert b"transfer-encoding: chunked\r\n" in reply
    assert b"b\r\ndata: one\n\n\r\nb\r\ndata: two\n\n\r\n0\r\n\r\n" in reply
    assert reply.endswith(b"0 bytes")


def test_a_request_http_cannot_parse_gets_a_json_400() -> None:
    # Bad input is a 4xx with a JSON error body everywhere, the protocol's own refusals too.
    with serving(HANG_GUARD_S) as address, socket.create_connection(address) as sock:
        sock.sendall(b"GARBAGE\r\n\r\n")
        reply = read_all(sock)
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ")
    assert b"content-type: application/json" in head.lower()
    assert json.loads(body)["error"]["code"] == "invalid_request"


def test_a_head_past_the_limit_after_a_request_in_the_same_write_gets_400() -> None:
    # Part of the second head is read along with the first request, before its count starts.
    filler = b"X-Filler: " + b"a" * (MAX_HEAD_BYTES + 8 * 1024) + b"\r\n"
    with serving(HANG_GUARD_S) as address, socket.create_connection(address) as sock:
        sock.sendall(
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
            + b"GET / HTTP/1.1\r\nHost: x\r\n"
            + filler
            + b"\r\n"
        )
        reply = read_all(sock)
    # The refusal closes the connection at once, the first request's answer perhaps unsent.
    assert reply.count(b"HTTP/1.1 400 ") == 1
    assert reply.count(b"HTTP/1.1 200 ") <= 1
