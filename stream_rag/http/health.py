"""Readiness: can this process answer? Each dependency is checked with its own time limit,
all at once, off the event loop; liveness (`/healthz`) checks nothing but the loop itself."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Container, Iterable
from dataclasses import dataclass

import anyio
import anyio.to_thread

from ..services import Services

CHECK_TIMEOUT_S = 3.0


class StartupIndexing:
    """The versions queued when the process started (a new sample knowledge base, a crash's
    leftovers, a changed embedder): until they are indexed, answers would miss them."""

    def __init__(self, keys: Iterable[tuple[str, int]]) -> None:
        self._waiting = set(keys)

    def waiting(self, queued: Container[tuple[str, int]]) -> int:
        """How many are still `queued`. Once none is, it stays done: later uploads are
        ordinary indexing, which `/readyz` reports but does not judge."""
        if self._waiting:
            self._waiting = {key for key in self._waiting if key in queued}
        return len(self._waiting)


@dataclass(slots=True)
class Check:
    ok: bool = False
    detail: str = "did not answer within the time limit"
    ms: float = 0.0
    value: int | None = None

    def to_json(self) -> dict[str, object]:
        body: dict[str, object] = {"ok": self.ok, "detail": self.detail, "ms": round(self.ms, 1)}
        if self.value is not None:
            body["value"] = self.value
        return body


async def readiness(
    services: Services, queue_depth: int, *, startup_backlog: int = 0, draining: bool
) -> tuple[bool, dict[str, object]]:
    """(ready, body): the store, index, embedder and model each answered, the versions queued
    at start-up are indexed (`startup_backlog` of them are not), and no shutdown is under way.
    Later indexing is reported in the queue's depth, not judged."""

    def store() -> tuple[str, int]:
        count = services.store.count()
        return f"{count} documents", count

    def index() -> tuple[str, int]:
        count = services.index.count()
        return f"{services.index.name}: {count} points", count

    def embedder() -> tuple[str, int]:
        if services.embedder is None:
            return "off: " + services.dense_status, 0
        services.embedder.embed(["readiness probe"])
        return services.embedder.name, services.embedder.dim

    async def model() -> tuple[str, int]:
        probe = getattr(services.model, "check", None)
        if callable(probe):
            await probe()
        return services.model.name, 0

    probes: dict[str, Callable[[], Awaitable[tuple[str, int]]]] = {
        "store": lambda: anyio.to_thread.run_sync(store, abandon_on_cancel=True),
        "index": lambda: anyio.to_thread.run_sync(index, abandon_on_cancel=True),
        "embedder": lambda: anyio.to_thread.run_sync(embedder, abandon_on_cancel=True),
        "model": model,
    }
    checks = {name: Check() for name in probes}

    async def run(name: str) -> None:
        started = time.perf_counter()
        with anyio.move_on_after(CHECK_TIMEOUT_S):
            try:
                detail, value = await probes[name]()
                checks[name] = Check(True, detail, value=value if name != "model" else None)
            except Exception as exc:  # a failed check is data, reported to the caller
                checks[name] = Check(False, f"{type(exc).__name__}: {exc}"[:300])
        checks[name].ms = (time.perf_counter() - started) * 1000

    async with anyio.create_task_group() as group:
        for name in probes:
            group.start_soon(run, name)
    failed = [name for name, check in checks.items() if not check.ok]
    if startup_backlog:
        failed.append("startup_indexing")
    if draining:
        failed.append("shutting_down")
    body: dict[str, object] = {
        "status": "not_ready" if failed else "ready",
        "failed": failed,
        "checks": {name: check.to_json() for name, check in checks.items()},
        "indexing_queue": queue_depth,
        "startup_indexing": startup_backlog,
    }
    return not failed, body
