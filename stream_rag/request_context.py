"""What the HTTP layer tells the layers below about the request being served: its id (set
by the telemetry middleware, read by the events and the access log), and the public address
its URLs are made absolute against."""

from __future__ import annotations

import os
import random
from contextvars import ContextVar
from typing import Any, TypeVar

__all__ = ["REQUEST_ID", "absolute_urls", "current_request_id", "new_id"]

T = TypeVar("T")

REQUEST_ID: ContextVar[str | None] = ContextVar("stream_rag_request_id", default=None)

# Our own generator: the module-level one is shared, and whatever seeds it (Hypothesis does,
# per example; so may any library) would make ids repeat (answer_streams.id is unique).
_IDS = random.Random()
os.register_at_fork(after_in_child=_IDS.seed)


def new_id() -> str:
    """16 random hex digits naming a request or an answer stream: unique, not secret (a client
    may name its own request). From a generator of our own, seeded from the system once and
    again in a forked child: `secrets` reads the system's on every call, a system call that
    lets go of the GIL, and on a busy server the event loop then waits for a worker thread to
    hand it back (up to the switch interval) before the request can go on."""
    return f"{_IDS.getrandbits(64):016x}"


def current_request_id() -> str | None:
    """The id of the HTTP request being served in this context, if any."""
    return REQUEST_ID.get()


def absolute_urls(data: T, base: str | None) -> T:
    """Prefix every relative `url` value (at any depth) with the public base URL."""
    if not base:
        return data
    root = base.rstrip("/")
    return _rebase(data, root)  # type: ignore[no-any-return]


def _rebase(data: Any, root: str) -> Any:
    if isinstance(data, dict):
        return {
            k: root + v
            if k == "url" and isinstance(v, str) and v.startswith("/")
            else _rebase(v, root)
            for k, v in data.items()
        }
    if isinstance(data, list | tuple):
        return [_rebase(v, root) for v in data]
    return data
