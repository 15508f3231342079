"""What a write sends Qdrant Edge: an `IndexPoint` as the engine's point, a filter condition,
and about how many bytes an operation holds (a running HNSW build journals them, edge.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import qdrant_edge as qe

from .base import DENSE, SPARSE, IndexPoint, IndexUnavailableError

__all__ = ["OPERATION_BYTES", "engine_point", "match", "point_bytes"]

# A journaled operation's (or point's) bytes besides its vectors and strings.
OPERATION_BYTES = 200


def match(key: str, value: str | int) -> qe.FieldCondition:
    return qe.FieldCondition(key=key, match=qe.MatchValue(value=value))


def point_bytes(point: IndexPoint, dim: int) -> int:
    """About what a point takes in an upsert operation: vectors, sparse terms, payload."""
    dense = 4 * dim if point.dense is not None else 0
    text = len(point.chunk_id) + len(point.doc_id) + len(point.collection)
    return OPERATION_BYTES + dense + 8 * len(point.sparse.indices) + 2 * text


def engine_point(point: IndexPoint, point_id: str, dim: int) -> qe.Point:
    vectors: dict[str, Any] = {}
    if point.dense is not None:
        if point.dense.shape != (dim,):
            raise IndexUnavailableError(f"vector of {point.dense.shape} for an index of {dim}")
        vectors[DENSE] = np.asarray(point.dense, dtype=np.float32)
    if point.sparse:
        vectors[SPARSE] = qe.SparseVector(
            indices=list(point.sparse.indices), values=list(point.sparse.values)
        )
    return qe.Point(id=point_id, vector=vectors, payload=point.payload())
