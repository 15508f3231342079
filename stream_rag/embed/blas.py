"""Hold numpy's OpenBLAS at one thread while MiniLM runs (process-wide, reference-counted)."""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Final

import numpy as np

__all__ = ["SINGLE_THREADED_BLAS", "default_num_threads"]

# numpy's OpenBLAS splits every GEMM over its own thread pool. The forward pass
# issues many small GEMMs (one per sequence and head in attention) with
# single-threaded numpy work in between, so those threads mostly spin and
# synchronise; on a loaded machine each hand-off can cost a scheduler slice.
# Running whole batches on our own threads with OpenBLAS at one thread is
# faster and far steadier. OpenBLAS has no per-call setting, so the limit is
# process-wide while any embed_batch call runs (reference-counted, restored
# afterwards). Best effort: without a loaded OpenBLAS it is a no-op.
_SET_NAMES: Final = (
    "scipy_openblas_set_num_threads64_",
    "scipy_openblas_set_num_threads",
    "openblas_set_num_threads64_",
    "openblas_set_num_threads",
)


@dataclass(frozen=True)
class _BlasControl:
    get: Callable[[], int]
    set: Callable[[int], None]


def _loaded_openblas_paths() -> list[str]:
    paths: list[str] = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                path = line.rsplit(" ", 1)[-1].strip()
                if "openblas" in os.path.basename(path).lower() and path not in paths:
                    paths.append(path)
    except OSError:
        pass
    if not paths:  # not Linux: look where numpy wheels bundle OpenBLAS
        np_dir = Path(np.__file__).resolve().parent
        for folder in (np_dir.parent / "numpy.libs", np_dir / ".dylibs"):
            if folder.is_dir():
                paths.extend(str(p) for p in folder.iterdir() if "openblas" in p.name.lower())
    return paths


def _find_blas_controls() -> list[_BlasControl]:
    controls: list[_BlasControl] = []
    mode = getattr(os, "RTLD_NOLOAD", 0) | getattr(os, "RTLD_NOW", 0)
    for path in _loaded_openblas_paths():
        try:
            lib = ctypes.CDLL(path, mode=mode)  # RTLD_NOLOAD: attach, never load
        except OSError:
            continue
        for set_name in _SET_NAMES:
            get_name = set_name.replace("_set_", "_get_")
            if hasattr(lib, set_name) and hasattr(lib, get_name):
                setter = getattr(lib, set_name)
                getter = getattr(lib, get_name)
                setter.argtypes = [ctypes.c_int]
                setter.restype = None
                getter.argtypes = []
                getter.restype = ctypes.c_int
                controls.append(_BlasControl(get=getter, set=setter))
                break
    return controls


class _SingleThreadedBlas:
    """Reference-counted, process-wide 'OpenBLAS uses one thread' section."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._saved: list[tuple[_BlasControl, int]] = []
        self._controls: list[_BlasControl] | None = None

    def __enter__(self) -> None:
        with self._lock:
            if self._depth == 0:
                if self._controls is None:
                    self._controls = _find_blas_controls()
                self._saved = [(c, c.get()) for c in self._controls]
                for c, _ in self._saved:
                    c.set(1)
            self._depth += 1

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0:
                for c, n in self._saved:
                    c.set(n)
                self._saved = []


SINGLE_THREADED_BLAS: Final = _SingleThreadedBlas()


def default_num_threads() -> int:
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, 8))
