"""An exact in-memory copy of a small index's dense vectors: a search is one numpy
matrix-vector product instead of an engine call (docs/decisions/, "Dense search of small
collections in numpy").

The engine stays the store of record: `EdgeIndex` writes to it first and then here, under
its write lock, and loads the copy from it at start. Rows are only ever appended (a point
written again gets a new row, its old one is marked dead), so a search reads a snapshot
without holding the lock while numpy multiplies (the product releases the GIL); dead rows
are dropped by a rebuild once they are a quarter of the rows.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..embed.blas import SINGLE_THREADED_BLAS
from .base import IndexHit

F32 = npt.NDArray[np.float32]

_MIN_ROWS = 1024


@dataclass(frozen=True, slots=True)
class MirrorRow:
    """One point as the copy keeps it: ids, payload fields a hit needs, and its vector."""

    point_id: str
    chunk_id: str
    doc_id: str
    version: int
    collection: str
    vector: F32


@dataclass(frozen=True, slots=True)
class _Rows:
    """Arrays a search reads; rows below `DenseMirror._n` never change, except `alive`."""

    vectors: F32
    alive: npt.NDArray[np.bool_]
    collections: npt.NDArray[np.int32]
    hits: list[tuple[str, str, int]]  # (chunk_id, doc_id, version) by row


class DenseMirror:
    """Cosine search over a copy of the dense vectors, as the engine stores them (float16
    values when it stores float16), in float32."""

    def __init__(self, dim: int, *, float16: bool = True) -> None:
        self.dim = dim
        self.float16 = float16
        self._lock = threading.Lock()
        self._rows = _Rows(
            np.zeros((0, dim), np.float32), np.zeros(0, np.bool_), np.zeros(0, np.int32), []
        )
        self._n = 0
        self._live = 0
        self._codes: dict[str, int] = {}
        self._row_of: dict[str, int] = {}
        self._doc_rows: dict[str, set[int]] = {}

    def __len__(self) -> int:
        return self._live

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays (the ids' Python objects come on top, ~0.2 KB a point)."""
        rows = self._rows
        return int(rows.vectors.nbytes + rows.alive.nbytes + rows.collections.nbytes)

    def reserve(self, points: int) -> None:
        """Room for this many points in all (before loading them)."""
        with self._lock:
            if points > len(self._rows.alive):
                self._rebuild(points - self._live, spare=0)

    def add(self, points: Iterable[MirrorRow]) -> None:
        """Store (or replace) points; the caller holds its write lock."""
        batch = list(points)
        with self._lock:
            self._remove({p.point_id for p in batch})
            if self._n + len(batch) > len(self._rows.alive):
                self._rebuild(len(batch))
            rows = self._rows
            for p in batch:
                row = self._n
                rows.vectors[row] = self._stored(p.vector)
                rows.collections[row] = self._codes.setdefault(p.collection, len(self._codes))
                rows.hits.append((p.chunk_id, p.doc_id, p.version))
                rows.alive[row] = True
                self._row_of[p.point_id] = row
                self._doc_rows.setdefault(p.doc_id, set()).add(row)
                self._n += 1
                self._live += 1

    def delete_points(self, point_ids: Iterable[str]) -> None:
        with self._lock:
            self._remove(set(point_ids))
            self._compact()

    def delete_versions(self, doc_id: str, keep: int | None, below: int | None) -> None:
        """As `Index.delete_versions`: all of `doc_id`'s points, all but version `keep`, or
        (with `below`) those of older versions only."""
        with self._lock:
            rows = self._rows
            for row in list(self._doc_rows.get(doc_id, ())):
                version = rows.hits[row][2]
                if (keep is None or version != keep) and (below is None or version < below):
                    self._kill(row)
            self._compact()

    def search(self, vector: F32, collection: str, limit: int) -> list[IndexHit]:
        """The `limit` nearest points of `collection` by cosine, best first."""
        with self._lock:
            rows, n = self._rows, self._n
            alive = rows.alive[:n].copy()
            code = self._codes.get(collection)
            every = len(self._codes) == 1
        if code is None or n == 0 or limit <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32)
        query = query / max(float(np.linalg.norm(query)), 1e-12)
        # One BLAS thread: OpenBLAS's own pool costs more to wake than this product takes.
        with SINGLE_THREADED_BLAS:
            scores = rows.vectors[:n] @ query
        keep = alive if every else alive & (rows.collections[:n] == code)
        candidates = np.flatnonzero(keep)
        if len(candidates) > limit:
            best = np.argpartition(-scores[candidates], limit - 1)[:limit]
            candidates = candidates[best]
        order = candidates[np.argsort(-scores[candidates], kind="stable")]
        return [
            IndexHit(chunk_id, doc_id, version, float(scores[row]))
            for row in order.tolist()
            for chunk_id, doc_id, version in (rows.hits[row],)
        ]

    def _stored(self, vector: F32) -> F32:
        """The vector as the engine keeps it: unit length (cosine), float16 values if so."""
        unit = np.asarray(vector, dtype=np.float32)
        unit = unit / max(float(np.linalg.norm(unit)), 1e-12)
        if self.float16:
            unit = unit.astype(np.float16).astype(np.float32)
        return unit

    def _remove(self, point_ids: set[str]) -> None:
        for point_id in point_ids:
            row = self._row_of.get(point_id)
            if row is not None:
                self._kill(row)

    def _kill(self, row: int) -> None:
        rows = self._rows
        if not rows.alive[row]:
            return
        rows.alive[row] = False
        _, doc_id, _ = rows.hits[row]
        self._live -= 1
        doc = self._doc_rows[doc_id]
        doc.discard(row)
        if not doc:
            del self._doc_rows[doc_id]
        # Its point id may still map here: a dead row is skipped, and a rebuild drops it.

    def _compact(self) -> None:
        """Drop dead rows once they are a quarter of the rows (every search reads them)."""
        if self._n - self._live > max(_MIN_ROWS, self._n // 4):
            self._rebuild(0)

    def _rebuild(self, extra: int, *, spare: int | None = None) -> None:
        """New arrays holding the live rows and room for `extra` more (and a quarter more
        unless `spare` says): searches still reading the old ones keep them."""
        old = self._rows
        live = np.flatnonzero(old.alive[: self._n])
        need = len(live) + extra
        size = max(_MIN_ROWS, need + (need // 4 if spare is None else spare))
        rows = _Rows(
            np.zeros((size, self.dim), np.float32),
            np.zeros(size, np.bool_),
            np.zeros(size, np.int32),
            [old.hits[row] for row in live.tolist()],
        )
        rows.vectors[: len(live)] = old.vectors[live]
        rows.alive[: len(live)] = True
        rows.collections[: len(live)] = old.collections[live]
        moved = {int(row): i for i, row in enumerate(live.tolist())}
        self._row_of = {p: moved[r] for p, r in self._row_of.items() if r in moved}
        self._doc_rows = {}
        for i, (_, doc_id, _) in enumerate(rows.hits):
            self._doc_rows.setdefault(doc_id, set()).add(i)
        self._rows, self._n = rows, len(live)


def mirror_rows(records: Sequence[tuple[str, dict[str, object], F32]]) -> list[MirrorRow]:
    """Rows from stored points: (point id, payload, dense vector)."""
    out: list[MirrorRow] = []
    for point_id, payload, vector in records:
        version = payload.get("version", 0)
        out.append(
            MirrorRow(
                point_id=point_id,
                chunk_id=str(payload.get("chunk_id", "")),
                doc_id=str(payload.get("doc_id", "")),
                version=int(version) if isinstance(version, int | float | str) else 0,
                collection=str(payload.get("collection", "")),
                vector=vector,
            )
        )
    return out
