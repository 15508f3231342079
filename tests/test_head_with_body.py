"""A response's head goes out with its body in one write (http/serving.py `HeadWithBody`):
the server's protocol driven with a transport that records each write, and a real server."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import httpx
import pytest
from starlette.types import Receive, Scope, Send
from uvicorn.config import Config
from uvicorn.server import ServerState

from loadtests.bench_request import MemoryTransport
from stream_rag.http.serving import GuardedHttpToolsProtocol, HeadWithBody

from .helpers import HANG_GUARD_S, HTTP_GUARD_S
from .test_serving_protocol import serving

GET = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"


class Recording(MemoryTransport):
    """A transport that keeps each write as it was made."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        assert not self.closing, "written after close"
        self.writes.append(bytes(data))


async def served(app: Any, request: bytes = GET) -> list[bytes]:
    """The writes the server's protocol makes for one request to `app`."""
    done = asyncio.Event()

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        await app(scope, receive, send)
        done.set()

    config = Config(wrapped, http=GuardedHttpToolsProtocol, log_level="warning")
    config.load()
    protocol = GuardedHttpToolsProtocol(config=config, server_state=ServerState(), app_state={})
    transport = Recording()
    protocol.connection_made(transport)
    protocol.data_received(request)
    await done.wait()
    await asyncio.sleep(0)  # a turn of the loop: anything held goes out
    protocol.connection_lost(None)
    return transport.writes


def start(length: int | None = None) -> dict[str, Any]:
    headers = [(b"content-type", b"text/plain")]
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    return {"type": "http.response.start", "status": 200, "headers": headers}


@pytest.mark.anyio
async def test_a_head_and_its_body_sent_together_are_one_write() -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send(start(5))
        await send({"type": "http.response.body", "body": b"hello"})

    (write,) = await served(app)
    assert write.startswith(b"HTTP/1.1 200 OK\r\n")
    assert write.endswith(b"\r\n\r\nhello")


@pytest.mark.anyio
async def test_a_head_waits_at_most_for_the_end_of_the_loops_turn() -> None:
    sent_alone = asyncio.Event()

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send(start())
        await asyncio.sleep(0.05)  # many turns of the loop: the head went out meanwhile
        sent_alone.set()
        await send({"type": "http.response.body", "body": b"a", "more_body": True})
        await send({"type": "http.response.body", "body": b"b"})

    writes = await served(app)
    assert sent_alone.is_set()
    assert writes[0].startswith(b"HTTP/1.1 200 OK\r\n")
    assert writes[0].endswith(b"\r\n\r\n")
    assert writes[1:] == [b"1\r\na\r\n", b"1\r\nb\r\n0\r\n\r\n"]


@pytest.mark.anyio
async def test_a_large_body_is_written_after_the_head_not_copied() -> None:
    big = b"x" * (1 << 17)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send(start(len(big)))
        await send({"type": "http.response.body", "body": big})

    head, body = await served(app)
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert body == big


@pytest.mark.anyio
async def test_a_held_head_goes_out_before_the_connection_closes() -> None:
    transport = Recording()
    held = HeadWithBody(transport, asyncio.get_running_loop())
    held.write(b"HTTP/1.1 200 OK\r\n\r\n")
    assert transport.writes == []
    held.close()
    assert transport.writes == [b"HTTP/1.1 200 OK\r\n\r\n"]
    assert transport.closing
    await asyncio.sleep(0)  # the end of the turn writes nothing more (nor after the close)
    assert transport.writes == [b"HTTP/1.1 200 OK\r\n\r\n"]


def test_responses_over_a_real_server_are_unchanged() -> None:
    with serving(HANG_GUARD_S) as address:
        # Keep-alive: several requests on one connection, then pipelined ones on a raw socket.
        with httpx.Client(
            base_url=f"http://{address[0]}:{address[1]}", timeout=HTTP_GUARD_S
        ) as client:
            for body in (b"", b"abc", b"x" * 100_000):
                response = client.post("/", content=body)
                assert response.text == f"{len(body)} bytes"
        with socket.create_connection(address) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 2)
            data = b""
            while data.count(b"0 bytes") < 2:
                chunk = sock.recv(65536)
                assert chunk
                data += chunk
    assert data.count(b"HTTP/1.1 200 OK\r\n") == 2
