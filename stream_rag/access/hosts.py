"""The Host check in front of the guard: Starlette's allowlist (`STREAM_RAG_ALLOWED_HOSTS`)
against DNS rebinding, and on loopback without a list the names public DNS cannot point at us."""

from __future__ import annotations

import functools
import ipaddress

from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..config import Settings
from ..errors import InputError
from .guard import RESERVED_PATHS, add_missing, error_response, security_headers
from .principals import is_loopback
from .start import on_start


@functools.lru_cache(maxsize=256)  # every request on loopback asks, mostly for one name
def rebinding_safe(host: str) -> bool:
    """On loopback with no allowlist: names public DNS cannot point at us. IP literals cannot
    rebind, `localhost` names never leave the machine, and single-label names (`testserver`,
    the machine's own name) are not served by public DNS. `attacker.example` is refused."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost") or "." not in name:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostCheck(TrustedHostMiddleware):
    """Starlette's Host allowlist (`STREAM_RAG_ALLOWED_HOSTS`) against DNS rebinding, with a
    JSON error; bound to loopback without a list, `rebinding_safe` names."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        async def passed(scope: Scope, receive: Receive, send: Send) -> None:
            scope["stream_rag.host_ok"] = True
            await app(scope, receive, send)

        super().__init__(passed, list(settings.allowed_hosts) or ["*"], www_redirect=False)
        self.loopback_default = not settings.allowed_hosts and is_loopback(settings.host)
        # Its refusal never reaches `Guard`, which adds them to every other response.
        self.headers = security_headers(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        hosts = [value for name, value in scope.get("headers", ()) if name == b"host"]
        if not hosts and scope.get("http_version") == "1.0":
            # HTTP/1.0 has no Host requirement (RFC 9112 3.2 binds HTTP/1.1), and a request
            # without one is not DNS rebinding's: browsers always send it. Health checks send
            # such requests (HAProxy's `option httpchk` by default).
            await self.app(scope, receive, send)
            return
        if len(hosts) > 1:  # RFC 9112 3.2: a 400; the check read the first, a proxy the last
            await _host_error(scope, receive, self._protected(scope, send))
            return
        if (
            scope["type"] == "http"
            and scope["path"] in RESERVED_PATHS
            and not self.loopback_default
            and len(hosts) == 1
            and b"," not in hosts[0]
        ):
            # Probes (Docker's, a load balancer's) ask by IP or an internal name; health says
            # nothing a rebinding page could use, and the allowlist already ended open mode.
            # A malformed Host (none on HTTP/1.1, two joined) is still refused below.
            await self.app(scope, receive, send)
            return
        if self.loopback_default and scope["type"] in ("http", "websocket"):
            host = _host_name(hosts[0].decode("latin-1") if hosts else "")
            if host and rebinding_safe(host):
                await self.app(scope, receive, send)
            else:
                await _host_error(scope, receive, self._protected(scope, send))
            return

        async def sending(message: Message) -> None:
            if scope.get("stream_rag.host_ok"):
                await send(message)
            elif message["type"] == "http.response.start":  # Starlette refused the Host
                await _host_error(scope, receive, self._protected(scope, send))

        await super().__call__(scope, receive, sending)

    def _protected(self, scope: Scope, send: Send) -> Send:
        return on_start(scope, send, functools.partial(add_missing, self.headers))


class InvalidHostError(InputError):
    code = "invalid_host"


def _host_name(header: str) -> str:
    """`Host` without its port: `[::1]:8000` -> `[::1]`, `example.com:80` -> `example.com`."""
    if header.startswith("["):
        return header[: header.find("]") + 1]
    return header.rpartition(":")[0] if ":" in header else header


async def _host_error(scope: Scope, receive: Receive, send: Send) -> None:
    hosts = [value for name, value in scope["headers"] if name == b"host"]
    if not hosts:  # RFC 9112 3.2: an HTTP/1.1 request needs one
        exc = InvalidHostError("an HTTP/1.1 request needs a Host header")
    elif len(hosts) > 1 or b"," in hosts[0]:
        # Two lines, or two joined by a proxy: which one the request is for is not known.
        exc = InvalidHostError("a request names one host, in one Host header")
    else:
        exc = InvalidHostError("this Host is not served here (STREAM_RAG_ALLOWED_HOSTS)")
    await error_response(exc)(scope, receive, send)
