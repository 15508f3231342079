"""`EventStream` over real HTTP: its head and bytes, pings while the stream waits, the client
leaving, and a failing ping."""

from __future__ import annotations

import functools
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Message, Scope

from stream_rag.http.eventstream import EventStream
from stream_rag.sse import ServerSentEvent, parse_lines
from tests.helpers import running_server


def events() -> list[ServerSentEvent]:
    return [
        ServerSentEvent(data='{"text": "café [1]."}', event="sentence", id="1"),
        ServerSentEvent(data="two\nlines", event="note", id="2"),
        ServerSentEvent(comment="a comment"),
    ]


def app(body: Callable[[], AsyncIterator[Any]], **kwargs: Any) -> Starlette:
    async def route(request: Request) -> Response:
        return EventStream(body(), **kwargs)

    return Starlette(routes=[Route("/s", route, methods=["GET", "POST", "HEAD"])])


async def first_then_endless(
    closed: threading.Event | anyio.Event,
) -> AsyncIterator[ServerSentEvent]:
    """One event, then nothing until cancelled; sets `closed` when the stream is closed."""
    try:
        yield events()[0]
        await anyio.sleep_forever()
    finally:
        closed.set()


async def listed() -> AsyncIterator[ServerSentEvent | bytes]:
    for event in events():
        yield event
    yield b": already encoded\r\n\r\n"


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_the_head_and_the_bytes(method: str) -> None:
    with running_server(app(listed, headers={"X-Accel-Buffering": "no"})) as base:
        response = httpx.request(method, f"{base}/s", timeout=30)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-accel-buffering"] == "no"
    assert response.headers.get("transfer-encoding") == "chunked"
    assert response.content == b"".join(
        [e.encode() for e in events()] + [b": already encoded\r\n\r\n"]
    )
    received = list(parse_lines(response.iter_lines()))
    assert [(e.event, e.data, e.id) for e in received] == [
        ("sentence", '{"text": "café [1]."}', "1"),
        ("note", "two\nlines", "2"),
    ]


def test_head_has_the_head_and_no_body() -> None:
    closed = threading.Event()
    with running_server(app(functools.partial(first_then_endless, closed))) as base:
        response = httpx.head(f"{base}/s", timeout=30)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert response.content == b""


def test_pings_arrive_while_the_stream_waits() -> None:
    pinged = threading.Event()

    async def waiting() -> AsyncIterator[ServerSentEvent]:
        yield events()[0]
        # The next event only after the client saw a ping (the wait bounds a hang only).
        await anyio.to_thread.run_sync(pinged.wait, 60)
        yield events()[1]

    with (
        running_server(app(waiting, ping=0.05)) as base,
        httpx.stream("GET", f"{base}/s", timeout=30) as response,
    ):
        lines = []
        for line in response.iter_lines():
            lines.append(line)
            if line.startswith(": ping - "):
                pinged.set()
    assert lines[:4] == ["id: 1", "event: sentence", 'data: {"text": "café [1]."}', ""]
    assert "event: note" in lines
    assert lines.index("event: note") > min(
        i for i, line in enumerate(lines) if line.startswith(": ping")
    )


def test_the_client_leaving_ends_the_stream() -> None:
    closed = threading.Event()
    endless = functools.partial(first_then_endless, closed)

    with running_server(app(endless)) as base:
        with httpx.stream("GET", f"{base}/s", timeout=30) as response:
            for line in response.iter_lines():
                if line.startswith("data:"):
                    break
        assert closed.wait(60)  # against a hang only


@pytest.mark.anyio
async def test_a_disconnect_message_cancels_the_stream() -> None:
    closed = anyio.Event()
    left = anyio.Event()
    bodies: list[bytes] = []

    async def receive() -> Message:
        await left.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.body":
            bodies.append(message["body"])
            left.set()

    scope: Scope = {"type": "http", "method": "GET"}
    await EventStream(first_then_endless(closed))(scope, receive, send)
    assert closed.is_set()
    assert bodies == [events()[0].encode()]


@pytest.mark.anyio
async def test_a_failing_ping_ends_the_stream_with_its_error() -> None:
    closed = anyio.Event()

    def broken_ping() -> ServerSentEvent:
        raise RuntimeError("no ping today")

    async def receive() -> Message:
        await anyio.sleep_forever()
        raise AssertionError

    async def send(message: Message) -> None:
        pass

    response = EventStream(first_then_endless(closed), ping=0.01, ping_message_factory=broken_ping)
    scope: Scope = {"type": "http", "method": "GET"}
    with pytest.raises(RuntimeError, match="no ping today"):
        await response(scope, receive, send)
    assert closed.is_set()
