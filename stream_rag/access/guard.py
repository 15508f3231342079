"""The ASGI middleware in front of every route: the Origin check, the API key and its scope,
rate limits, and security headers (the Host check before it is hosts.py's). Collection checks
happen in the handlers, which know which document a request is about
(`request.state.principal`)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio.to_thread
from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..config import Settings
from ..errors import StreamRagError
from .keys import ApiKey
from .principals import (
    ANSWER_PATHS,
    NO_KEYS_MESSAGE,
    Access,
    AuthError,
    ForbiddenError,
    Principal,
    is_loopback,
    open_mode_allowed,
    required_scope,
)
from .slots import AnswerSlots, read_body, replay, visitor
from .start import on_start

# Set by the HTTP protocol (http/budget.py) on a request in the reserved share of
# connections; named here too, as the access layer imports nothing from http.
RESERVE = "stream_rag.reserve"
RESERVED_PATHS = frozenset({"/healthz", "/readyz"})

KEYS_NEED_A_KEY = (
    "keys are created over HTTP with an admin key only; create the first one on the server: "
    "`stream-rag keys create --scope admin --name ops`"
)
# Methods a cross-site page must not trigger; GET /v1/chat also runs (paid) generation.
_SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
# The hash is http/static/index.html's one inline script (at /rag it redirects to /rag/, or the
# page's relative URLs would leave a proxy's prefix); tests/test_browser_widget.py checks it.
_CSP = (
    "default-src 'self'; script-src 'self' 'sha256-d5Tv8U7rfX3bNjDoA6xyFIZ0Y3J2H28Crlt3h08VNdM='; "
    "style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors {ancestors}"
)


class RateLimitError(StreamRagError):
    """Too many requests a minute, or too many open answers, for one key or address (429)."""

    code = "rate_limited"
    status = 429

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class ServerBusyError(StreamRagError):
    """Past STREAM_RAG_MAX_CONNECTIONS, for a request that is neither health nor admin (503)."""

    code = "server_busy"
    status = 503


class OriginError(ForbiddenError):
    code = "forbidden_origin"


@dataclass(slots=True)
class _Bucket:
    tokens: float
    stamp: float


class RateLimiter:
    """A token bucket per principal (`rpm` a minute, bursts up to `rpm`). Idle full buckets
    are dropped when there are many, bounding memory."""

    MAX_BUCKETS = 50_000

    def __init__(self) -> None:
        self._buckets: dict[str, _Bucket] = {}

    def wait(self, who: str, rpm: int) -> float | None:
        """Like `take`, without spending: None if a request is available now."""
        bucket = self._buckets.get(who)
        if bucket is None:
            return None
        tokens = min(float(rpm), bucket.tokens + (time.monotonic() - bucket.stamp) * rpm / 60.0)
        return None if tokens >= 1.0 else (1.0 - tokens) * 60.0 / rpm

    def take(self, who: str, rpm: int) -> float | None:
        """Spend one request; returns None, or the seconds until one is available."""
        now = time.monotonic()
        bucket = self._buckets.get(who)
        if bucket is None:
            if len(self._buckets) >= self.MAX_BUCKETS:
                self._prune(now, rpm)
            bucket = self._buckets[who] = _Bucket(float(rpm), now)
        bucket.tokens = min(float(rpm), bucket.tokens + (now - bucket.stamp) * rpm / 60.0)
        bucket.stamp = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return None
        return (1.0 - bucket.tokens) * 60.0 / rpm

    def _prune(self, now: float, rpm: int) -> None:
        full = [w for w, b in self._buckets.items() if now - b.stamp > 60.0]
        for who in full or list(self._buckets)[: self.MAX_BUCKETS // 10]:
            del self._buckets[who]


class Guard:
    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self.limiter = RateLimiter()
        self.slots = AnswerSlots()
        self.headers = security_headers(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = on_start(scope, send, self._add_headers)
        if scope["method"] == "OPTIONS":  # CORS preflight: CORSMiddleware answers it
            await self.app(scope, receive, send)
            return
        try:
            principal = await self._authorize(scope)
        except StreamRagError as exc:
            await error_response(exc)(scope, receive, send)
            return
        # A fresh dict: the principal must never be shared with another request's state.
        scope["state"] = {**scope.get("state", {}), "principal": principal}
        if scope.get(RESERVE) and not (
            scope["path"] in RESERVED_PATHS or (principal.admin and not principal.anonymous)
        ):
            await _busy(scope, receive, send)
            return
        if scope["path"] not in ANSWER_PATHS or not self._limited(principal):
            await self.app(scope, receive, send)
            return
        if scope["method"] == "POST":
            try:
                messages = await read_body(receive, self.settings.max_json_bytes)
            except StreamRagError as exc:  # the body deadline (408)
                await error_response(exc)(scope, receive, send)
                return
            if messages[-1]["type"] == "http.disconnect":
                return  # gone before its question was in: nobody to answer
            receive = replay(messages, receive)
        holders = [(principal.id, principal.max_streams or self.settings.max_streams)]
        if (who := visitor(principal, scope)) is not None:
            holders.append((who, self.settings.visitor_max_streams))
        access: Access = scope["state"]["access"]
        shared = access.slots
        if shared is None:  # one process: counted in memory
            full = self.slots.full(holders)
            if full is None:
                self.slots.take(holders)
        else:  # counted across replicas, in PostgreSQL
            full = await anyio.to_thread.run_sync(shared.take, holders)
        if full is not None:
            whose = "this key" if full[0] == principal.id else "each visitor of this key"
            busy = RateLimitError(f"at most {full[1]} answers at a time for {whose}", 1.0)
            await error_response(busy)(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            if shared is None:
                self.slots.give_back(holders)
            else:
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(shared.give_back, holders)

    async def _authorize(self, scope: Scope) -> Principal:
        headers = Headers(scope=scope)
        method, path = scope["method"], scope["path"]
        origin = headers.get("origin")
        if (
            origin is not None
            and (method not in _SAFE_METHODS or path in ANSWER_PATHS)
            and not self._origin_allowed(origin, headers.get("host", ""))
        ):
            raise OriginError(
                f"requests from the web origin {origin[:200]!r} are not allowed; "
                "list it in STREAM_RAG_CORS_ORIGINS"
            )
        access: Access | None = scope.get("state", {}).get("access")
        if access is None:
            raise StreamRagError("access control is not initialised (lifespan not run)")
        needed = required_scope(method, path)
        principal = await self._principal(access, headers, scope)
        if principal is None:
            if needed is None:
                return Principal("public", frozenset(), frozenset())
            if access.keys.empty:  # every key was revoked on a network-bound server
                raise AuthError(NO_KEYS_MESSAGE.format(host=self.settings.host))
            raise AuthError("this route needs an API key: send 'Authorization: Bearer <key>'")
        keys_route = path.startswith("/v1/keys") and method in ("GET", "HEAD", "POST", "DELETE")
        if principal.anonymous and (
            keys_route or (needed is not None and not principal.has(needed))
        ):
            # Keys are made over HTTP with an admin key only: in open mode anyone could make
            # one, and the first key ends open mode for everyone else (the owner included).
            if keys_route and access.open_mode.refused is None:
                raise AuthError(KEYS_NEED_A_KEY)
            raise AuthError(access.open_mode.refusal())
        if needed is not None and not principal.has(needed):
            raise ForbiddenError(
                f"this key does not have the {'read' if needed == 'download' else needed!r} "
                "scope needed here"
            )
        if self._limited(principal):
            rpm = principal.rpm or self.settings.rate_limit_rpm
            wait = await self._take(access, principal.id, rpm)
            if wait is not None:
                raise RateLimitError("too many requests for this key; slow down", wait)
            who = visitor(principal, scope)
            if who is not None:
                wait = await self._take(access, who, self.settings.visitor_rpm)
                if wait is not None:
                    raise RateLimitError("too many requests from this visitor; slow down", wait)
        return principal

    async def _principal(self, access: Access, headers: Headers, scope: Scope) -> Principal | None:
        await access.keys.refresh()
        authorization = headers.get("authorization")
        if access.keys.empty and open_mode_allowed(self.settings):
            # Open mode: no key exists, so any Authorization (an OpenAI client always sends
            # one) is ignored.
            client = scope.get("client")
            return access.open_mode.principal(headers, client[0] if client else "unknown")
        if authorization is not None:
            kind, _, secret = authorization.partition(" ")
            if kind.lower() != "bearer" or not secret.strip():
                raise AuthError("send the key as 'Authorization: Bearer <key>'")
            key = access.keys.cached(secret.strip())
            if key is None:
                key = await self._fetch(access, secret.strip(), scope)
            return Principal.of(key)
        return None

    async def _fetch(self, access: Access, secret: str, scope: Scope) -> ApiKey:
        """A key not in memory costs a table lookup; an address sending unknown keys gets
        `rate_limit_rpm` of those a minute, then 429 before any lookup."""
        client = scope.get("client")
        who, rpm = f"unknown-key:{client[0] if client else '?'}", self.settings.rate_limit_rpm
        wait = self.limiter.wait(who, rpm)
        if wait is not None:
            raise RateLimitError("too many requests with unknown keys from this address", wait)
        key = await access.keys.fetch(secret)
        if key is None:
            self.limiter.take(who, rpm)
            raise AuthError("unknown or revoked API key")
        return key

    async def _take(self, access: Access, who: str, rpm: int) -> float | None:
        """A request from `who`'s bucket: every replica's (the database's) when shared."""
        if access.limits is None:
            return self.limiter.take(who, rpm)
        return await anyio.to_thread.run_sync(access.limits.take, who, rpm)

    def _limited(self, principal: Principal) -> bool:
        """Keys are always limited, and so is open mode beyond loopback or read-only (behind a
        proxy every client shares the proxy's address)."""
        return not (principal.anonymous and principal.admin and is_loopback(self.settings.host))

    def _origin_allowed(self, origin: str, host: str) -> bool:
        listed = {o.rstrip("/") for o in self.settings.cors_origins}
        if origin.rstrip("/") in listed or "*" in listed:
            return True
        parts = urlsplit(origin)
        return bool(parts.netloc) and _strip_port(parts.netloc, parts.scheme) == _strip_port(
            host, parts.scheme
        )

    def _add_headers(self, message: Message) -> None:
        add_missing(self.headers, message)


async def _busy(scope: Scope, receive: Receive, send: Send) -> None:
    """A connection in the reserved share, for a request that is not health or admin."""
    busy = ServerBusyError(
        "the server is holding as many connections as it serves (STREAM_RAG_MAX_CONNECTIONS); "
        "retry shortly"
    )
    await JSONResponse(busy.to_json(), 503, {"Retry-After": "1"})(scope, receive, send)


def security_headers(settings: Settings) -> list[tuple[str, str]]:
    """What every response carries: no MIME sniffing, no referrer off-site, the CSP, and
    framing by this origin only unless `STREAM_RAG_FRAME_ANCESTORS` lists others."""
    ancestors = " ".join(("'self'", *settings.frame_ancestors))
    headers = [
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "same-origin"),
        ("content-security-policy", _CSP.format(ancestors=ancestors)),
    ]
    if not settings.frame_ancestors:
        headers.append(("x-frame-options", "SAMEORIGIN"))
    return headers


def add_missing(added: list[tuple[str, str]], message: Message) -> None:
    headers = MutableHeaders(scope=message)
    for name, value in added:
        if name not in headers:
            headers.append(name, value)


def _strip_port(netloc: str, scheme: str) -> str:
    default = {"http": ":80", "https": ":443"}.get(scheme, "")
    netloc = netloc.lower()
    return netloc[: -len(default)] if default and netloc.endswith(default) else netloc


def error_response(exc: StreamRagError) -> JSONResponse:
    headers: dict[str, str] = {}
    if isinstance(exc, AuthError):
        headers["WWW-Authenticate"] = "Bearer"
    if isinstance(exc, RateLimitError):
        headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after_s)))
    return JSONResponse(exc.to_json(), status_code=exc.status, headers=headers)
