"""What `EdgeIndex.build_hnsw` needs besides the shard: the child process that builds graphs on
a copy, and the journal of the writes made meanwhile, re-applied to the copy before the swap."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import qdrant_edge as qe

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
    or id, so the same operations from the same start end in the same state."""

    def __init__(self) -> None:
        self.operations: list[qe.UpdateOperation] = []

    def __len__(self) -> int:
        return len(self.operations)

    def replay(self, shard: qe.EdgeShard, start: int) -> int:
        """Apply the operations from `start` on to `shard` (each call holds the GIL, as the
        write did); the number replayed up to, for the next call's `start`."""
        end = len(self.operations)  # appends come from writers, under their lock
        for operation in self.operations[start:end]:
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
