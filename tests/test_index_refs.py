"""Dense hits resolved by point id (index/refs.py)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from stream_rag.index import edge
from stream_rag.index.base import IndexHit, IndexPoint
from stream_rag.index.bm25 import SparseVector
from stream_rag.index.edge import EdgeIndex
from stream_rag.index.refs import HitRefs

from .test_index_hnsw import DIM, points


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


def test_filled_ahead_no_search_fetches_and_the_limit_holds() -> None:
    records = stored(*[("d", n) for n in range(4)])
    ids = list(records)
    refs = HitRefs(limit=3)

    def fetch(wanted: list[Any]) -> list[Record]:
        raise AssertionError(f"fetched {wanted}")

    assert not refs.fill(records.values())  # the fourth is past the limit
    assert len(refs) == 3
    hits = refs.hits([Found(i, 0.5) for i in ids[:3]], fetch)
    assert [h.chunk_id for h in hits] == ["d:v1:0", "d:v1:1", "d:v1:2"]
    refs.put(str(uuid.uuid4()), "e:v1:0", "e", 1)  # full: not kept
    assert len(refs) == 3


def test_an_index_knows_every_point_after_warm_and_each_new_one_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(21)
    index = EdgeIndex.open(tmp_path / "edge", DIM)
    try:
        index.upsert(points(0, 300, rng))
    finally:
        index.close()
    index = EdgeIndex.open(tmp_path / "edge", DIM)  # a server starting on it
    try:
        index.warm()
        assert len(index._refs) == 300
        index.upsert(points(300, 20, rng))
        assert len(index._refs) == 320

        def no_payloads(point_ids: list[Any]) -> list[Any]:
            raise AssertionError("a dense search read payloads")

        monkeypatch.setattr(index, "_payloads", no_payloads)
        for p in points(0, 320, np.random.default_rng(21))[::40]:
            assert p.dense is not None
            assert index.search_dense(p.dense, "default", 1)[0].chunk_id == p.chunk_id
        assert len(index.search_dense(np.ones(DIM, np.float32), "default", 320)) == 320
    finally:
        index.close()


def test_a_large_index_is_not_read_ahead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(edge, "PREFILL_MAX", 100)
    index = EdgeIndex.open(tmp_path / "edge", DIM)
    try:
        index.upsert(points(0, 150, np.random.default_rng(22)))
    finally:
        index.close()
    index = EdgeIndex.open(tmp_path / "edge", DIM)
    try:
        index.warm()
        assert len(index._refs) == 0  # filled as searches find points instead
        assert len(index.search_dense(np.ones(DIM, np.float32), "default", 10)) == 10
        assert len(index._refs) == 10
    finally:
        index.close()
