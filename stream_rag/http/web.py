"""What browsers need from the API: CORS for listed origins, EventSource event ids, download
caching that revalidates (absolute URLs behind a public address: request_context.py)."""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
import secrets

from starlette.datastructures import Headers, MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ..config import Settings

# Headers a cross-origin widget sends: the JSON body, its API key, EventSource's reconnect id.
CORS_HEADERS = ("Authorization", "Content-Type", "Last-Event-ID")
CORS_METHODS = ("GET", "HEAD", "POST", "DELETE")
log = logging.getLogger("stream_rag")


class StrictCORSMiddleware(CORSMiddleware):
    """Starlette's CORS, except that a preflight from an origin not listed carries no CORS
    headers at all (the stock one still lists the allowed methods and headers), and every
    refused preflight has a JSON error body."""

    @staticmethod
    def allow_explicit_origin(headers: MutableHeaders, origin: str) -> None:
        """An allowed origin's responses also expose `Retry-After`, so the widget can say how
        long to wait after a 429; other origins get no CORS headers at all."""
        CORSMiddleware.allow_explicit_origin(headers, origin)
        headers["Access-Control-Expose-Headers"] = "Retry-After"

    def preflight_response(self, request_headers: Headers) -> Response:
        if not self.is_allowed_origin(origin=request_headers["origin"]):
            return JSONResponse(
                {"error": {"code": "cors_forbidden", "message": "origin not allowed"}},
                status_code=403,
                headers={"Vary": "Origin"},
            )
        response = super().preflight_response(request_headers)
        if response.status_code == 400:  # a method or header not allowed: its text, as JSON
            message = bytes(response.body).decode()
            headers = {
                k: v
                for k, v in response.headers.items()
                if k not in ("content-type", "content-length")
            }
            error = {"error": {"code": "cors_forbidden", "message": message}}
            return JSONResponse(error, status_code=400, headers=headers)
        return response


class NoCorsOrigins:
    """No origins listed (`STREAM_RAG_CORS_ORIGINS`): browsers allow same-origin use only. A
    preflight is refused with a 403 that names the setting, and the first one from each origin
    is logged, so an operator embedding the widget elsewhere sees why it cannot ask."""

    LOGGED_MAX = 256  # distinct origins remembered, so a flood of made-up ones cannot grow it

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.logged: set[str] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "OPTIONS":
            headers = Headers(scope=scope)
            origin = headers.get("origin")
            if origin is not None and "access-control-request-method" in headers:
                shown = origin[:200]
                if shown not in self.logged and len(self.logged) < self.LOGGED_MAX:
                    self.logged.add(shown)
                    log.warning(
                        "CORS preflight from %r refused: no origins are listed in "
                        "STREAM_RAG_CORS_ORIGINS (list the sites that embed the widget)",
                        shown,
                    )
                message = (
                    "cross-origin requests are off: the server lists no origins in "
                    "STREAM_RAG_CORS_ORIGINS"
                )
                error = {"error": {"code": "cors_forbidden", "message": message}}
                response = JSONResponse(error, status_code=403, headers={"Vary": "Origin"})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def cors_middleware(settings: Settings) -> list[Middleware]:
    """CORS only when origins are listed; with none, browsers allow same-origin use only and a
    preflight is refused saying so (NoCorsOrigins)."""
    if not settings.cors_origins:
        return [Middleware(NoCorsOrigins)]
    return [
        Middleware(
            StrictCORSMiddleware,
            allow_origins=[o.rstrip("/") for o in settings.cors_origins],
            allow_methods=CORS_METHODS,
            allow_headers=CORS_HEADERS,
            max_age=600,
        )
    ]


# The key of answer ids, read from the system once (not per answer: that system call lets go
# of the GIL on the event loop); `_answers` numbers this process's answers.
_ANSWER_KEY = secrets.token_bytes(32)
_answers = itertools.count()


def answer_id() -> str:
    """16 hex digits naming an answer: a keyed hash of (process, counter). The id is what
    resumes the answer (GET /v1/streams/{id}) and a widget's visitors share one key, so it must
    not be predictable from other answers' ids, as `random`'s generator is from its outputs."""
    data = os.getpid().to_bytes(4, "little") + next(_answers).to_bytes(8, "little")
    return hashlib.blake2b(data, key=_ANSWER_KEY, digest_size=8).hexdigest()


class EventIds:
    """`id:` values for one answer stream: `<answer>.<seq>`. A browser's EventSource sends the
    last one back as `Last-Event-ID` when it reconnects."""

    def __init__(self) -> None:
        self.answer = answer_id()
        self.seq = 0

    def next(self) -> str:
        self.seq += 1
        return f"{self.answer}.{self.seq}"


def is_reconnect(request: Request) -> bool:
    """An EventSource reconnecting (it sends `Last-Event-ID`): the caller resumes the recorded
    answer (resume.py) or answers 204, which stops EventSource for good, rather than pay for a
    second answer the client already has."""
    return bool(request.headers.get("last-event-id", "").strip())


def not_modified(request: Request, etag: str) -> bool:
    """True when the client's `If-None-Match` already names this ETag."""
    header = request.headers.get("if-none-match")
    if header is None:
        return False
    tags = {t.strip().removeprefix("W/") for t in header.split(",")}
    return "*" in tags or etag in tags
