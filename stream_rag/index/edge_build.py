"""`EdgeIndex`'s HNSW builds (`HnswBuilds`): the child process that builds graphs on a copy,
the journal of the writes made meanwhile, re-applied to the copy before the swap, and the swap."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import qdrant_edge as qe

from .base import DENSE, BuildAbandonedError, IndexUnavailableError
from .edge_config import (
    HNSW_EF_CONSTRUCT,
    HNSW_M,
    HNSW_THRESHOLD_KB,
    edge_config,
    load,
    read_extra,
)

# Past this many collections every search filters on its own (see `collections_of`).
MAX_TRACKED = 1000
_BUILD = "import sys; from stream_rag.index.edge_config import build_main; sys.exit(build_main())"


def replaced(path: Path) -> Path:
    """Where the old shard goes during a swap (a crash between the renames leaves it there)."""
    return path.with_name(path.name + ".replaced")


def building(path: Path) -> Path:
    """The copy a build works on."""
    return path.with_name(path.name + ".hnsw-build")


class Journal:
    """The writes applied to the live shard since the copy was taken, in order. Replayed on
    the copy they give it the live shard's points: upserts are by id and deletions by filter
    or id, so the same operations from the same start end in the same state. It holds at most
    `max_bytes` of them (vectors included); past that it drops them all and is `overflowed`:
    the build is abandoned, the live shard having every write anyway."""

    def __init__(self, max_bytes: int) -> None:
        self.operations: list[qe.UpdateOperation] = []
        self.max_bytes = max_bytes
        self.bytes = 0
        self.overflowed = False

    def __len__(self) -> int:
        return len(self.operations)

    def add(self, operation: qe.UpdateOperation, size: int) -> bool:
        """Keep `operation` (about `size` bytes; under the write lock); False once over the cap."""
        if self.overflowed:
            return False
        self.bytes += size
        if self.bytes > self.max_bytes:
            self.overflowed = True
            self.operations = []  # a replay running meanwhile holds its own slice
            return False
        self.operations.append(operation)
        return True

    def replay(self, shard: qe.EdgeShard, start: int) -> int:
        """Apply the operations from `start` on to `shard` (each call holds the GIL, as the
        write did); the number replayed up to, for the next call's `start`."""
        operations = self.operations  # appends come from writers, under their lock
        end = len(operations)
        for operation in operations[start:end]:
            shard.update(operation)
        return end


class BuildChild:
    """The build's child process, at the lowest CPU priority; `stop` ends it and refuses new
    ones (the index is closing, which would otherwise wait for a build of minutes)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._child: subprocess.Popen[str] | None = None
        self.stopped = False

    def run(
        self,
        work: Path,
        dim: int,
        kind: str,
        threshold_kb: int,
        m: int,
        ef_construct: int,
        *,
        started: Callable[[], None] | None = None,
    ) -> tuple[int, str]:
        """Build graphs in `work` (see `edge_config.build_main`), calling `started` once the
        child runs: its exit code and stderr."""
        args = [str(work), str(dim), kind, str(threshold_kb), str(m), str(ef_construct)]
        with self._lock:
            if self.stopped:
                return -1, ""
            child = subprocess.Popen(
                [sys.executable, "-c", _BUILD, *args],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            self._child = child
        try:
            if started is not None:
                started()
            _, stderr = child.communicate()
        except BaseException:
            child.kill()
            child.communicate()
            raise
        finally:
            with self._lock:
                self._child = None
        return child.returncode, stderr

    def stop(self) -> None:
        with self._lock:
            self.stopped = True
            if self._child is not None:
                self._child.kill()

    def cancel(self) -> None:
        """End the running child, if any (its build is abandoned); later builds may run."""
        with self._lock:
            if self._child is not None:
                self._child.kill()


class HnswBuilds:
    """`EdgeIndex`'s HNSW builds: copy, child process, catch-up, swap. A base class: the shard,
    its locks and counts are `EdgeIndex`'s, set by its constructor."""

    path: Path
    dim: int
    float16: bool
    generation: int
    build_hook: Callable[[str], None] | None
    _shard: qe.EdgeShard
    _shard_lock: threading.Lock
    _write_lock: threading.Lock
    _build_lock: threading.Lock
    _journal: Journal | None
    journal_max_bytes: int
    _builder: BuildChild
    _collections: set[str] | None
    _extra: int

    @property
    def building(self) -> bool:
        """Whether a build runs (its copy will replace the shard, with every write since)."""
        return self._journal is not None

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """`_shard_lock` for a write: the generation moves on whatever the write did."""
        with self._shard_lock:
            try:
                yield
            finally:
                self.generation += 1

    def hnsw_segments(self) -> int:
        """Segments whose dense vectors have an HNSW graph (the engine's info does not say)."""
        return sum(1 for _ in self.path.glob(f"segments/*/vector_index-{DENSE}/graph.bin"))

    def build_hnsw(
        self,
        threshold_kb: int = HNSW_THRESHOLD_KB,
        *,
        m: int = HNSW_M,
        ef_construct: int = HNSW_EF_CONSTRUCT,
    ) -> dict[str, float]:
        """Give large segments an HNSW graph without stopping search or writes: copy the
        shard, build on the copy in a child process, re-apply the writes made meanwhile, swap
        it in by renaming. Blocking, one build at a time."""
        with self._build_lock:
            work = building(self.path)
            try:
                return self._build(work, threshold_kb, m, ef_construct)
            finally:
                with self._write_lock:
                    self._journal = None
                shutil.rmtree(work, ignore_errors=True)

    def _build(self, work: Path, threshold_kb: int, m: int, ef_construct: int) -> dict[str, float]:
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        with self._write_lock:  # the copy is the journal's starting point
            with self._shard_lock:
                self._shard.flush()
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(self.path, work)
            journal = self._journal = Journal(self.journal_max_bytes)
        timings["copy_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        kind = "f16" if self.float16 else "f32"
        hook = self.build_hook
        returncode, stderr = self._builder.run(
            work,
            self.dim,
            kind,
            threshold_kb,
            m,
            ef_construct,
            started=None if hook is None else lambda: hook("building"),
        )
        _check(journal)
        if returncode != 0:
            if self._builder.stopped:
                raise IndexUnavailableError("HNSW build stopped: the index is closing")
            raise IndexUnavailableError(f"HNSW build failed: {stderr.strip()[-500:]}")
        timings["build_s"] = time.perf_counter() - t0
        shutil.rmtree(replaced(self.path), ignore_errors=True)  # a crash's, after the renames
        # The copy catches up while writes go on (each engine call holds the GIL, so the
        # event loop stands still for it: the steps are timed apart), then takes the last
        # writes under the lock and is closed before the renames, so that a crash anywhere
        # leaves a complete shard: the old one until the second rename, the new one after.
        t0 = time.perf_counter()
        config = edge_config(self.dim, float16=self.float16)
        built = load(work, config)
        try:
            done = journal.replay(built, 0)
            _check(journal)
        except BaseException:
            built.close()
            raise
        timings["catch_up_s"] = time.perf_counter() - t0
        if self.build_hook is not None:
            self.build_hook("caught_up")
        with self._write_lock:
            t0 = time.perf_counter()
            try:
                _check(journal)
                journal.replay(built, done)
                built.flush()
            finally:
                built.close()
            timings["replayed"] = len(journal)
            with self._writing():
                if self._builder.stopped:  # `close` is next: the old shard stays
                    raise IndexUnavailableError("HNSW build stopped: the index is closing")
                t1 = time.perf_counter()
                self._shard.close()
                timings["close_s"] = time.perf_counter() - t1
                os.rename(self.path, replaced(self.path))
                os.rename(work, self.path)
                t1 = time.perf_counter()
                self._shard = load(self.path, config)
                timings["open_s"] = time.perf_counter() - t1
                self._journal = None
                self._collections = collections_of(self._shard)
                self._extra = read_extra(self.path)
            # How long writes waited for the swap (the last replay, the closes and the open).
            timings["writes_wait_s"] = time.perf_counter() - t0
        shutil.rmtree(replaced(self.path), ignore_errors=True)
        timings["hnsw_segments"] = self.hnsw_segments()
        return timings

    def stop_building(self) -> None:
        """End a running build's child (its copy is removed, the shard stays as it was) and
        refuse new builds: the index is about to close, which would otherwise wait for it."""
        with self._shard_lock:  # a swap checks `stopped` under it, before closing the shard
            self._builder.stop()

    def vector_kb(self, points: int) -> int:
        """KB of stored dense vectors that `points` points take (build thresholds are in KB)."""
        return points * self.dim * (2 if self.float16 else 4) // 1024

    def exact_points(self) -> int:
        """Points whose dense vectors no graph holds, so every dense search scans them (new
        points since the last build, or all after a vacuum dropped the graphs); deleted points
        that a graph still holds are not subtracted until a vacuum."""
        with self._shard_lock:
            points = int(self._shard.info().points_count)
        # `_extra` is the graphs' dense vectors, counted when nothing was stale
        # (`EdgeIndex.stale_points`).
        return max(0, points - self._extra)


def _check(journal: Journal) -> None:
    if journal.overflowed:
        raise BuildAbandonedError(
            f"HNSW build abandoned: the writes made meanwhile outgrew its journal "
            f"({journal.max_bytes / 2**20:g} MB, STREAM_RAG_HNSW_JOURNAL_MB); the index has "
            "every write and keeps its segments"
        )


def collections_of(shard: qe.EdgeShard) -> set[str] | None:
    """The collections that have points; None (always filter) past a thousand of them."""
    request = qe.FacetRequest(key="collection", limit=MAX_TRACKED, exact=True)
    values = {str(hit.value) for hit in shard.facet(request).hits}
    return values if len(values) < MAX_TRACKED else None
