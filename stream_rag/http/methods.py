"""Methods as the server as a whole sees them (RFC 9110 9.1, 9.3.7, 15.6.2): a method it does
not know is a 501, and `OPTIONS *` lists the methods it implements. A known method a route
does not take stays the router's 405 with that route's Allow."""

from __future__ import annotations

from typing import ClassVar

from starlette.datastructures import MutableHeaders
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..access.guard import security_headers
from ..access.start import on_start
from ..config import Settings
from ..errors import StreamRagError

__all__ = ["ALLOW", "KNOWN", "MethodCheck", "MethodNotImplementedError"]

# What some route takes (OPTIONS: CORS preflights).
IMPLEMENTED = ("GET", "HEAD", "POST", "DELETE", "OPTIONS")
# RFC 9110's methods and PATCH: known, so a route that does not take one answers 405.
KNOWN = frozenset({*IMPLEMENTED, "PUT", "PATCH", "CONNECT", "TRACE"})
ALLOW = ", ".join(IMPLEMENTED)
NOT_IMPLEMENTED_MESSAGE = f"this server does not implement the request's method; it serves {ALLOW}"


class MethodNotImplementedError(StreamRagError):
    code = "not_implemented"
    status = 501
    headers: ClassVar[dict[str, str] | None] = {"Allow": ALLOW}


class MethodCheck:
    """Outside the key check: a method no route takes is a 501 whoever sends it, and the
    server's methods are no secret."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.headers = security_headers(settings)  # its answers never reach `Guard`

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        if method not in KNOWN:
            exc = MethodNotImplementedError(f"{method[:40]!r}: {NOT_IMPLEMENTED_MESSAGE}")
            response: Response = JSONResponse(exc.to_json(), exc.status, headers=exc.headers)
        elif scope["path"] == "*" and method == "OPTIONS":
            response = Response(status_code=200, headers={"Allow": ALLOW})
        else:
            await self.app(scope, receive, send)
            return
        await response(scope, receive, on_start(scope, send, self._add_headers))

    def _add_headers(self, message: Message) -> None:
        headers = MutableHeaders(scope=message)
        for name, value in self.headers:
            if name not in headers:
                headers.append(name, value)
