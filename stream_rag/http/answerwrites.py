"""An SSE answer in fewer socket writes: its head goes out with its first event, and its last
event (with anything after it) with the response's end.

uvicorn writes every ASGI message to the socket at once, and a write is a system call on the
event loop that, over loopback, also does the receiving side's TCP work: writes to clients were
~22% of the loop's CPU at 100 streams (py-spy `--native`), about six an answer. An answer's
response start is held until its first event (`sources`, after retrieval) and then sent with
it, back to back, which the server's protocol joins into one write (`serving.py`); from the
last event on (`done` or `error`, which the route marks; nothing after it waits for anything)
the body messages are held and joined with the end. The bytes are the same; the head arrives
with the first event instead of before retrieval.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import Any

import anyio
from starlette.responses import StreamingResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .eventstream import EventStream


class AnswerWrites:
    """The `send` an answer's response goes through (see the module): the start waits for the
    next message; after `next_is_last()`, body messages are held, joined, until the end, which
    takes them along (or `flush`, which sends them)."""

    __slots__ = ("_held", "_hold", "_start", "send")

    def __init__(self) -> None:
        self.send: Send | None = None  # the server's, set when the response starts
        self._start: Message | None = None
        self._hold = False
        self._held: list[bytes] = []

    def next_is_last(self) -> None:
        self._hold = True

    async def __call__(self, message: Message) -> None:
        send = self.send
        assert send is not None, "AnswerWrites.send is set before the response sends"
        if message["type"] == "http.response.start":
            self._start = message
            return
        start, self._start = self._start, None
        if start is not None:
            await send(start)
        if self._hold and message["type"] == "http.response.body":
            self._held.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            self._hold = False
            body, self._held = b"".join(self._held), []
            await send({"type": "http.response.body", "body": body, "more_body": False})
            return
        await send(message)

    async def flush(self) -> None:
        """Send what is still held (a response that ended without its end message)."""
        pending = [] if self._start is None else [self._start]
        if self._held:
            body = b"".join(self._held)
            pending.append({"type": "http.response.body", "body": body, "more_body": True})
        self._start, self._held, self._hold = None, [], False
        if pending and self.send is not None:
            with anyio.CancelScope(shield=True):
                for message in pending:
                    await self.send(message)


async def _through(
    writes: AnswerWrites, respond: ASGIApp, scope: Scope, receive: Receive, send: Send
) -> None:
    """Run the response's own `respond` with its messages going through `writes`."""
    writes.send = send
    try:
        await respond(scope, receive, writes)
    finally:
        await writes.flush()


class AnswerStream(EventStream):
    """`EventStream` whose messages go through `writes` (see the module)."""

    def __init__(self, content: AsyncIterable[Any], writes: AnswerWrites, **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self.writes = writes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _through(self.writes, super().__call__, scope, receive, send)


class AnswerChunks(StreamingResponse):
    """`StreamingResponse` whose messages go through `writes` (see the module)."""

    def __init__(self, content: AsyncIterable[Any], writes: AnswerWrites, **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self.writes = writes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _through(self.writes, super().__call__, scope, receive, send)
