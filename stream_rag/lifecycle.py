"""The graceful stop on SIGTERM and the answers' deadlines, shared by the server, the indexer
and the answer pipeline.

On SIGTERM (`Drain.request`, called from the server's signal handler) the server stops
accepting connections, indexing stops after the job in hand, and answers in flight may go on
for `STREAM_RAG_DRAIN_S`; then every guarded wait is cancelled and the stream ends with
`error {"code": "shutting_down"}`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import anyio

from .errors import AnswerTimeoutError, ShuttingDownError, StreamRagError


class Drain:
    """Graceful stop. `request()` is safe from a signal handler or another thread."""

    def __init__(self, drain_s: float) -> None:
        self.drain_s = drain_s
        self.draining = False
        self.stopped = False
        self._scopes: set[anyio.CancelScope] = set()
        self._hooks: list[Callable[[], None]] = []
        self._requested: anyio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def on_drain(self, hook: Callable[[], None]) -> None:
        """Call `hook` (on the event loop) when the drain begins, e.g. to stop indexing."""
        self._hooks.append(hook)

    def request(self) -> None:
        loop, requested = self._loop, self._requested
        if loop is not None and requested is not None and not loop.is_closed():
            loop.call_soon_threadsafe(requested.set)

    async def run(self) -> None:
        """Run for the app's lifetime (in the lifespan's task group)."""
        self._loop = asyncio.get_running_loop()
        self._requested = anyio.Event()
        await self._requested.wait()
        self.draining = True
        for hook in self._hooks:
            hook()
        await anyio.sleep(self.drain_s)
        self.stop()

    def stop(self) -> None:
        """End the drain now: every guarded wait is cancelled."""
        self.stopped = True
        for scope in list(self._scopes):
            scope.cancel()

    @contextmanager
    def guard(self, deadline: float) -> Iterator[anyio.CancelScope]:
        """A cancel scope that ends at `deadline` (anyio clock) or when the drain is over.
        Wrap single awaits with it, never a `yield`."""
        scope = anyio.CancelScope(deadline=deadline)
        if self.stopped:
            scope.cancel()
        self._scopes.add(scope)
        try:
            with scope:
                yield scope
        finally:
            self._scopes.discard(scope)

    def reason(self) -> StreamRagError:
        """Why a guarded wait was cut short."""
        if self.stopped:
            return ShuttingDownError("the server is shutting down")
        return AnswerTimeoutError("the answer took longer than STREAM_RAG_ANSWER_TIMEOUT_S")
