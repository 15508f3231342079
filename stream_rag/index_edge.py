"""Qdrant Edge: the embedded, in-process index (`qdrant-edge-py`).

Engine facts this adapter relies on (checked with qdrant-edge-py 0.9.0): new points are
searchable at once (an appendable segment, searched exactly); one `update()` is
all-or-nothing, also across a SIGKILL (WAL replay); the WAL directory is locked, so a second
process on the same directory fails to open it; calls hold the GIL, so upserts go in small
batches to keep the event loop responsive.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import qdrant_edge as qe

from .bm25 import SparseVector
from .index import (
    DENSE,
    SPARSE,
    UPSERT_BATCH,
    IndexHit,
    IndexPoint,
    IndexUnavailableError,
    PointRef,
    hit_from_payload,
    ref_from_payload,
)

# Segments never grow an HNSW graph: search stays exact and optimize() only vacuums.
_NO_HNSW_THRESHOLD_KB = 1_000_000_000
_PAYLOAD = qe.PayloadSelector.Include(["doc_id", "version", "chunk_id"])


def _match(key: str, value: str | int) -> qe.FieldCondition:
    return qe.FieldCondition(key=key, match=qe.MatchValue(value=value))


class EdgeIndex:
    def __init__(self, shard: qe.EdgeShard, path: Path, dim: int) -> None:
        self._shard = shard
        self.path = path
        self.dim = dim
        self.name = f"qdrant-edge:{path}"

    @classmethod
    def open(cls, path: Path, dim: int, *, float16: bool = True) -> EdgeIndex:
        """Open or create the shard at `path`. Dense vectors are stored as float16 by default:
        exact search reads half the memory (see docs/decisions.md)."""
        datatype = qe.VectorStorageDatatype.Float16 if float16 else None
        config = qe.EdgeConfig(
            vectors={
                DENSE: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine, datatype=datatype)
            },
            sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
            # Any deleted point makes a segment worth vacuuming when `vacuum()` runs: deleted
            # points count in IDF until then (there is no background optimiser).
            optimizers=qe.EdgeOptimizersConfig(
                indexing_threshold=_NO_HNSW_THRESHOLD_KB,
                deleted_threshold=1e-9,
                vacuum_min_vector_number=1,
            ),
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            if (path / "edge_config.json").exists():
                shard = qe.EdgeShard.load(os.fspath(path), config)
            else:
                shard = qe.EdgeShard.create(os.fspath(path), config)
        except Exception as exc:
            if "WouldBlock" in str(exc):
                raise IndexUnavailableError(
                    f"the index at {path} is in use by another process (is `stream-rag serve` "
                    "running on this data directory? upload through its API, or use "
                    "`stream-rag ingest --url`)"
                ) from None
            raise IndexUnavailableError(f"cannot open the index at {path}: {exc}") from None
        existing = set(shard.info().payload_schema)
        fields: list[tuple[str, Any]] = [
            ("collection", qe.KeywordIndexParams(enable_hnsw=False)),
            ("doc_id", qe.PayloadSchemaType.Keyword),
            ("chunk_id", qe.PayloadSchemaType.Keyword),
            ("version", qe.PayloadSchemaType.Integer),
        ]
        for name, schema in fields:
            if name not in existing:
                shard.update(qe.UpdateOperation.create_field_index(name, schema))
        return cls(shard, path, dim)

    def upsert(self, points: Sequence[IndexPoint]) -> None:
        for start in range(0, len(points), UPSERT_BATCH):
            batch = [self._point(p) for p in points[start : start + UPSERT_BATCH]]
            self._shard.update(qe.UpdateOperation.upsert_points(batch))

    def _point(self, point: IndexPoint) -> qe.Point:
        vectors: dict[str, Any] = {}
        if point.dense is not None:
            if point.dense.shape != (self.dim,):
                raise IndexUnavailableError(
                    f"vector of {point.dense.shape} for an index of {self.dim}"
                )
            vectors[DENSE] = np.asarray(point.dense, dtype=np.float32)
        if point.sparse:
            vectors[SPARSE] = qe.SparseVector(
                indices=list(point.sparse.indices), values=list(point.sparse.values)
            )
        return qe.Point(id=point.point_id, vector=vectors, payload=point.payload())

    def delete_versions(self, doc_id: str, keep: int | None = None) -> None:
        must_not: list[Any] | None = [_match("version", keep)] if keep is not None else None
        selector = qe.Filter(must=[_match("doc_id", doc_id)], must_not=must_not)
        self._shard.update(qe.UpdateOperation.delete_points_by_filter(selector))

    def search_dense(
        self, vector: npt.NDArray[np.float32], collection: str, limit: int
    ) -> list[IndexHit]:
        request = qe.QueryRequest(
            limit=limit,
            query=qe.Query.Nearest(vector.tolist(), using=DENSE),
            filter=qe.Filter(must=[_match("collection", collection)]),
            with_payload=_PAYLOAD,
        )
        return [hit_from_payload(p.payload, p.score) for p in self._shard.query(request)]

    def search_sparse(self, vector: SparseVector, collection: str, limit: int) -> list[IndexHit]:
        if not vector:
            return []
        request = qe.QueryRequest(
            limit=limit,
            query=qe.Query.Nearest(
                qe.SparseVector(indices=list(vector.indices), values=list(vector.values)),
                using=SPARSE,
            ),
            filter=qe.Filter(must=[_match("collection", collection)]),
            with_payload=_PAYLOAD,
        )
        return [hit_from_payload(p.payload, p.score) for p in self._shard.query(request)]

    def count(self) -> int:
        return int(self._shard.count(qe.CountRequest(exact=True)))

    def points(self) -> Iterator[PointRef]:
        offset: Any = None
        while True:
            request = qe.ScrollRequest(offset=offset, limit=1000, with_payload=True)
            records, offset = self._shard.scroll(request)
            for record in records:
                yield ref_from_payload(record.id, record.payload)
            if offset is None or not records:
                return

    def delete_points(self, point_ids: Sequence[str]) -> None:
        ids = list(point_ids)
        for start in range(0, len(ids), UPSERT_BATCH):
            batch: list[Any] = ids[start : start + UPSERT_BATCH]
            self._shard.update(qe.UpdateOperation.delete_points(batch))

    def stale_points(self) -> int:
        # Stored vectors still include deleted points until a vacuum rewrites the segment.
        info = self._shard.info()
        return max(0, int(info.indexed_vectors_count) - int(info.points_count))

    def vacuum(self) -> None:
        self._shard.optimize()

    def optimize(self) -> bool:
        """Vacuum deleted points (refreshing IDF statistics) and merge segments."""
        return bool(self._shard.optimize())

    def close(self) -> None:
        self._shard.flush()
        self._shard.close()
