"""The vector index: one small protocol, two Qdrant backends.

- `EdgeIndex`: Qdrant Edge, in-process, persisted under the data directory (the default).
- `QdrantIndex`: a Qdrant server or cluster through qdrant-client (also its local mode).

Each chunk is one point with a dense vector `dense` (cosine) and a sparse vector `bm25`
whose document-side BM25 weights are computed at ingest; the engine applies IDF
(`Modifier.IDF`). Payload: `collection`, `doc_id`, `version`, `chunk_id`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ..config import Settings
from ..errors import StreamRagError
from .bm25 import SparseVector

DENSE = "dense"
SPARSE = "bm25"
UPSERT_BATCH = 128


class IndexUnavailableError(StreamRagError):
    """The index cannot be opened or used (locked, wrong dimension, server down)."""

    code = "index_unavailable"
    status = 503


class BuildAbandonedError(IndexUnavailableError):
    """An HNSW build gave up: the writes made meanwhile outgrew its journal's cap."""

    code = "index_build_abandoned"


@dataclass(frozen=True, slots=True)
class IndexPoint:
    chunk_id: str
    doc_id: str
    version: int
    collection: str
    sparse: SparseVector
    dense: npt.NDArray[np.float32] | None = None

    @property
    def point_id(self) -> str:
        return point_id(self.chunk_id)

    def payload(self) -> dict[str, object]:
        return {
            "collection": self.collection,
            "doc_id": self.doc_id,
            "version": self.version,
            "chunk_id": self.chunk_id,
        }


@dataclass(frozen=True, slots=True)
class IndexHit:
    chunk_id: str
    doc_id: str
    version: int
    score: float


@dataclass(frozen=True, slots=True)
class PointRef:
    """One stored point, as `points()` lists it (for `stream-rag doctor`)."""

    point_id: str
    chunk_id: str
    doc_id: str
    version: int


class Index(Protocol):
    name: str
    dim: int

    def upsert(self, points: Sequence[IndexPoint]) -> None: ...

    def delete_versions(
        self, doc_id: str, keep: int | None = None, *, below: int | None = None
    ) -> None:
        """Remove the points of `doc_id`: all, all but version `keep`, or (with `below`) those
        of versions older than `below` only, so a newer version being indexed keeps its."""
        ...

    def search_dense(
        self, vector: npt.NDArray[np.float32], collection: str, limit: int
    ) -> list[IndexHit]: ...

    def search_sparse(
        self, vector: SparseVector, collection: str, limit: int
    ) -> list[IndexHit]: ...

    def count(self) -> int: ...

    def points(self) -> Iterator[PointRef]:
        """Every stored point, in batches (blocking; for consistency checks)."""
        ...

    def delete_points(self, point_ids: Sequence[str]) -> None: ...

    def stale_points(self) -> int:
        """Deleted points the engine still counts in its BM25 IDF statistics."""
        ...

    def vacuum(self) -> None:
        """Drop deleted points for good, so IDF statistics count live points only."""
        ...

    def close(self) -> None: ...


def point_id(chunk_id: str) -> str:
    """A deterministic UUID per chunk, so indexing the same chunk twice overwrites it."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"stream_rag:{chunk_id}"))


def hit_from_payload(payload: dict[str, object] | None, score: float) -> IndexHit:
    payload = payload or {}
    version = payload.get("version", 0)
    return IndexHit(
        chunk_id=str(payload.get("chunk_id", "")),
        doc_id=str(payload.get("doc_id", "")),
        version=int(version) if isinstance(version, int | float | str) else 0,
        score=float(score),
    )


def ref_from_payload(point_id: object, payload: dict[str, object] | None) -> PointRef:
    hit = hit_from_payload(payload, 0.0)
    return PointRef(str(point_id), hit.chunk_id, hit.doc_id, hit.version)


def open_index(settings: Settings, dim: int) -> Index:
    """The configured index: a Qdrant server if `STREAM_RAG_QDRANT_URL` is set, else Edge."""
    if settings.qdrant_url:
        from .qdrant import QdrantIndex

        return QdrantIndex.connect(settings, dim)
    from .edge import EdgeIndex

    path = settings.data_dir / "index" / f"edge-{dim}-f16"
    return EdgeIndex.open(
        path,
        dim,
        hnsw_ef=settings.hnsw_ef,
        mirror_max=settings.dense_mirror_max_points,
        journal_max_bytes=int(settings.hnsw_journal_mb * 2**20),
    )
