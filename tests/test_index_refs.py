"""Dense hits resolved by point id (index/refs.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stream_rag.index.base import IndexHit, IndexPoint
from stream_rag.index.bm25 import SparseVector
from stream_rag.index.refs import HitRefs


@dataclass
class Found:
    id: Any
    score: float


@dataclass
class Record:
    id: Any
    payload: dict[str, Any] | None


def stored(*chunks: tuple[str, int]) -> dict[str, Record]:
    """Point id -> its record, for chunks (doc id, ordinal) of version 1."""
    records = {}
    for doc_id, ordinal in chunks:
        point = IndexPoint(f"{doc_id}:v1:{ordinal}", doc_id, 1, "default", SparseVector((), ()))
        records[point.point_id] = Record(point.point_id, point.payload())
    return records


def test_hits_are_resolved_once_and_keep_the_engine_order() -> None:
    records = stored(("a", 0), ("a", 1), ("b", 0))
    fetched: list[list[Any]] = []

    def fetch(ids: list[Any]) -> list[Record]:
        fetched.append(ids)
        return [records[i] for i in ids if i in records]

    refs = HitRefs()
    ids = list(records)
    first = refs.hits([Found(ids[2], 0.9), Found(ids[0], 0.5)], fetch)
    assert first == [IndexHit("b:v1:0", "b", 1, 0.9), IndexHit("a:v1:0", "a", 1, 0.5)]
    again = refs.hits([Found(ids[0], 0.7), Found(ids[1], 0.6), Found(ids[2], 0.1)], fetch)
    assert [h.chunk_id for h in again] == ["a:v1:0", "a:v1:1", "b:v1:0"]
    assert [h.score for h in again] == [0.7, 0.6, 0.1]
    assert fetched == [[ids[2], ids[0]], [ids[1]]]  # only what was never seen


def test_a_point_deleted_before_its_payload_is_read_is_left_out() -> None:
    records = stored(("a", 0), ("b", 0))
    gone, kept = list(records)
    refs = HitRefs()
    hits = refs.hits([Found(gone, 0.9), Found(kept, 0.8)], lambda ids: [records[kept]])
    assert hits == [IndexHit("b:v1:0", "b", 1, 0.8)]
    assert len(refs) == 1


def test_past_its_limit_it_starts_over() -> None:
    records = stored(*[("d", n) for n in range(5)])
    ids = list(records)
    refs = HitRefs(limit=3)

    def fetch(wanted: list[Any]) -> list[Record]:
        return [records[i] for i in wanted]

    assert len(refs.hits([Found(i, 0.5) for i in ids[:3]], fetch)) == 3
    hits = refs.hits([Found(i, 0.5) for i in ids[2:]], fetch)
    assert [h.chunk_id for h in hits] == ["d:v1:2", "d:v1:3", "d:v1:4"]
    assert len(refs) == 3  # started over with this search's points
