"""sse-starlette's `EventSourceResponse`, run with one helper task instead of four.

Its `__call__` runs the stream, the pings, the shutdown watch and the disconnect watch as four
tasks of an anyio task group and cancels three of them when the stream ends: 0.2-0.3 ms of the
event loop per answer, more than the answer's events cost to send (`python -m
loadtests.bench_tokens --only output`). Here the stream runs in the request's own task; one
asyncio task waits for the client to leave and sends the pings when they are due; the shutdown
watch is a callback from sse-starlette's own per-loop watcher. Same headers, bytes, pings,
shutdown grace and ends.
"""

from __future__ import annotations

import asyncio
import math
from datetime import UTC, datetime
from functools import partial
from typing import Any

import anyio
from sse_starlette import EventSourceResponse, ServerSentEvent
from sse_starlette.event import ensure_bytes
from sse_starlette.sse import AppStatus
from starlette.types import Message, Receive, Scope, Send

try:  # sse-starlette's private shutdown watch: another version may not have it
    from sse_starlette.sse import _ensure_watcher_started_on_this_loop, _get_shutdown_state
except ImportError:  # pragma: no cover - depends on the installed sse-starlette
    INTERNALS = False
else:
    INTERNALS = hasattr(EventSourceResponse, "_stream_response")


class EventStream(EventSourceResponse):
    """`EventSourceResponse` for HTTP GET and POST on asyncio; HEAD, websockets, a send
    timeout, a data sender or an sse-starlette without the internals used here take
    sse-starlette's own path."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # sse-starlette sets `Connection: keep-alive`, a hop-by-hop header that is the server's
        # to set: HTTP/1.1 keeps connections alive anyway, and to a request with `Connection:
        # close` uvicorn adds `close`, so the answer carried both.
        self.raw_headers = [(n, v) for n, v in self.raw_headers if n != b"connection"]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            not INTERNALS
            or scope["type"] != "http"
            or scope["method"].upper() == "HEAD"
            or self.data_sender_callable is not None
            or self.send_timeout is not None
            or AppStatus.should_exit
            or not _on_asyncio()
        ):
            await super().__call__(scope, receive, send)
            return
        # The stream in this task, under a cancel scope that the client leaving, a failed
        # ping or the shutdown's grace period cancels; the watch in a task of its own.
        stream = anyio.CancelScope()
        watch = asyncio.get_running_loop().create_task(self._watch(receive, send, stream))
        watch.add_done_callback(partial(_stop_on_error, stream))
        exit_watch = _ExitWatch(self, stream)
        try:
            with stream:
                await self._stream_response(send)
        finally:
            exit_watch.close()
            if not watch.done():
                watch.cancel()
            elif not watch.cancelled() and (error := watch.exception()) is not None:
                raise error
        if self.background is not None:
            await self.background()

    async def _send_with_timeout(self, send: Send, message: Message) -> None:
        if self.send_timeout is None:
            await send(message)  # no cancel scope per event for no timeout
        else:
            await super()._send_with_timeout(send, message)

    async def _watch(self, receive: Receive, send: Send, stream: anyio.CancelScope) -> None:
        """Wait for the client to leave (which ends the response), pinging meanwhile."""
        interval = self.ping_interval
        due = anyio.current_time() + interval if interval > 0 else math.inf
        while self.active:
            with anyio.CancelScope(deadline=due) as waiting:
                message = await receive()
            if waiting.cancelled_caught:
                await self._ping_once(send)
                due = anyio.current_time() + interval
                continue
            if message["type"] == "http.disconnect":
                self.active = False
                if self.client_close_handler_callable:
                    await self.client_close_handler_callable(message)
                stream.cancel()
                return

    async def _ping_once(self, send: Send) -> None:
        ping = (
            self.ping_message_factory()
            if self.ping_message_factory
            else ServerSentEvent(comment=f"ping - {datetime.now(UTC)}", sep=self.sep)
        )
        body = ensure_bytes(ping, self.sep)
        async with self._send_lock:
            if self.active:
                await send({"type": "http.response.body", "body": body, "more_body": True})


def _stop_on_error(stream: anyio.CancelScope, watch: asyncio.Task[None]) -> None:
    if not watch.cancelled() and watch.exception() is not None:
        stream.cancel()


class _ExitWatch:
    """In sse-starlette's set of shutdown events (its watcher calls `set` on each when the
    server is to exit): sets the response's shutdown event, then ends the response after
    the grace period, as sse-starlette's own exit task does."""

    def __init__(self, response: EventStream, stream: anyio.CancelScope) -> None:
        self._response, self._stream = response, stream
        self._timer: asyncio.TimerHandle | None = None
        _ensure_watcher_started_on_this_loop()
        _get_shutdown_state().events.add(self)  # type: ignore[arg-type]

    def set(self) -> None:
        response = self._response
        if response._shutdown_event is not None:
            response._shutdown_event.set()
        grace = response._shutdown_grace_period
        if grace > 0 and response.active:
            self._timer = asyncio.get_running_loop().call_later(grace, self._stream.cancel)
        else:
            self._stream.cancel()

    def close(self) -> None:
        _get_shutdown_state().events.discard(self)
        if self._timer is not None:
            self._timer.cancel()


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
