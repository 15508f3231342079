"""A time budget for reading request bodies, so a client trickling an upload a byte at a time
cannot hold a connection (and an upload slot) forever.

uvicorn times out only idle keep-alive connections, and `serving.py` only request heads. Here
the time a handler spends *waiting* for body bytes is counted against
`STREAM_RAG_BODY_TIMEOUT_S`, and every kilobyte received earns `1 / STREAM_RAG_BODY_MIN_KB_S`
seconds more: a large upload over a slow link finishes, a slow-loris does not. Time the server
itself spends between reads (a busy machine) is not counted. When the budget runs out the read
raises `BodyTimeoutError`, which the app answers with 408 and closes the connection.
"""

from __future__ import annotations

import anyio
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..access.start import on_start
from ..errors import BodyTimeoutError


class BodyDeadline:
    """ASGI middleware: each request's body reads share one time budget (see the module)."""

    def __init__(self, app: ASGIApp, *, timeout_s: float, min_kb_s: float) -> None:
        self.app = app
        self.timeout_s = timeout_s
        self.seconds_per_byte = 1.0 / (min_kb_s * 1024)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        budget = self.timeout_s
        complete = False
        timed_out = False

        async def receive_in_time() -> Message:
            nonlocal budget, complete, timed_out
            if complete:  # after the body only a disconnect can come: no limit on waiting
                return await receive()
            started = anyio.current_time()
            with anyio.move_on_after(budget):
                message = await receive()
                budget -= anyio.current_time() - started
                if message["type"] == "http.request":
                    budget += len(message.get("body", b"")) * self.seconds_per_byte
                    complete = not message.get("more_body", False)
                else:
                    complete = True
                return message
            timed_out = True
            raise BodyTimeoutError(
                f"the request body did not arrive in time (STREAM_RAG_BODY_TIMEOUT_S="
                f"{self.timeout_s:g}, then at least {1 / self.seconds_per_byte / 1024:g} KB/s)"
            )

        def closing(message: Message) -> None:
            # The rest of the body is never read, so the connection cannot be reused.
            if timed_out:
                MutableHeaders(scope=message)["connection"] = "close"

        await self.app(scope, receive_in_time, on_start(scope, send, closing))
