"""Answer slots: how many answers a key (and each visitor of a shared chat key) runs at once.
A slot is taken only once the request's body is in, so a body sent a byte a second holds
none (it holds a connection, which the body deadline ends: http/bodytimeout.py)."""

from __future__ import annotations

from collections.abc import Sequence

from starlette.types import Message, Receive, Scope

from .principals import Principal


def visitor(principal: Principal, scope: Scope) -> str | None:
    """A chat-only key is a page's key, shared by its visitors: each address is one."""
    if principal.anonymous or principal.has("read"):
        return None
    client = scope.get("client")
    return f"{principal.id}@{client[0] if client else '?'}"


class AnswerSlots:
    """Answers in progress per holder (a key id, or `visitor`'s id). In memory, per process."""

    def __init__(self) -> None:
        self.held: dict[str, int] = {}

    def full(self, holders: Sequence[tuple[str, int]]) -> tuple[str, int] | None:
        """The first (holder, limit) that has no slot free, or None."""
        return next(((h, n) for h, n in holders if self.held.get(h, 0) >= n), None)

    def take(self, holders: Sequence[tuple[str, int]]) -> None:
        for holder, _ in holders:
            self.held[holder] = self.held.get(holder, 0) + 1

    def give_back(self, holders: Sequence[tuple[str, int]]) -> None:
        for holder, _ in holders:
            self.held[holder] -= 1
            if not self.held[holder]:
                del self.held[holder]


async def read_body(receive: Receive, limit: int) -> list[Message]:
    """The request's body messages, up to a little past `limit` bytes (the handler refuses a
    larger one as it reads on), or until the client leaves."""
    messages: list[Message] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages
        size += len(message.get("body", b""))
        if not message.get("more_body", False) or size > limit:
            return messages


def replay(messages: list[Message], receive: Receive) -> Receive:
    """`receive` that first hands out `messages`, then reads on."""
    pending = list(reversed(messages))

    async def receiving() -> Message:
        return pending.pop() if pending else await receive()

    return receiving
