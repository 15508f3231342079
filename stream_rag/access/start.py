"""Changes to a response's start (its headers) by middleware, through one `send` wrapper.

Each middleware that wraps `send` adds a call to every message of the response, and an SSE
answer sends one per event. The outermost middleware (`ObservedApp`) keeps a list of hooks in
the scope and runs them on the start message; middleware inside it register a hook instead of
wrapping, and wrap as before when nothing outside keeps the list (used on its own).
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import Message, Scope, Send

START_HOOKS = "stream_rag.start_hooks"
# Changes an `http.response.start` message in place (its `headers` list is its own).
StartHook = Callable[[Message], None]


def on_start(scope: Scope, send: Send, hook: StartHook) -> Send:
    """`send` for the app inside: `hook` runs on the response's start message before it goes
    out (innermost hook first)."""
    hooks: list[StartHook] | None = scope.get(START_HOOKS)
    if hooks is not None:
        hooks.append(hook)
        return send

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": list(message.get("headers", []))}
            hook(message)
        await send(message)

    return sending
