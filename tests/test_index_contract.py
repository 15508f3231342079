"""One contract, every index backend: Qdrant Edge (embedded) and qdrant-client (a Qdrant
server; here its local mode, and a real server too when STREAM_RAG_QDRANT_URL is set)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from qdrant_client import QdrantClient

from stream_rag.index.base import Index, IndexPoint
from stream_rag.index.bm25 import SparseVector, document_vector, query_vector
from stream_rag.index.edge import EdgeIndex
from stream_rag.index.qdrant import QdrantIndex
from stream_rag.text import tokenize

DIM = 8
Factory = Callable[..., Index]


def edge(path: Path) -> Index:
    return EdgeIndex.open(path / "edge", DIM)


def edge_mirror(path: Path) -> Index:
    """Dense search on the in-memory copy (`STREAM_RAG_DENSE_MIRROR_MAX_POINTS`)."""
    return EdgeIndex.open(path / "edge", DIM, mirror_max=20_000)


def qdrant_local(path: Path) -> Index:
    return QdrantIndex.create(QdrantClient(path=str(path / "qdrant")), "contract", DIM)


def qdrant_server(path: Path) -> Index:
    url = os.environ["STREAM_RAG_QDRANT_URL"]
    client = QdrantClient(url=url, api_key=os.environ.get("STREAM_RAG_QDRANT_API_KEY"))
    name = f"contract_{path.name}"[:60]
    if client.collection_exists(name):
        client.delete_collection(name)
    return QdrantIndex.create(client, name, DIM, payload_indexes=True)


BACKENDS = [
    pytest.param(edge, id="edge"),
    pytest.param(edge_mirror, id="edge-mirror"),
    pytest.param(qdrant_local, id="qdrant-client-local"),
    pytest.param(
        qdrant_server,
        id="qdrant-server",
        marks=pytest.mark.skipif(
            not os.environ.get("STREAM_RAG_QDRANT_URL"), reason="no STREAM_RAG_QDRANT_URL"
        ),
    ),
]


@pytest.fixture(params=BACKENDS)
def make_index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Factory]:
    opened: list[Index] = []

    def factory(path: Path = tmp_path) -> Index:
        index: Index = request.param(path)
        opened.append(index)
        return index

    yield factory
    for index in opened:
        index.close()


def unit(*values: float) -> npt.NDArray[np.float32]:
    vector = np.zeros(DIM, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


TEXTS = {
    "a": "refund window thirty days annual plans",
    "b": "sync conflicts keep both copies of a note",
    "c": "two factor authentication security keys",
    "d": "refund of gift subscriptions is not possible",
}
AVGDL = 5.0


def point(key: str, doc_id: str, version: int = 1, collection: str = "kb") -> IndexPoint:
    direction = {"a": unit(1), "b": unit(0, 1), "c": unit(0, 0, 1), "d": unit(1, 0.2)}[key]
    return IndexPoint(
        chunk_id=f"{doc_id}:v{version}:{key}",
        doc_id=doc_id,
        version=version,
        collection=collection,
        sparse=document_vector(tokenize(TEXTS[key]), AVGDL),
        dense=direction,
    )


def sparse(query: str) -> SparseVector:
    return query_vector(tokenize(query))


def test_dense_and_sparse_search_with_collection_filter(make_index: Factory) -> None:
    index = make_index()
    index.upsert([point("a", "d1"), point("b", "d2"), point("c", "d3", collection="other")])
    dense = index.search_dense(unit(1), "kb", 10)
    assert [h.chunk_id for h in dense] == ["d1:v1:a", "d2:v1:b"]
    assert dense[0].score == pytest.approx(1.0, abs=1e-5)
    assert (dense[0].doc_id, dense[0].version) == ("d1", 1)
    hits = index.search_sparse(sparse("authentication keys"), "kb", 10)
    assert hits == []
    other = index.search_sparse(sparse("authentication keys"), "other", 10)
    assert [h.chunk_id for h in other] == ["d3:v1:c"]
    assert index.search_sparse(sparse(""), "kb", 10) == []


def test_engine_applies_idf(make_index: Factory) -> None:
    index = make_index()
    index.upsert([point("a", "d1"), point("b", "d2"), point("d", "d4")])
    # "refund" is in two of three points, "gift" in one: the rarer term must weigh more.
    hits = index.search_sparse(sparse("refund gift"), "kb", 10)
    assert [h.chunk_id for h in hits] == ["d4:v1:d", "d1:v1:a"]
    only_refund = index.search_sparse(sparse("refund"), "kb", 10)
    only_gift = index.search_sparse(sparse("gift"), "kb", 10)
    assert only_gift[0].score > max(h.score for h in only_refund)


def test_delete_versions_keeps_the_live_one(make_index: Factory) -> None:
    index = make_index()
    index.upsert([point("a", "d1", 1), point("b", "d1", 2), point("c", "d2", 1)])
    assert index.count() == 3
    index.delete_versions("d1", keep=2)
    assert index.count() == 2
    assert {h.chunk_id for h in index.search_dense(unit(1), "kb", 10)} == {"d1:v2:b", "d2:v1:c"}
    index.delete_versions("d1")
    assert index.count() == 1
    assert [h.doc_id for h in index.search_dense(unit(0, 1), "kb", 10)] == ["d2"]


def test_upsert_is_idempotent(make_index: Factory) -> None:
    index = make_index()
    index.upsert([point("a", "d1")])
    index.upsert([point("a", "d1")])
    assert index.count() == 1


def test_points_without_dense_vectors_answer_bm25_only(make_index: Factory) -> None:
    index = make_index()
    plain = point("a", "d1")
    index.upsert([IndexPoint(plain.chunk_id, "d1", 1, "kb", plain.sparse, dense=None)])
    assert index.search_dense(unit(1), "kb", 10) == []
    assert [h.doc_id for h in index.search_sparse(sparse("refund"), "kb", 10)] == ["d1"]


def test_many_points_in_batches(make_index: Factory) -> None:
    index = make_index()
    rng = np.random.default_rng(3)
    points = [
        IndexPoint(
            f"d{i}:v1:0",
            f"d{i}",
            1,
            "kb",
            document_vector([f"t{i % 7}", f"u{i}"], 2.0),
            dense=(v := rng.standard_normal(DIM).astype(np.float32)) / np.linalg.norm(v),
        )
        for i in range(300)
    ]
    index.upsert(points)
    assert index.count() == 300
    assert len(index.search_sparse(sparse("t3"), "kb", 100)) == len(range(3, 300, 7))
    assert len(index.search_dense(unit(1), "kb", 50)) == 50


def test_persists_across_reopen(tmp_path: Path) -> None:
    for factory in (edge, qdrant_local):
        index = factory(tmp_path)
        index.upsert([point("a", "d1")])
        index.close()
        again = factory(tmp_path)
        try:
            assert again.count() == 1
            assert [h.doc_id for h in again.search_sparse(sparse("refund"), "kb", 5)] == ["d1"]
        finally:
            again.close()


def test_points_lists_every_point_and_delete_points_removes_some(make_index: Factory) -> None:
    index = make_index()
    index.upsert([point("a", "d1"), point("b", "d2", 2), point("c", "d3", collection="other")])
    refs = sorted(index.points(), key=lambda r: r.chunk_id)
    assert [(r.chunk_id, r.doc_id, r.version) for r in refs] == [
        ("d1:v1:a", "d1", 1),
        ("d2:v2:b", "d2", 2),
        ("d3:v1:c", "d3", 1),
    ]
    index.delete_points([refs[0].point_id, refs[2].point_id])
    assert [r.chunk_id for r in index.points()] == ["d2:v2:b"]
    assert index.count() == 1


def test_points_pages_through_large_indexes(make_index: Factory) -> None:
    index = make_index()
    many = [
        IndexPoint(f"d{i}:v1:0", f"d{i}", 1, "kb", document_vector(["x"], 1.0)) for i in range(1200)
    ]
    index.upsert(many)
    assert len({r.point_id for r in index.points()}) == 1200


def test_vacuum_makes_idf_count_live_points_only(make_index: Factory, tmp_path: Path) -> None:
    """After deletes and a vacuum, sparse scores equal those of an index that never held the
    deleted points (Edge counts deleted points in IDF until then)."""
    index = make_index(tmp_path / "used")
    index.upsert([point("a", "d1"), point("d", "d4")])
    index.upsert([point("a", f"gone{i}") for i in range(6)])
    index.delete_versions("gone0")
    for i in range(1, 6):
        index.delete_versions(f"gone{i}")
    index.vacuum()
    assert index.stale_points() == 0
    clean = make_index(tmp_path / "clean")
    clean.upsert([point("a", "d1"), point("d", "d4")])
    for query in ("refund", "annual refund", "gift"):
        got = [(h.chunk_id, round(h.score, 4)) for h in index.search_sparse(sparse(query), "kb", 5)]
        want = [
            (h.chunk_id, round(h.score, 4)) for h in clean.search_sparse(sparse(query), "kb", 5)
        ]
        assert got == want


def test_delete_versions_below_keeps_newer_ones(make_index: Factory) -> None:
    index = make_index()
    index.upsert([point("a", "d1", 1), point("b", "d1", 2), point("c", "d1", 3)])
    index.delete_versions("d1", below=2)
    assert sorted(r.version for r in index.points()) == [2, 3]
