"""The Server-Sent Events response: events as they come, pings while the stream waits, and the
stream cancelled when the client leaves.

The stream runs in the request's own task; one asyncio task waits for the client to leave and
sends the pings when they are due (a task group of several tasks per answer cost 0.2-0.3 ms
of the event loop, more than the answer's events: `python -m loadtests.bench_tokens --only
output`). A server shutdown needs nothing here: the app's `Drain` (lifecycle.py) ends answers
still running after `STREAM_RAG_DRAIN_S` with `error: shutting_down`, and the stream then
ends by itself. With `on_leave`, a client leaving does not cancel the stream at once: it runs
on, sending nothing, until `on_leave` returns (http/resume.py's grace for a resumable answer).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterable, Awaitable, Callable, Mapping
from datetime import UTC, datetime
from functools import partial

import anyio
from starlette.background import BackgroundTask
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..sse import ServerSentEvent

__all__ = ["DEFAULT_PING_S", "EventStream"]

DEFAULT_PING_S = 15.0


class EventStream(Response):
    """A `text/event-stream` response of `content`'s events (or bytes already encoded)."""

    media_type = "text/event-stream"

    def __init__(
        self,
        content: AsyncIterable[ServerSentEvent | bytes],
        *,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        ping: float = DEFAULT_PING_S,
        ping_message_factory: Callable[[], ServerSentEvent] | None = None,
        background: BackgroundTask | None = None,
        on_leave: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.body_iterator = content
        self.status_code = status_code
        self.background = background
        self.ping_interval = ping
        self.ping_message_factory = ping_message_factory
        self.active = True
        self.on_leave = on_leave
        self.detached = False  # the client left; the stream runs on, sending nothing
        self._send_lock = asyncio.Lock()
        self.init_headers({"Cache-Control": "no-store", **(headers or {})})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        if scope.get("method", "GET").upper() == "HEAD":
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        # The stream in this task, under a cancel scope that the client leaving or a failed
        # ping cancels; the watch in a task of its own.
        stream = anyio.CancelScope()
        watch = asyncio.get_running_loop().create_task(self._watch(receive, send, stream))
        watch.add_done_callback(partial(_stop_on_error, stream))
        try:
            with stream:
                async for item in self.body_iterator:
                    if self.detached:
                        continue
                    body = item if isinstance(item, bytes) else item.encode()
                    async with self._send_lock:
                        await send({"type": "http.response.body", "body": body, "more_body": True})
                async with self._send_lock:
                    self.active = False
                    if not self.detached:
                        await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            self.active = False
            if not watch.done():
                watch.cancel()
            elif not watch.cancelled() and (error := watch.exception()) is not None:
                raise error
        if self.background is not None:
            await self.background()

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
                if self.on_leave is not None:
                    self.detached = True
                    await self.on_leave()  # cancelled instead if the stream ends first
                stream.cancel()
                return

    async def _ping_once(self, send: Send) -> None:
        ping = (
            self.ping_message_factory()
            if self.ping_message_factory
            else ServerSentEvent(comment=f"ping - {datetime.now(UTC)}")
        )
        async with self._send_lock:
            if self.active:
                body = ping.encode()
                await send({"type": "http.response.body", "body": body, "more_body": True})


def _stop_on_error(stream: anyio.CancelScope, watch: asyncio.Task[None]) -> None:
    if not watch.cancelled() and watch.exception() is not None:
        stream.cancel()
