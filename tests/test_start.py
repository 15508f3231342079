"""Middleware changes to a response's start go through one `send` wrapper (access/start.py)."""

from __future__ import annotations

import pytest
from starlette.types import Message, Receive, Scope, Send

from stream_rag.access.start import START_HOOKS, StartHook, on_start
from stream_rag.http.telemetry import ObservedApp, Telemetry


def adding(name: bytes) -> StartHook:
    def hook(message: Message) -> None:
        message["headers"].append((name, b"1"))

    return hook


async def streaming(scope: Scope, receive: Receive, send: Send) -> None:
    """Two middleware layers registering hooks, then a response in three body messages."""
    send = on_start(scope, send, adding(b"x-outer"))
    send = on_start(scope, send, adding(b"x-inner"))
    await send({"type": "http.response.start", "status": 200, "headers": [(b"a", b"b")]})
    for part in (b"one", b"two"):
        await send({"type": "http.response.body", "body": part, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def run(app: object, scope: Scope) -> list[Message]:
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b""}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)  # type: ignore[operator]
    return sent


def http_scope() -> Scope:
    return {"type": "http", "method": "GET", "path": "/", "headers": [], "client": None}


@pytest.mark.anyio
async def test_alone_each_hook_wraps_send_innermost_first() -> None:
    scope = http_scope()
    sent = await run(streaming, scope)
    assert sent[0]["headers"] == [(b"a", b"b"), (b"x-inner", b"1"), (b"x-outer", b"1")]
    assert [m.get("body") for m in sent[1:]] == [b"one", b"two", b""]


@pytest.mark.anyio
async def test_under_observed_app_the_hooks_run_in_its_one_wrapper_in_the_same_order() -> None:
    scope = http_scope()
    sent = await run(ObservedApp(streaming, Telemetry()), scope)
    names = [name for name, _ in sent[0]["headers"]]
    assert names == [b"a", b"x-inner", b"x-outer", b"x-request-id"]
    assert len(scope[START_HOOKS]) == 2  # registered, not wrapped
    assert [m.get("body") for m in sent[1:]] == [b"one", b"two", b""]


@pytest.mark.anyio
async def test_the_apps_own_start_message_is_not_changed() -> None:
    original: list[Message] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        send = on_start(scope, send, adding(b"x-added"))
        message: Message = {"type": "http.response.start", "status": 204, "headers": []}
        original.append(message)
        await send(message)

    for wrapped in (app, ObservedApp(app, Telemetry())):
        original.clear()
        sent = await run(wrapped, http_scope())
        assert (b"x-added", b"1") in sent[0]["headers"]
        assert original[0]["headers"] == []
