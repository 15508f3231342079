"""`stream-rag serve`'s HTTP protocol: httptools with a bound on the time and size of a
request head (`STREAM_RAG_HEADER_TIMEOUT_S`, `MAX_HEAD_BYTES`), the connection budget, methods
no route takes answered by the app, HTTP/1.0 clients, and a response's head written with its
body (`HeadWithBody`). `serving.py` runs it in uvicorn.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import httptools
from starlette.types import Message, Receive, Scope, Send
from uvicorn.protocols.http.flow_control import service_unavailable
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from ..access.principals import ANSWER_PATHS
from .budget import OVER, PER_ADDRESS_REFUSAL, RESERVE, ConnectionBudget
from .methods import ALLOW, KNOWN, NOT_IMPLEMENTED_MESSAGE

# The largest request head (request line plus headers) a client may send.
MAX_HEAD_BYTES = 64 * 1024
_HEAD_TOO_LARGE = f"the request head is over {MAX_HEAD_BYTES // 1024} KB"
# A response's first write is joined with the next only when that is at most this long (a
# larger body is written after it, as before, rather than copied).
_JOIN_AT_MOST = 64 * 1024


class HeadWithBody:
    """The transport a response is written through: its first write (the head) waits for the
    next write or for the end of the event loop's turn, and then both go out as one. uvicorn
    writes a response's start and its body as two system calls, back to back; over loopback
    each also does the client's side of TCP."""

    __slots__ = ("_first", "_flusher", "_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._first = True
        self._held: bytes | None = None
        self._flusher: asyncio.Handle | None = None

    def write(self, data: bytes) -> None:
        if self._first:
            self._first = False
            self._held = data
            self._flusher = self._loop.call_soon(self.flush)
            return
        held = self._held
        if held is not None:
            if len(data) > _JOIN_AT_MOST:
                self.flush()
            else:
                self._release()
                data = held + data
        self._transport.write(data)

    def flush(self) -> None:
        held = self._held
        if held is not None:
            self._release()
            if not self._transport.is_closing():
                self._transport.write(held)

    def _release(self) -> None:
        self._held = None
        if self._flusher is not None:
            self._flusher.cancel()
            self._flusher = None

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> object:
        return getattr(self._transport, name)


class HeadTooLarge(Exception):
    """A complete request head over `MAX_HEAD_BYTES` (raised in the parser's callback, which
    makes it a parse error: uvicorn answers 400 and closes)."""


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol (a C parser; h11's, in Python, took ~6% of the event loop's
    CPU per answer for the request head and every SSE event's framing), except that a request
    head must arrive within `header_timeout_s` of the connection opening (or of the previous
    response) and be at most `MAX_HEAD_BYTES`, as h11's `max_incomplete_event_size` bounded it."""

    header_timeout_s = 10.0
    # The server's per-address counts (budget.py); None: no per-address limits.
    budget: ConnectionBudget | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._address = self.client[0] if self.client else None
        self._resting = False  # idle between requests, counted in the budget
        self._made_room = False  # closed by the budget for a newer connection
        self.parser = _MethodAwareParser(self.parser, self)  # type: ignore[assignment]
        self._head_timer: asyncio.TimerHandle | None = None
        # Bytes received since the last request's message ended: the next head. The read that
        # ended the message is not counted; its length (`_slack`) bounds what it held of the head.
        self._between_messages, self._head_bytes, self._slack, self._reading = True, 0, 0, 0
        self._refusal: str | None = None  # why a parse error is raised from a callback
        # The client shut its sending side after complete requests (`eof_received`); the
        # request whose app runs now (a pipelined one waits for it).
        self.half_closed = False
        self._running: RequestResponseCycle | None = None
        self._wait_for_head()
        budget = self.budget
        if budget is None:
            return
        if not budget.admit(self._address):
            self._address = None  # not counted: nothing to release
            transport.write(PER_ADDRESS_REFUSAL)
            transport.close()
            return
        budget.wait(self, self._address)
        held = budget.held(len(self.connections))
        if held > budget.limit:
            budget.make_room(held, self)

    def close_idle(self) -> None:
        """Closed to make room for a newer connection (budget.py): it waits for a request."""
        self._made_room = True
        self.transport.close()

    def data_received(self, data: bytes) -> None:
        self._reading = len(data)
        if self._between_messages:
            self._head_bytes += self._reading
        super().data_received(data)
        # Still in a head after this much (body bytes past a complete head are not counted).
        if (
            self._between_messages
            and self._head_bytes > MAX_HEAD_BYTES
            and not self.transport.is_closing()
        ):
            self.send_400_response(_HEAD_TOO_LARGE)

    def on_headers_complete(self) -> None:
        self._in_head = self._between_messages = False
        self._disarm_head_timer()
        # The count may hold body bytes read with the head, or miss head bytes read with the
        # message before: only when it may pass the limit, measure the head itself.
        if (
            self._head_bytes + self._slack > MAX_HEAD_BYTES
            and _head_size(self.url, self.headers) > MAX_HEAD_BYTES
        ):
            self._refusal = _HEAD_TOO_LARGE
            raise HeadTooLarge
        budget = self.budget
        if budget is not None:
            budget.stop_waiting(self, self._address)
            if self._resting:
                self._resting = False
                budget.wake(self._address)
            held = budget.held(len(self.connections))
            if held > budget.limit:
                self.scope[OVER] = True  # type: ignore[literal-required]
            elif held > budget.max_connections:
                self.scope[RESERVE] = True  # type: ignore[literal-required]
        super().on_headers_complete()
        cycle = self.cycle
        # The request's own cycle (an upgrade leaves the last one in place).
        if cycle is not None and cycle.scope is self.scope:
            if budget is not None and not budget.keep_alive(self._address):
                cycle.keep_alive = False  # its address has its idle connections already
            cycle.transport = HeadWithBody(self.transport, self.loop)  # type: ignore[assignment]
            if self.scope["http_version"] == "1.0":
                # Read by the cycle's task when it starts, after this returns.
                cycle.send = Http10Send(cycle)  # type: ignore[method-assign,assignment]

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request it cannot parse, with the JSON error body of every
        other 4xx (its own is text); a method the parser does not know is a 501, as the app
        answers one it does not (http/methods.py)."""
        if self._refusal == _UNKNOWN_METHOD:
            error = {"code": "not_implemented", "message": NOT_IMPLEMENTED_MESSAGE}
            content = [b"HTTP/1.1 501 Not Implemented\r\nallow: %s\r\n" % ALLOW.encode()]
        else:
            message = self._refusal or msg
            error = {"code": "invalid_request", "message": message}
            content = [b"HTTP/1.1 400 Bad Request\r\n"]
        body = json.dumps({"error": error}).encode()
        for name, value in self.server_state.default_headers:
            content.extend([name, b": ", value, b"\r\n"])
        content.append(b"content-type: application/json\r\n")
        content.append(b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body))
        content.append(body)
        self.transport.write(b"".join(content))
        self.transport.close()

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        self._running = cycle
        # Past `limit_concurrency` uvicorn answers with its own text/plain 503; past the
        # budget's limit, so does this server, with its JSON one.
        busy = app is service_unavailable or cycle.scope.get(OVER)
        handler: Any = server_busy if busy else app
        super()._start_asgi_task(cycle, handler)

    def eof_received(self) -> bool | None:  # type: ignore[override]
        """The client shut its sending side. uvicorn closes the connection here, so a client
        that half-closes after its request (RFC 9112 9.6 allows it; `ncat`, `nc -N`, health
        checkers) got no answer unless it was written before the EOF was read. After complete
        requests the connection now stays open for their answers and closes after the last.
        Except for an answer (`ANSWER_PATHS`): a FIN is also all a client that went away
        sends, and an answer must not run on (its model call) for nobody, so it closes as
        before and the answer stops. Mid-request, it closes as before."""
        cycle = self.cycle  # the last request read
        if cycle is None or cycle.response_complete or cycle.more_body:
            return None  # the transport closes
        running = self._running
        pending = [cycle, *(c for c, _ in self.pipeline)]
        if running is not None and not running.response_complete:
            pending.append(running)
        if any(c.scope["path"] in ANSWER_PATHS for c in pending):
            return None
        self.half_closed = True
        return True

    def on_message_complete(self) -> None:
        super().on_message_complete()
        # What follows is the next request's head; a body's rest after an early response (a
        # 413) was the body's, which uvicorn discards.
        self._between_messages, self._head_bytes, self._slack = True, 0, self._reading

    def on_response_complete(self) -> None:
        super().on_response_complete()
        last = self.cycle  # the last request read
        if self.half_closed and last is not None and last.response_complete:
            last.transport.close()  # its answer is out (its transport flushes first)
            return
        # Unless a pipelined request, its head complete, is answered next.
        if self.cycle is None or self.cycle.response_complete:
            self._wait_for_head()
            if self.budget is not None and not self._resting and not self.transport.is_closing():
                self._resting = True
                self.budget.rest(self._address)
                self.budget.wait(self, self._address)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        if self.budget is not None:
            if self._resting:
                self._resting = False
                self.budget.wake(self._address)
            self.budget.stop_waiting(self, self._address)
            self.budget.release(self._address)
            self._address = None
            if self._made_room:
                self._made_room = False
                self.budget.closing -= 1
        super().connection_lost(exc)

    def _wait_for_head(self) -> None:
        self._in_head = True
        self._disarm_head_timer()
        self._head_timer = self.loop.call_later(self.header_timeout_s, self._head_timed_out)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        # Only a connection still waiting for (the rest of) a request head is closed.
        if self._in_head and not self.transport.is_closing():
            self.transport.close()


_UNKNOWN_METHOD = "unknown method"
# RFC 9112 3: method (a token) SP request-target SP HTTP-version.
_REQUEST_LINE = re.compile(rb"^([!#$%&'*+.^_`|~0-9A-Za-z-]+) [^ \r\n]+ HTTP/1\.[01]\r?$", re.M)


class _MethodAwareParser:
    """The protocol's httptools parser, noting when it refused a request for its method
    (`BREW`, `get`): uvicorn turns every parse error into one 400."""

    def __init__(self, parser: httptools.HttpRequestParser, protocol: GuardedHttpToolsProtocol):
        self._parser = parser
        self._protocol = protocol

    def feed_data(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserInvalidMethodError:
            # A request line with a method it does not know, not bytes that are no request
            # ("GARBAGE"): the last request line read (earlier ones were pipelined requests).
            lines = _REQUEST_LINE.findall(data)
            if lines and lines[-1].decode("latin-1") not in KNOWN:
                self._protocol._refusal = _UNKNOWN_METHOD
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._parser, name)


class Http10Send:
    """A response to an HTTP/1.0 request: uvicorn's httptools cycle would chunk a body of
    unknown length (an SSE stream), which HTTP/1.0 does not have (RFC 9112 6.1, as h11
    knew); such a body goes out as it is and the connection's close ends it."""

    __slots__ = ("_cycle", "_raw", "_send")

    def __init__(self, cycle: RequestResponseCycle) -> None:
        self._cycle = cycle
        self._send = RequestResponseCycle.send.__get__(cycle)
        self._raw = False

    async def __call__(self, message: Message) -> None:
        cycle = self._cycle
        if message["type"] == "http.response.start" and not cycle.response_started:
            headers = [(n, v) for n, v in message.get("headers", []) if n.lower() != b"connection"]
            framed = any(n.lower() in (b"content-length", b"transfer-encoding") for n, _ in headers)
            bodiless = cycle.scope["method"] == "HEAD" or message["status"] in (204, 304)
            if not framed and not bodiless:
                self._raw = True
                cycle.chunked_encoding = False  # and uvicorn adds `connection: close`
            await self._send({**message, "headers": headers})
        elif self._raw and message["type"] == "http.response.body" and not cycle.response_complete:
            if cycle.flow.write_paused and not cycle.disconnected:
                await cycle.flow.drain()
            if cycle.disconnected:
                return
            if body := message.get("body", b""):
                cycle.transport.write(body)
            if not message.get("more_body", False):
                cycle.response_complete = True
                cycle.message_event.set()
                cycle.transport.close()
                cycle.on_response()
        else:
            await self._send(message)


_BUSY = json.dumps(
    {
        "error": {
            "code": "server_busy",
            "message": "too many connections at once (STREAM_RAG_MAX_CONNECTIONS); retry shortly",
        }
    }
).encode()


async def server_busy(scope: Scope, receive: Receive, send: Send) -> None:
    """The refusal past STREAM_RAG_MAX_CONNECTIONS: the JSON error of every other response, and
    `Retry-After`, as the condition is passing (connections end within seconds)."""
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", b"%d" % len(_BUSY)),
        (b"retry-after", b"1"),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": _BUSY, "more_body": False})


def _head_size(url: bytes, headers: list[tuple[bytes, bytes]]) -> int:
    """A parsed head's size: its target, and each header line (name, ": ", value, CRLF)."""
    return len(url) + sum(len(name) + len(value) + 4 for name, value in headers)
