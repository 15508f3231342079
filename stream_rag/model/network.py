"""A lean asyncio network backend for httpcore's connection pool, for plain-HTTP models.

Every streamed token is one socket read. Through httpcore's default (anyio) backend a read
enters a `fail_after` cancel scope and an exception map, pauses and resumes the transport, and
checks an idle connection with a `poll()`. Here a read takes what an asyncio protocol has
buffered or waits on one future with one timer, and an idle connection's state is known
without a system call. Same exceptions, so httpx maps them as before; a reused connection
that ends before any byte of its reply raises `ServerClosedIdle`, one of them. A reply's head
is read alone, so that after it the body's bytes are all still here (body.py reads them).
"""

from __future__ import annotations

import asyncio
import math
import select
import socket
import time
from collections import deque
from collections.abc import Iterable
from typing import Any, cast

# Reading pauses only when this much is buffered and unread (a reply read slower than it arrives).
_HIGH_WATER = 1 << 20
# An idle connection quiet for longer than this is also checked at the socket: a busy event
# loop may not have read the server's close yet. Servers close idle connections after seconds
# (uvicorn 5 s, nginx 75 s), so a connection used just now needs no system call.
_POLL_AFTER_S = 1.0
_POLL_EVERY_S = 0.05  # and at most this often
# Writes smaller than this together are held until the loop's turn ends (or a read starts).
_COALESCE = 64 * 1024


class ServerClosedIdle(Exception):
    """Mixed into httpcore's `ReadError`: a reused connection ended before any byte of the
    reply, so the server closed it as idle and never read the request (safe to send again)."""


class _Protocol(asyncio.Protocol):
    __slots__ = ("buffer", "eof", "error", "paused", "size", "transport", "waiter", "writable")

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer: deque[bytes] = deque()
        self.size = 0
        self.eof = False
        self.error: Exception | None = None
        self.paused = False
        self.waiter: asyncio.Future[None] | None = None  # a read waiting for data
        self.writable: asyncio.Future[None] | None = None  # a write waiting for the buffer

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports do not subclass asyncio's, but have the same methods.
        self.transport = cast("asyncio.Transport", transport)

    def data_received(self, data: bytes) -> None:
        self.buffer.append(data)
        self.size += len(data)
        if self.size > _HIGH_WATER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake()
        if self.writable is not None and not self.writable.done():
            self.writable.set_result(None)

    def pause_writing(self) -> None:
        self.writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self.writable is not None and not self.writable.done():
            self.writable.set_result(None)
        self.writable = None

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class LeanStream:
    """httpcore's `AsyncNetworkStream` over an asyncio transport (no TLS)."""

    def __init__(
        self, transport: asyncio.Transport, protocol: _Protocol, errors: Any, closed_idle: type
    ) -> None:
        self._transport = transport
        self._protocol = protocol
        self._errors = errors  # the httpcore module whose exceptions httpx maps
        self._closed_idle = closed_idle  # its `ReadError` with `ServerClosedIdle`
        # Requests sent, and whether a byte of the last one's reply has arrived: a write after
        # a read (or the first write) starts the next request.
        self._requests = 0
        self._replied = True
        self._used = time.monotonic()  # the last read or write
        self._polled = 0.0  # the last check at the socket (it found nothing)
        # Small writes wait for the end of the loop's turn, or the next read, and go out as
        # one: a request's head and body are one system call and one segment, not two.
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._flusher: asyncio.Handle | None = None
        # The deadline of the read waiting now (inf: none), and the timer that checks it.
        self._deadline = math.inf
        self._stall_timer: asyncio.TimerHandle | None = None
        # While a reply's head is read: its bytes so far (a read ends where the head ends, so
        # its reader, h11, holds none of the body's), else None.
        self._head: bytes | None = None
        self.at_body = False  # the last read ended a reply's head, and none read since

    # The methods' signatures, `timeout` parameters included, are httpcore's interface.
    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        protocol = self._protocol
        if self._pending or not protocol.buffer:
            await self._wait(timeout)
            if not protocol.buffer:
                return self._ended()
        self._used = time.monotonic()
        self._replied = True
        self.at_body = False
        chunk = protocol.buffer.popleft()
        if self._head is not None:
            chunk = self._head_part(chunk)
        if len(chunk) > max_bytes:
            chunk, rest = chunk[:max_bytes], chunk[max_bytes:]
            protocol.buffer.appendleft(rest)
        self._taken(len(chunk))
        return chunk

    async def read_buffered(self, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        """Everything received and not read yet, in one piece (waiting, as `read`, when that
        is nothing): a reader behind a busy event loop takes all its tokens in one step."""
        protocol = self._protocol
        if self._pending or not protocol.buffer:
            await self._wait(timeout)
            if not protocol.buffer:
                return self._ended()
        self._used = time.monotonic()
        self._replied = True
        self.at_body = False
        buffer = protocol.buffer
        data = buffer.popleft() if len(buffer) == 1 else b"".join(buffer)
        buffer.clear()
        self._taken(len(data))
        return data

    def _head_part(self, chunk: bytes) -> bytes:
        """What of `chunk` belongs to the reply's head; the rest goes back to the buffer. A
        1xx reply's head is followed by another head."""
        before = self._head or b""
        head = before + chunk
        end = head.find(b"\r\n\r\n", max(0, len(before) - 3))
        if end < 0:
            self._head = head
            return chunk
        taken = end + 4 - len(before)
        self._head = b"" if head[9:10] == b"1" else None
        self.at_body = self._head is None
        if taken < len(chunk):
            self._protocol.buffer.appendleft(chunk[taken:])
        return chunk[:taken]

    def unread(self, data: bytes) -> None:
        """Put `data` back before what is buffered: the next read returns it first."""
        if data:
            self._protocol.buffer.appendleft(data)
            self._protocol.size += len(data)

    async def _wait(self, limit_s: float | None) -> None:
        """Send what is pending; wait for data or the end unless some is buffered."""
        if self._pending:
            self._flush()
        protocol = self._protocol
        if protocol.buffer or protocol.eof:
            return
        loop = asyncio.get_running_loop()
        waiter = protocol.waiter = loop.create_future()
        if limit_s is not None:
            # One timer per stream, not one per read (a token each): it is left armed when a
            # read ends, and when it fires a read still waiting is checked against its own
            # deadline (expired, or the timer armed again for it).
            self._deadline = deadline = loop.time() + limit_s
            timer = self._stall_timer
            if timer is None or timer.when() > deadline:
                if timer is not None:
                    timer.cancel()
                self._stall_timer = loop.call_at(deadline, self._stall_check)
        try:
            await waiter
        except TimeoutError:
            raise self._errors.ReadTimeout("timed out") from None
        finally:
            protocol.waiter = None
            self._deadline = math.inf

    def _stall_check(self) -> None:
        """The stall timer: a read waiting past its deadline fails with `TimeoutError`."""
        self._stall_timer = None
        waiter, deadline = self._protocol.waiter, self._deadline
        if waiter is None or waiter.done() or deadline == math.inf:
            return
        loop = asyncio.get_running_loop()
        if loop.time() >= deadline:
            waiter.set_exception(TimeoutError())
        else:
            self._stall_timer = loop.call_at(deadline, self._stall_check)

    def _taken(self, size: int) -> None:
        protocol = self._protocol
        protocol.size -= size
        if protocol.paused and protocol.size <= _HIGH_WATER // 4:
            protocol.paused = False
            self._transport.resume_reading()

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        if not buffer:
            return
        if self._replied:
            self._requests += 1
            self._replied = False
            self._head, self.at_body = b"", False
        protocol = self._protocol
        if (protocol.eof and protocol.error is not None) or self._transport.is_closing():
            raise self._errors.WriteError("the connection is closed")
        self._used = time.monotonic()
        self._pending.append(buffer)
        self._pending_size += len(buffer)
        if self._pending_size < _COALESCE and protocol.writable is None:
            if self._flusher is None:
                self._flusher = asyncio.get_running_loop().call_soon(self._flush)
            return
        self._flush()
        writable = protocol.writable
        if writable is not None:
            try:
                await asyncio.wait_for(asyncio.shield(writable), timeout)
            except TimeoutError:
                raise self._errors.WriteTimeout("timed out") from None
            if protocol.error is not None:
                raise self._errors.WriteError(str(protocol.error))

    async def aclose(self) -> None:
        if self._stall_timer is not None:
            self._stall_timer.cancel()
            self._stall_timer = None
        self._flush()
        self._transport.close()

    def _ended(self) -> bytes:
        """A read at the connection's end: b"" after a reply began, else an error."""
        error = self._protocol.error
        if not self._replied and self._requests > 1:
            # The keep-alive race every HTTP client has: the server closed the connection as
            # idle (uvicorn after 5 s) just as this request went out on it; it never read it.
            reason = f" ({error})" if error is not None else ""
            raise self._closed_idle(f"the server closed the reused connection{reason}")
        if error is not None:
            raise self._errors.ReadError(str(error))
        return b""

    def _flush(self) -> None:
        if self._flusher is not None:
            self._flusher.cancel()
            self._flusher = None
        pending, self._pending, self._pending_size = self._pending, [], 0
        if pending and not self._transport.is_closing():
            self._transport.write(pending[0] if len(pending) == 1 else b"".join(pending))

    async def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> LeanStream:
        raise self._errors.ConnectError("the lean backend serves plain HTTP only")

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # An idle connection that has data or an end waiting was closed (or broken) by
            # the server: the pool then drops it instead of sending a request on it.
            if self._protocol.buffer or self._protocol.eof:
                return True
            now = time.monotonic()
            # The pool asks about every idle connection whenever a request starts or ends: a
            # burst of requests would poll each of them once per request.
            if now - self._used < _POLL_AFTER_S or now - self._polled < _POLL_EVERY_S:
                return False
            self._polled = now
            return _readable(self._transport.get_extra_info("socket"))
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info == "socket":
            return self._transport.get_extra_info("socket")
        return None


class LeanBackend:
    """httpcore's `AsyncNetworkBackend` on the running asyncio loop (httpcore's own anyio
    backend on any other)."""

    def __init__(self, core: Any) -> None:
        self._errors = core
        self._other = core.AnyIOBackend()
        self._closed_idle = type("ServerClosedIdle", (core.ReadError, ServerClosedIdle), {})

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109
        local_address: str | None = None,
        socket_options: Iterable[tuple[Any, ...]] | None = None,
    ) -> Any:
        if not _on_asyncio():
            return await self._other.connect_tcp(host, port, timeout, local_address, socket_options)
        loop = asyncio.get_running_loop()
        local = None if local_address is None else (local_address, 0)
        connecting = loop.create_connection(_Protocol, host, port, local_addr=local)
        return await self._connect(connecting, timeout, socket_options)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109
        socket_options: Iterable[tuple[Any, ...]] | None = None,
    ) -> Any:
        if not _on_asyncio():
            return await self._other.connect_unix_socket(path, timeout, socket_options)
        loop = asyncio.get_running_loop()
        connecting = loop.create_unix_connection(_Protocol, path)
        return await self._connect(connecting, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await self._other.sleep(seconds)

    async def _connect(
        self, connecting: Any, limit_s: float | None, options: Iterable[tuple[Any, ...]] | None
    ) -> LeanStream:
        try:
            transport, protocol = await asyncio.wait_for(connecting, limit_s)
        except TimeoutError:
            raise self._errors.ConnectTimeout("timed out") from None
        except OSError as exc:
            raise self._errors.ConnectError(str(exc)) from None
        sock: socket.socket | None = transport.get_extra_info("socket")
        try:
            for option in options or ():
                if sock is not None:
                    sock.setsockopt(*option)
        except OSError as exc:
            transport.close()
            raise self._errors.ConnectError(str(exc)) from None
        return LeanStream(transport, protocol, self._errors, self._closed_idle)


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # e.g. trio
        return False
    return True


def _readable(sock: Any) -> bool:
    """Whether the socket has data or an end waiting that the event loop has not read yet."""
    if sock is None:
        return False
    try:
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):  # closed meanwhile
        return True


def closed_idle(exc: BaseException) -> bool:
    """Whether `exc` (an httpx or openai error) began as `ServerClosedIdle`."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ServerClosedIdle):
            return True
        seen = seen.__cause__ or (None if seen.__suppress_context__ else seen.__context__)
    return False
