"""Connections one address may hold, and the share of the server kept for health checks and
admin keys, so that a stranger holding connections cannot make every request a 503.

Per address: at most `STREAM_RAG_MAX_CONNECTIONS_PER_ADDRESS` open (more are refused as they
connect) and `STREAM_RAG_MAX_IDLE_PER_ADDRESS` idle between requests (past it a response
closes its connection). Trusted proxies (`STREAM_RAG_TRUSTED_PROXIES`) carry everyone's
requests and are exempt. Past `STREAM_RAG_MAX_CONNECTIONS` open connections, the last
`STREAM_RAG_RESERVED_CONNECTIONS` serve only `/healthz`, `/readyz` and admin keys (the guard
reads `RESERVE` in the request's scope); when every slot is held, a new connection closes the
oldest one waiting for a request at the address holding the most, so a flood spread over many
addresses cannot keep the reserve either.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable
from typing import Protocol

from ..access import guard
from ..config import Settings

# Set in a request's scope when it arrived on a connection in the reserved share.
RESERVE = guard.RESERVE
# Set when it arrived past every slot (all of them busy with requests): answered 503.
OVER = "stream_rag.over"

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class Closable(Protocol):
    def close_idle(self) -> None:
        """Close it; once gone, it takes itself off `ConnectionBudget.closing`."""


def networks(cidrs: Iterable[str]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(c, strict=False) for c in cidrs)


def trusted(address: str | None, proxies: tuple[Network, ...]) -> bool:
    if address is None or not proxies:
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in proxies)


def refusal(message: str) -> bytes:
    """A complete 503 response, written before the request is read (the client reads it as
    the answer to the request it sends, and the connection closes)."""
    body = json.dumps({"error": {"code": "server_busy", "message": message}}).encode()
    return (
        b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
        b"retry-after: 1\r\nconnection: close\r\ncontent-length: %d\r\n\r\n" % len(body) + body
    )


PER_ADDRESS_REFUSAL = refusal(
    "too many connections from this address (STREAM_RAG_MAX_CONNECTIONS_PER_ADDRESS)"
)


class ConnectionBudget:
    """Open and idle connections per client address, for one server (its event loop only)."""

    def __init__(self, settings: Settings) -> None:
        self.max_connections = settings.max_connections
        # uvicorn's limit: a request arriving with this many connections open gets its 503.
        self.limit = settings.max_connections + settings.reserved_connections
        self.per_address = settings.max_connections_per_address
        self.idle_per_address = settings.max_idle_per_address
        self.proxies = networks(settings.trusted_proxies)
        self.open: dict[str, int] = {}
        self.idle: dict[str, int] = {}
        # Connections waiting for a request head, per address, oldest first.
        self.waiting: dict[str, dict[Closable, None]] = {}
        # Closed to make room, not yet gone from the server's set (a turn of the loop).
        self.closing = 0

    def held(self, connections: int) -> int:
        """The server's open connections, less those closed to make room."""
        return connections - self.closing

    def wait(self, connection: Closable, address: str | None) -> None:
        self.waiting.setdefault(address or "?", {})[connection] = None

    def stop_waiting(self, connection: Closable, address: str | None) -> None:
        queue = self.waiting.get(address or "?")
        if queue is not None and queue.pop(connection, True) is None and not queue:
            del self.waiting[address or "?"]

    def make_room(self, open_now: int, newcomer: Closable) -> None:
        """Past `limit` open connections: close the oldest connections waiting for a request
        at the addresses holding the most such (many addresses each under their cap could
        otherwise hold every slot, the reserve included)."""
        for _ in range(open_now - self.limit):
            victims = [(len(q), a) for a, q in self.waiting.items() if q]
            if not victims:
                return
            _, address = max(victims)
            queue = self.waiting[address]
            victim = next((c for c in queue if c is not newcomer), None)
            if victim is None:
                return
            del queue[victim]
            if not queue:
                del self.waiting[address]
            self.closing += 1
            victim.close_idle()

    def admit(self, address: str | None) -> bool:
        """Count a new connection; False (not counted) when its address has its share."""
        if address is None or trusted(address, self.proxies):
            return True
        held = self.open.get(address, 0)
        if held >= self.per_address:
            return False
        self.open[address] = held + 1
        return True

    def release(self, address: str | None) -> None:
        _decrement(self.open, address)

    def rest(self, address: str | None) -> None:
        """A connection of `address` waits for its next request."""
        if address is not None and not trusted(address, self.proxies):
            self.idle[address] = self.idle.get(address, 0) + 1

    def wake(self, address: str | None) -> None:
        _decrement(self.idle, address)

    def keep_alive(self, address: str | None) -> bool:
        """Whether a connection of `address` now answering may stay open after it."""
        return address is None or self.idle.get(address, 0) < self.idle_per_address


def _decrement(counts: dict[str, int], address: str | None) -> None:
    if address is None or address not in counts:
        return
    counts[address] -= 1
    if counts[address] <= 0:
        del counts[address]
