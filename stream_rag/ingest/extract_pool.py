"""Extraction in worker processes with per-document limits.

Parsers (pypdf, python-docx, the HTML parser, blingfire) never run in the server's process:
a hostile file can burn CPU, memory and wall time only up to its limits, inside a worker
that is killed and replaced when it crosses one, while the event loop and API threads keep
answering. Workers start from a `forkserver` (never a fork of the threaded server) and are
reused between documents.

Limits: CPU seconds per document (`RLIMIT_CPU`, raised by that much before each job),
address space (`RLIMIT_AS`), wall time (the parent kills the worker), and in `extract.py`
unzipped size, zip ratio, PDF pages and characters; chunks per document are checked here.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import queue
import resource
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Protocol

from ..errors import (
    ClientGoneError,
    ExtractionError,
    LimitExceededError,
    ShuttingDownError,
    StreamRagError,
)
from .chunking import chunk_spans, heading_paths
from .extract import ExtractLimits, extract
from .layout import Place

log = logging.getLogger("stream_rag")
MIB = 1024 * 1024
# A worker whose resident memory grew past this after a document is replaced, so one big
# document does not leave a bloated process behind for the next ones.
_RECYCLE_RSS = 512 * MIB
_NICE = 10
# How long a new worker may take to start. Its start-up is not the document's: the wall
# limit counts from when a started worker has the job (a busy machine can take a while to
# fork and renice a fresh one, and that must not fail a small document).
_STARTUP_S = 60.0


@dataclass(frozen=True, slots=True)
class Extracted:
    text: str
    media_type: str
    spans: list[tuple[int, int]]
    # Per span: its bytes in the original file and its PDF pages (empty: none known).
    places: list[Place] = field(default_factory=list)
    dated: str | None = None  # when the document says it was last updated (ingest/dates.py)


@dataclass(frozen=True, slots=True)
class Limits:
    """Everything a document may cost; built from `Settings` (see config.py)."""

    content: ExtractLimits = field(default_factory=ExtractLimits)
    max_chunks: int = 10_000
    # Chunks a KB of the uploaded file may give, past the first `min_chunks`.
    max_chunks_per_kb: float = 10.0
    min_chunks: int = 64
    cpu_s: int = 60
    memory_mb: int = 1024
    wall_s: float = 120.0


# Whether the upload is still wanted (its client still there); checked while it waits.
Wanted = Callable[[], bool]
# How often a wait for a worker's answer looks at `Wanted`.
_WANTED_POLL_S = 0.25


class Extractor(Protocol):
    def extract(
        self,
        path: Path,
        media_type: str,
        chunk_chars: int,
        overlap_chars: int,
        *,
        wanted: Wanted | None = None,
    ) -> Extracted: ...

    def close(self) -> None: ...


def extract_document(
    path: Path, media_type: str, chunk_chars: int, overlap_chars: int, limits: Limits
) -> Extracted:
    """Text and chunk spans of one file, with the content limits (not the process ones)."""
    extraction = extract(path, media_type, limits.content)
    text, served = extraction.text, extraction.media_type
    pages = [offset for offset, _ in extraction.pages]
    spans = chunk_spans(text, chunk_chars, overlap_chars, pages)
    if len(spans) > limits.max_chunks:
        raise LimitExceededError(
            f"the document would give {len(spans):,} chunks, more than {limits.max_chunks:,} "
            "(STREAM_RAG_MAX_CHUNKS_PER_DOC); split it into smaller files",
            "STREAM_RAG_MAX_CHUNKS_PER_DOC",
        )
    # A few KB that unfold into thousands of chunks (one content stream drawn on every page)
    # cost minutes of indexing CPU: chunks are bounded by the bytes uploaded too.
    size_kb = path.stat().st_size / 1024
    ceiling = max(limits.min_chunks, int(limits.max_chunks_per_kb * size_kb))
    if len(spans) > ceiling:
        raise LimitExceededError(
            f"the document would give {len(spans):,} chunks from {size_kb:,.0f} KB, more than "
            f"{limits.max_chunks_per_kb:g} a KB (STREAM_RAG_MAX_CHUNKS_PER_KB)",
            "STREAM_RAG_MAX_CHUNKS_PER_KB",
        )
    paths = heading_paths(text, [s for s, _ in spans])
    places = [
        replace(place, headings=path)
        for place, path in zip(extraction.places(spans), paths, strict=True)
    ]
    return Extracted(text, served, spans, places, extraction.dated)


class InProcessExtractor:
    """Extraction in the calling thread, with the content limits only (tests, tools)."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()

    def extract(
        self,
        path: Path,
        media_type: str,
        chunk_chars: int,
        overlap_chars: int,
        *,
        wanted: Wanted | None = None,
    ) -> Extracted:
        return extract_document(path, media_type, chunk_chars, overlap_chars, self.limits)

    def close(self) -> None:
        return None


class ExtractionPool:
    """At most `workers` documents extract at once; other callers wait for a free worker.

    Blocking and thread-safe: call `extract` from worker threads."""

    def __init__(self, limits: Limits | None = None, workers: int = 2) -> None:
        self.limits = limits or Limits()
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(["stream_rag.ingest.extract_pool", "pypdf", "docx"])
        self._idle: queue.Queue[_Worker | None] = queue.Queue()
        for _ in range(workers):
            self._idle.put(None)  # a slot; its process starts on first use
        self._lock = threading.Lock()
        self._all: set[_Worker] = set()
        self._closed = False

    def extract(
        self,
        path: Path,
        media_type: str,
        chunk_chars: int,
        overlap_chars: int,
        *,
        wanted: Wanted | None = None,
    ) -> Extracted:
        worker = self._idle.get()
        try:
            if worker is None or not worker.alive():
                worker = self._start(worker)
            job = (os.fspath(path), media_type, chunk_chars, overlap_chars)
            result = worker.run(job, wanted)
        except BaseException:
            if worker is not None:
                self._retire(worker)
            self._idle.put(None)
            raise
        if result.recycle:
            self._retire(worker)
            self._idle.put(None)
        else:
            self._idle.put(worker)
        return result.extracted

    def close(self) -> None:
        with self._lock:
            self._closed = True
            workers = list(self._all)
        for worker in workers:
            self._retire(worker)

    def _start(self, old: _Worker | None) -> _Worker:
        if old is not None:
            self._retire(old)
        with self._lock:
            if self._closed:
                raise ShuttingDownError("the server is shutting down")
            worker = _Worker(self._context, self.limits)
            self._all.add(worker)
            return worker

    def _retire(self, worker: _Worker) -> None:
        worker.stop()
        with self._lock:
            self._all.discard(worker)


@dataclass(frozen=True, slots=True)
class _Result:
    extracted: Extracted
    recycle: bool


class _Worker:
    def __init__(self, context: Any, limits: Limits) -> None:
        self.limits = limits
        self._conn, child = context.Pipe()
        self.process = context.Process(
            target=_serve, args=(child, limits), name="stream-rag-extract", daemon=True
        )
        self.process.start()
        child.close()
        self._started = False

    def alive(self) -> bool:
        return bool(self.process.is_alive())

    def run(self, job: tuple[str, str, int, int], wanted: Wanted | None = None) -> _Result:
        try:
            if not self._started:
                # The worker says so once it is set up (limits on, reniced).
                if not self._conn.poll(_STARTUP_S):
                    raise StreamRagError(f"the extraction worker did not start in {_STARTUP_S:g} s")
                self._conn.recv()
                self._started = True
            self._conn.send(job)
            self._wait(wanted)
            kind, payload, recycle = self._conn.recv()
        except (EOFError, OSError):
            raise self._death() from None
        if kind == "error":
            assert isinstance(payload, StreamRagError)
            raise payload
        assert isinstance(payload, Extracted)
        return _Result(payload, bool(recycle))

    def _wait(self, wanted: Wanted | None) -> None:
        """Until the worker answers; past the wall limit, or once the upload is no longer
        wanted, raise (the caller then kills the worker: its CPU goes to other uploads)."""
        deadline = time.monotonic() + self.limits.wall_s
        while True:
            left = deadline - time.monotonic()
            if self._conn.poll(max(0.0, min(left, _WANTED_POLL_S if wanted else left))):
                return
            if wanted is not None and not wanted():
                raise ClientGoneError("the client disconnected while its upload was read")
            if time.monotonic() >= deadline:
                raise LimitExceededError(
                    f"extraction took longer than {self.limits.wall_s:g} s "
                    "(STREAM_RAG_EXTRACT_WALL_S)",
                    "STREAM_RAG_EXTRACT_WALL_S",
                )

    def _death(self) -> StreamRagError:
        """The error for a worker that died mid-document (always a 4xx: the file did it)."""
        self.process.join(timeout=5)
        code = self.process.exitcode
        if code == -signal.SIGXCPU:
            return LimitExceededError(
                f"extraction used more than {self.limits.cpu_s} CPU seconds "
                "(STREAM_RAG_EXTRACT_CPU_S)",
                "STREAM_RAG_EXTRACT_CPU_S",
            )
        return LimitExceededError(
            f"the extractor died (exit {code}): the document needs more than "
            f"{self.limits.memory_mb} MB (STREAM_RAG_EXTRACT_MEMORY_MB) or crashed its parser",
            "STREAM_RAG_EXTRACT_MEMORY_MB",
        )

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=5)
        self._conn.close()


def _serve(conn: Connection, limits: Limits) -> None:
    """The worker's loop: one job at a time; limits are set here, in the worker only."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server decides when workers stop
    _die_with_parent()
    # Parsing waits; answers should not: under contention the server gets the CPU first.
    os.nice(_NICE)
    memory = limits.memory_mb * MIB
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    conn.send(("ready", None, False))
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        path, media_type, chunk_chars, overlap_chars = job
        used = resource.getrusage(resource.RUSAGE_SELF)
        spent = int(used.ru_utime + used.ru_stime) + 1
        # RLIMIT_CPU counts the whole process life: allow this document `cpu_s` more. Only
        # the soft limit moves (a hard one could never be raised again); its SIGXCPU has no
        # handler here, so the kernel ends the worker even inside a parser's C code.
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        resource.setrlimit(resource.RLIMIT_CPU, (spent + limits.cpu_s, hard))
        try:
            extracted = extract_document(Path(path), media_type, chunk_chars, overlap_chars, limits)
            reply: tuple[str, object, bool] = ("ok", extracted, _rss() > _RECYCLE_RSS)
        except StreamRagError as exc:
            reply = ("error", exc, _rss() > _RECYCLE_RSS)
        except MemoryError:
            reply = ("error", _memory_error(limits), True)
        except Exception as exc:  # a parser's own error on a malformed file
            reply = ("error", ExtractionError(f"the file cannot be read ({exc!r})"), True)
        conn.send(reply)
        if reply[2]:
            return


def _die_with_parent() -> None:
    """Linux: SIGKILL this worker when its parent (the forkserver, which exits with the
    server) dies, so a kill -9 of the server leaves no parser running on."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _memory_error(limits: Limits) -> LimitExceededError:
    return LimitExceededError(
        f"extraction needed more than {limits.memory_mb} MB (STREAM_RAG_EXTRACT_MEMORY_MB)",
        "STREAM_RAG_EXTRACT_MEMORY_MB",
    )


def _rss() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0
