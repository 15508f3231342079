"""HNSW graphs built without being asked: once `min_points` points of the embedded index are
searched exactly, the server runs `build_hnsw` (a child process on a copy, swapped in; edge.py)
when its indexing queue is idle, as a Qdrant server builds graphs past its indexing threshold.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

import anyio
import anyio.to_thread

from ..errors import StreamRagError
from .base import BuildAbandonedError, Index
from .jobs import IndexQueue

log = logging.getLogger("stream_rag")


class _Buildable(Protocol):
    def exact_points(self) -> int: ...
    def vector_kb(self, points: int) -> int: ...
    def build_hnsw(self, threshold_kb: int = ...) -> dict[str, float]: ...


class AutoHnsw:
    """Builds graphs for an embedded index when `min_points` more points are searched exactly
    than the last build left so (0: never; a Qdrant server builds its own)."""

    def __init__(self, index: Index, min_points: int) -> None:
        self.index: _Buildable | None = None
        if min_points > 0 and all(
            callable(getattr(index, name, None))
            for name in ("exact_points", "vector_kb", "build_hnsw")
        ):
            self.index = index  # type: ignore[assignment]
        self.min_points = min_points
        self.builds = 0
        # Called on the event loop with each background build's timings.
        self.on_build: Callable[[dict[str, float]], None] | None = None
        # Points a build left exact (segments below the size it gives a graph): counted from
        # here, so such leftovers never start a build after every upload.
        self._floor = 0

    def due(self) -> bool:
        """Whether a build is due (blocking: reads the shard's counts)."""
        if self.index is None:
            return False
        return self.index.exact_points() - self._floor >= self.min_points

    def build_if_due(self) -> dict[str, float] | None:
        """Build now if due (blocking, for as long as the child process takes); its timings."""
        index = self.index
        if index is None or not self.due():
            return None
        try:
            # Segments holding at least `min_points` points' vectors get a graph; smaller ones
            # stay exact (as fast at that size).
            timings = index.build_hnsw(threshold_kb=max(1, index.vector_kb(self.min_points)))
        except BuildAbandonedError:
            raise  # writes outran the build's journal: the next idle check tries again
        except BaseException:
            self._floor = index.exact_points()  # a failure: no retry per upload
            raise
        self._floor = index.exact_points()
        self.builds += 1
        log.info(
            "built HNSW graphs in the background (%s); %d points are searched exactly",
            " ".join(f"{k}={v:.1f}" for k, v in timings.items()),
            self._floor,
        )
        return timings

    async def run(self, queue: IndexQueue) -> None:
        """Each time the queue goes idle (and at start), build if due; until cancelled."""
        if self.index is None:
            return
        while True:
            await queue.join()
            seen = queue.submissions
            try:
                # Cancelled at shutdown, the thread is left to end: closing the index ends
                # the child process first (`stop_building`), which ends the build.
                timings = await anyio.to_thread.run_sync(self.build_if_due, abandon_on_cancel=True)
            except StreamRagError as exc:
                log.warning("background HNSW build: %s", exc.message)
            else:
                if timings is not None and self.on_build is not None:
                    self.on_build(timings)
            await queue.submitted_since(seen)
