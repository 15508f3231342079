"""`EventStream` against sse-starlette's `EventSourceResponse`: the same bytes and headers over
real HTTP, pings while the stream waits, the client leaving, and the shutdown grace."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
from sse_starlette import EventSourceResponse, ServerSentEvent
from sse_starlette.sse import AppStatus
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Message, Scope

from stream_rag.events import JsonEvent
from stream_rag.http import eventstream
from stream_rag.http.eventstream import EventStream
from tests.helpers import running_server

Responder = Callable[..., EventSourceResponse]


def events() -> list[ServerSentEvent]:
    return [
        JsonEvent(data='{"text": "café [1]."}', event="sentence", id="1"),
        ServerSentEvent(data="two\nlines", event="note", id="2"),
        ServerSentEvent(comment="a comment"),
    ]


def app(make: Responder, body: Callable[[], AsyncIterator[Any]], **kwargs: Any) -> Starlette:
    async def route(request: Request) -> Response:
        return make(body(), shutdown_event=anyio.Event(), **kwargs)

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


async def listed() -> AsyncIterator[ServerSentEvent]:
    for event in events():
        yield event


@pytest.mark.parametrize("method", ["GET", "POST", "HEAD"])
def test_the_same_bytes_and_headers_as_sse_starlette(method: str) -> None:
    replies = []
    for make in (EventSourceResponse, EventStream):
        with running_server(app(make, listed, headers={"X-Accel-Buffering": "no"})) as base:
            response = httpx.request(method, f"{base}/s", timeout=30)
        headers = {k: v for k, v in response.headers.items() if k != "date"}
        replies.append((response.status_code, headers, response.content))
    # Except sse-starlette's `Connection: keep-alive`, the server's to set (EventStream.__init__).
    assert replies[0][1].pop("connection") == "keep-alive"
    assert replies[0] == replies[1]
    assert replies[0][2] or method == "HEAD"


def test_pings_arrive_while_the_stream_waits() -> None:
    pinged = threading.Event()

    async def waiting() -> AsyncIterator[ServerSentEvent]:
        yield events()[0]
        # The next event only after the client saw a ping (the wait bounds a hang only).
        await anyio.to_thread.run_sync(pinged.wait, 60)
        yield events()[1]

    with (
        running_server(app(EventStream, waiting, ping=0.05)) as base,
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

    with running_server(app(EventStream, endless)) as base:
        with httpx.stream("GET", f"{base}/s", timeout=30) as response:
            for line in response.iter_lines():
                if line.startswith("data:"):
                    break
        assert closed.wait(60)  # against a hang only


async def _shut_down(make: Responder) -> list[bytes]:
    """The bodies a response sends when the server is told to exit mid-stream, its stream
    sending a farewell on the shutdown event, then waiting past the grace period."""
    shutdown = anyio.Event()
    bodies: list[bytes] = []
    sent = anyio.Event()

    async def farewell() -> AsyncIterator[ServerSentEvent]:
        yield events()[0]
        await shutdown.wait()
        yield ServerSentEvent(data="bye", event="farewell")
        await anyio.sleep_forever()

    async def receive() -> Message:
        await anyio.sleep_forever()
        raise AssertionError

    async def send(message: Message) -> None:
        if message["type"] == "http.response.body":
            bodies.append(message["body"])
            sent.set()

    response = make(farewell(), shutdown_event=shutdown, shutdown_grace_period=0.2)
    async with anyio.create_task_group() as group:
        scope: Scope = {"type": "http", "method": "GET"}
        group.start_soon(response, scope, receive, send)
        await sent.wait()
        AppStatus.should_exit = True
    AppStatus.should_exit = False
    return bodies


@pytest.mark.anyio
async def test_shutdown_sets_the_event_then_ends_after_the_grace_period() -> None:
    started = time.monotonic()
    theirs = await _shut_down(EventSourceResponse)
    ours = await _shut_down(EventStream)
    assert ours == theirs
    assert ours[1].startswith(b"event: farewell")
    assert time.monotonic() - started >= 0.4  # each waited out its grace period


@pytest.mark.parametrize("make", [EventSourceResponse, EventStream])
@pytest.mark.anyio
async def test_a_failing_ping_ends_the_stream_with_its_error(make: Responder) -> None:
    closed = anyio.Event()
    endless = functools.partial(first_then_endless, closed)

    def broken_ping() -> ServerSentEvent:
        raise RuntimeError("no ping today")

    async def receive() -> Message:
        await anyio.sleep_forever()
        raise AssertionError

    async def send(message: Message) -> None:
        pass

    response = make(
        endless(), ping=0.01, ping_message_factory=broken_ping, shutdown_event=anyio.Event()
    )
    scope: Scope = {"type": "http", "method": "GET"}
    with pytest.raises(RuntimeError, match="no ping today"):
        await response(scope, receive, send)
    assert closed.is_set()


def test_without_sse_starlettes_internals_its_own_path_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert eventstream.INTERNALS  # the installed sse-starlette: the tests above use the fast path

    async def no_watch(*args: Any) -> None:
        raise AssertionError("the fast path ran")

    monkeypatch.setattr(eventstream, "INTERNALS", False)
    monkeypatch.setattr(EventStream, "_watch", no_watch)
    replies = []
    for make in (EventSourceResponse, EventStream):
        with running_server(app(make, listed)) as base:
            response = httpx.get(f"{base}/s", timeout=30)
        replies.append((response.status_code, response.content))
    assert replies[0] == replies[1]
    assert replies[0][1]
