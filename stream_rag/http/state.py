"""What the route handlers share: the lifespan's resources on `request.state`, a JSON object
body, public URLs, and the watch for a client that leaves with its 499 answer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Receive

from ..config import Settings
from ..errors import InputError
from ..index.jobs import IndexQueue
from ..request_context import absolute_urls
from ..services import Services
from ..store.documents import DocumentStore
from .limits import read_json

T = TypeVar("T")


def services(request: Request) -> Services:
    found: Services = request.state.services
    return found


def queue(request: Request) -> IndexQueue:
    found: IndexQueue = request.state.queue
    return found


def store(request: Request) -> DocumentStore:
    found: DocumentStore = request.state.store
    return found


def settings(request: Request) -> Settings:
    found: Settings = request.state.settings
    return found


async def json_object(request: Request) -> dict[str, object]:
    body = await read_json(request, settings(request).max_json_bytes)
    if not isinstance(body, dict):
        raise InputError("the request body must be a JSON object")
    return body


def public(request: Request, data: dict[str, object]) -> dict[str, object]:
    """Download URLs made absolute when STREAM_RAG_PUBLIC_URL is set."""
    return absolute_urls(data, settings(request).public_url)


def client_gone() -> JSONResponse:
    # Nobody reads it; nginx's 499 names the case in access logs.
    body = {"error": {"code": "client_closed_request", "message": "the client left"}}
    return JSONResponse(body, status_code=499)


async def unless_client_leaves(receive: Receive, work: Callable[[], Awaitable[T]]) -> T | None:
    """Await `work()`, cancelling it (and so closing its upstream requests) if the client
    disconnects first; None then. Call only after the request body has been read."""
    results: list[T] = []
    failure: list[Exception] = []
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    group.cancel_scope.cancel()
                    return

        group.start_soon(watch)
        try:
            results.append(await work())
        except Exception as exc:  # re-raised below, outside the task group
            failure.append(exc)
        group.cancel_scope.cancel()
    if failure:
        raise failure[0]
    return results[0] if results else None


def is_ascii_int(raw: str) -> bool:
    # str.isdigit() accepts "²" and other digits that int() refuses.
    return raw.isascii() and raw.isdigit() and len(raw) <= 9
