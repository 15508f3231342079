"""The transport for plain-HTTP model servers: httpcore's HTTP/1.1 connections on the lean
network backend (network.py), kept in a pool of our own, through public API only.

httpx's own transport builds httpcore's pool, whose backend can be chosen only by reaching
into it, and whose pass over every connection each time a response closes (~2.7 us a
connection, ~250 us at 100 streams, twice per answer) is there to sweep connections that
closed or expired meanwhile. Here an idle connection is checked when it is about to be used
(the one used last first), so neither closing a response nor starting a request passes over
every connection.

The openai SDK sends through httpx2 (over httpcore2), other clients through httpx (over
httpcore): the same API under two names, so the transport is made for the one it is given.
"""

from __future__ import annotations

import functools
import importlib
from collections import deque
from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any

import anyio

from .network import LeanBackend

__all__ = ["LeanPool", "as_http_error", "lean_transport"]

# Each httpx-like package and the httpcore-like one under it.
_CORES = {"httpx": "httpcore", "httpx2": "httpcore2"}


def lean_transport(http: ModuleType, limits: Any) -> Any:
    """An `http.AsyncBaseTransport` (`http` httpx or httpx2) over a `LeanPool` on the lean
    backend, with `limits` (an `http.Limits`); its pool is its `pool`."""
    made: Any = _transport_class(http)(limits)
    return made


def as_http_error(exc: Exception, http: ModuleType) -> Exception:
    """httpcore's `exc` as the `http` exception of the same name (as httpx's own transport
    maps them; a subclass of ours, such as `ServerClosedIdle`'s, as its nearest httpcore base)."""
    for cls in type(exc).__mro__:
        mapped = getattr(http, cls.__name__, None)
        if isinstance(mapped, type) and issubclass(mapped, http.HTTPError):
            error: Exception = mapped(str(exc))
            return error
    return exc


class LeanPool:
    """HTTP/1.1 connections kept alive and reused, at most `max_connections` at once (a request
    past them waits for one to be freed, up to its pool timeout), at most
    `max_keepalive_connections` of them idle. `core`: httpcore or httpcore2."""

    def __init__(
        self,
        core: ModuleType,
        *,
        max_connections: int | None,
        max_keepalive_connections: int | None,
        keepalive_expiry: float | None,
    ) -> None:
        self._core = core
        self._backend = LeanBackend(core)
        self._max = max_connections
        self._keep = max_keepalive_connections
        self._expiry = keepalive_expiry
        self.connections: list[Any] = []  # idle or in use
        self._idle: list[Any] = []
        self._waiting: deque[anyio.Event] = deque()

    async def handle_async_request(self, request: Any) -> Any:
        core = self._core
        origin = request.url.origin
        limit_s = (request.extensions.get("timeout") or {}).get("pool")
        while True:
            connection = await self._idle_for(origin)
            if connection is None:
                if self._max is not None and len(self.connections) >= self._max:
                    await self._wait(limit_s)
                    continue
                connection = core.AsyncHTTPConnection(
                    origin, keepalive_expiry=self._expiry, network_backend=self._backend
                )
                self.connections.append(connection)
            try:
                response = await connection.handle_async_request(request)
            except core.ConnectionNotAvailable:
                await self.release(connection)
                continue  # closed by its server meanwhile: another connection
            except BaseException:
                await self.release(connection)
                raise
            return core.Response(
                response.status,
                headers=response.headers,
                content=_Returned(response.stream, self, connection),
                extensions=response.extensions,
            )

    async def _idle_for(self, origin: Any) -> Any:
        """The idle connection to `origin` used last; those found expired or closed by their
        server on the way are closed (the rest wait until they are next looked at), and one
        to another origin is closed when the pool is full."""
        for connection in reversed(list(self._idle)):
            if connection not in self._idle:
                continue  # taken by another request while one was closed
            if connection.has_expired() or connection.is_closed():
                await self._drop(connection)
            elif connection.can_handle_request(origin):
                self._idle.remove(connection)
                return connection
        if self._idle and self._max is not None and len(self.connections) >= self._max:
            await self._drop(self._idle[0])
        return None

    async def _wait(self, limit_s: float | None) -> None:
        freed = anyio.Event()
        self._waiting.append(freed)
        woken = False
        try:
            with anyio.fail_after(limit_s):
                await freed.wait()
            woken = True
        except TimeoutError:
            raise self._core.PoolTimeout("no connection was freed in time") from None
        finally:
            if freed in self._waiting:
                self._waiting.remove(freed)
            elif not woken and freed.is_set():
                self._wake()  # woken, but cancelled or timed out: the next one takes it

    def _wake(self) -> None:
        if self._waiting:
            self._waiting.popleft().set()

    async def release(self, connection: Any) -> None:
        """`connection` done with: kept idle if it can serve another request, else closed."""
        keep = self._keep
        if (
            not connection.is_closed()
            and connection.is_idle()
            and (keep is None or len(self._idle) < keep)
        ):
            self._idle.append(connection)
        else:
            await self._drop(connection)
        self._wake()

    async def _drop(self, connection: Any) -> None:
        if connection in self._idle:
            self._idle.remove(connection)
        if connection in self.connections:
            self.connections.remove(connection)
        await connection.aclose()

    async def aclose(self) -> None:
        connections, self.connections, self._idle = self.connections, [], []
        for connection in connections:
            await connection.aclose()


class _Returned:
    """A response's body that gives its connection back to the pool when closed."""

    def __init__(self, stream: Any, pool: LeanPool, connection: Any) -> None:
        self._stream = stream
        self._pool = pool
        self._connection = connection

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self._stream:
            yield part

    async def aclose(self) -> None:
        connection, self._connection = self._connection, None
        try:
            await self._stream.aclose()
        finally:
            if connection is not None:
                await self._pool.release(connection)


class _Body:
    """httpcore's response body as httpx's (mixed into `http.AsyncByteStream`), its errors
    mapped (`as_http_error`)."""

    _http: ModuleType
    _errors: tuple[type[Exception], ...]

    def __init__(self, stream: _Returned) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for part in self._stream:
                yield part
        except self._errors as exc:
            raise as_http_error(exc, self._http) from exc

    async def aclose(self) -> None:
        await self._stream.aclose()


class _Transport:
    """`lean_transport`'s methods (mixed into `http.AsyncBaseTransport`)."""

    _http: ModuleType
    _core: ModuleType
    _errors: tuple[type[Exception], ...]
    _body: type[_Body]

    def __init__(self, limits: Any) -> None:
        self.pool = LeanPool(
            self._core,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
        )

    async def handle_async_request(self, request: Any) -> Any:
        url, core = request.url, self._core
        sent = core.Request(
            method=request.method,
            url=core.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        try:
            response = await self.pool.handle_async_request(sent)
        except self._errors as exc:
            raise as_http_error(exc, self._http) from exc
        return self._http.Response(
            status_code=response.status,
            headers=response.headers,
            stream=self._body(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.pool.aclose()


@functools.cache
def _transport_class(http: ModuleType) -> type[_Transport]:
    core = importlib.import_module(_CORES[http.__name__])
    errors = (
        core.TimeoutException,
        core.NetworkError,
        core.ProtocolError,
        core.UnsupportedProtocol,
        core.ProxyError,
    )
    body = type("LeanBody", (_Body, http.AsyncByteStream), {"_http": http, "_errors": errors})
    made: type[_Transport] = type(
        "LeanTransport",
        (_Transport, http.AsyncBaseTransport),
        {"_http": http, "_core": core, "_errors": errors, "_body": body},
    )
    return made
