"""An SSE answer in two socket writes fewer: its head goes out with its first event, and its
last event with the response's end.

uvicorn writes every ASGI message to the socket at once, and a write is a system call on the
event loop that, over loopback, also does the receiving side's TCP work: writes to clients were
~22% of the loop's CPU at 100 streams (py-spy `--native`), about six an answer. An answer's
response start is held until its first event (`sources`, after retrieval) and then sent with
it, back to back, which the server's protocol joins into one write (`serving.py`); the body
message with the last event (`done` or `error`, which the route marks) is held and joined with
the end. The bytes are the same; the head arrives with the first event instead of before
retrieval.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import Any

import anyio
from starlette.types import Message, Receive, Scope, Send

from .eventstream import EventStream


class AnswerWrites:
    """The `send` an answer's response goes through (see the module): the start waits for the
    next message; after `next_is_last()`, the next body message waits for the one after it,
    and is joined with it when that is the end."""

    __slots__ = ("_held", "_hold", "_start", "send")

    def __init__(self) -> None:
        self.send: Send | None = None  # the server's, set when the response starts
        self._start: Message | None = None
        self._hold = False
        self._held: Message | None = None

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
        held = self._held
        if held is not None:
            self._held = None
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                body = held.get("body", b"") + message.get("body", b"")
                await send({"type": "http.response.body", "body": body, "more_body": False})
                return
            await send(held)
        if self._hold and message["type"] == "http.response.body" and message.get("more_body"):
            self._hold = False
            self._held = message
            return
        await send(message)

    async def flush(self) -> None:
        """Send what is still held (a response that ended without its end message)."""
        pending = [m for m in (self._start, self._held) if m is not None]
        self._start = self._held = None
        if pending and self.send is not None:
            with anyio.CancelScope(shield=True):
                for message in pending:
                    await self.send(message)


class AnswerStream(EventStream):
    """`EventStream` whose messages go through `writes` (see the module)."""

    def __init__(self, content: AsyncIterable[Any], writes: AnswerWrites, **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self.writes = writes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.writes.send = send
        try:
            await super().__call__(scope, receive, self.writes)
        finally:
            await self.writes.flush()
