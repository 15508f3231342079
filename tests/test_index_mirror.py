"""The embedded index's in-memory dense copy answers as the engine does: after adds, writes
of the same points, deletions by point, document and version, a restart, and when the index
outgrows it (then the engine answers)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from stream_rag.index.base import IndexHit, IndexPoint
from stream_rag.index.bm25 import document_vector
from stream_rag.index.edge import EdgeIndex
from stream_rag.index.mirror import DenseMirror, MirrorRow

DIM = 8


def point(
    rng: np.random.Generator, doc: int, version: int, n: int, collection: str = "default"
) -> IndexPoint:
    vector = rng.standard_normal(DIM).astype(np.float32)
    return IndexPoint(
        chunk_id=f"d{doc}:v{version}:{n}",
        doc_id=f"d{doc}",
        version=version,
        collection=collection,
        sparse=document_vector([f"w{doc}", f"n{n}"], 2.0),
        dense=vector / np.linalg.norm(vector),
    )


def ranked(hits: list[IndexHit]) -> list[tuple[str, str, int]]:
    return [(h.chunk_id, h.doc_id, h.version) for h in hits]


class Model:
    """What the index should hold, kept by hand: chunk id -> (point, collection)."""

    def __init__(self) -> None:
        self.points: dict[str, IndexPoint] = {}

    def upsert(self, points: list[IndexPoint]) -> None:
        for p in points:
            self.points[p.chunk_id] = p

    def delete_versions(
        self, doc_id: str, keep: int | None = None, below: int | None = None
    ) -> None:
        self.points = {
            c: p
            for c, p in self.points.items()
            if not (
                p.doc_id == doc_id
                and (keep is None or p.version != keep)
                and (below is None or p.version < below)
            )
        }

    def delete_points(self, point_ids: list[str]) -> None:
        gone = set(point_ids)
        self.points = {c: p for c, p in self.points.items() if p.point_id not in gone}

    def scores(self, query: npt.NDArray[np.float32], collection: str) -> dict[str, float]:
        """Exact cosines to the stored (float16) vectors of the points with one."""
        unit = query / np.linalg.norm(query)
        out = {}
        for c, p in self.points.items():
            if p.collection == collection and p.dense is not None:
                # Normalised, then stored as float16 (cosine in the engine).
                unit_p = p.dense / np.linalg.norm(p.dense)
                out[c] = float(unit_p.astype(np.float16).astype(np.float64) @ unit)
        return out


def check(
    index: EdgeIndex,
    engine: EdgeIndex,
    model: Model,
    rng: np.random.Generator,
    *,
    tie: float = 1e-5,
) -> None:
    """`index` finds the exact nearest points of the model (scores within `tie` may come in
    either order); the engine holds the same points."""
    for _ in range(5):
        query = rng.standard_normal(DIM).astype(np.float32)
        for collection in ("default", "other", "none"):
            exact = model.scores(query, collection)
            every = engine.search_dense(query, collection, 10_000)
            assert {h.chunk_id for h in every} == set(exact)
            best = sorted(exact.values(), reverse=True)
            for limit in (1, 7, 500):
                hits = index.search_dense(query, collection, limit)
                assert len(hits) == min(limit, len(exact))
                assert all(model.points[h.chunk_id].doc_id == h.doc_id for h in hits)
                assert all(model.points[h.chunk_id].version == h.version for h in hits)
                # Ties may come in either order: the scores must be the best ones, in order.
                np.testing.assert_allclose(
                    [exact[h.chunk_id] for h in hits], best[:limit], atol=tie
                )
                np.testing.assert_allclose([h.score for h in hits], best[:limit], atol=1e-3)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_copy_answers_exactly_through_every_kind_of_write(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    mirrored = EdgeIndex.open(tmp_path / "mirrored", DIM, mirror_max=20_000)
    engine = EdgeIndex.open(tmp_path / "engine", DIM)
    model = Model()
    every = (mirrored, engine, model)
    try:
        mirrored.warm()
        assert mirrored._mirror is not None
        for step in range(12):
            kind = step % 6
            if kind in (0, 3):  # new points, some in another collection
                new = [
                    point(
                        rng,
                        int(rng.integers(20)),
                        int(rng.integers(1, 4)),
                        n,
                        "other" if n % 5 == 0 else "default",
                    )
                    for n in range(int(rng.integers(5, 40)))
                ]
                for target in every:
                    target.upsert(new)
            elif kind == 1:  # the same chunks again, some without a dense vector now
                again = [
                    IndexPoint(
                        p.chunk_id,
                        p.doc_id,
                        p.version,
                        p.collection,
                        p.sparse,
                        None if p.chunk_id.endswith("1") else p.dense,
                    )
                    for p in (point(rng, d, 1, n) for d in range(5) for n in range(4))
                ]
                for target in every:
                    target.upsert(again)
            elif kind == 2:  # a new version goes live: the older ones go, then all but it
                doc = f"d{int(rng.integers(20))}"
                for target in every:
                    target.delete_versions(doc, below=2)
                    target.delete_versions(doc, keep=3)
            elif kind == 4:
                doc = f"d{int(rng.integers(20))}"
                for target in every:
                    target.delete_versions(doc)
            else:
                ids = [p.point_id for p in (point(rng, d, 1, n) for d in range(20) for n in (0, 2))]
                for target in every:
                    target.delete_points(ids)
            check(mirrored, engine, model, rng)
    finally:
        mirrored.close()
    # A restart loads the copy from the engine: still exact.
    reopened = EdgeIndex.open(tmp_path / "mirrored", DIM, mirror_max=20_000)
    try:
        check(reopened, engine, model, rng)
        assert reopened._mirror is not None
    finally:
        reopened.close()
        engine.close()


def test_an_index_that_outgrows_the_copy_is_searched_by_the_engine(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    small = EdgeIndex.open(tmp_path / "small", DIM, mirror_max=30)
    engine = EdgeIndex.open(tmp_path / "engine", DIM)
    model = Model()
    try:
        first = [point(rng, d, 1, n) for d in range(5) for n in range(5)]
        for index in (small, engine):
            index.upsert(first)
        model.upsert(first)
        check(small, engine, model, rng)
        assert small._mirror is not None
        assert len(small._mirror) == 25
        more = [point(rng, d, 1, n) for d in range(5, 7) for n in range(5)]
        for index in (small, engine):
            index.upsert(more)
        model.upsert(more)
        assert small._mirror is None
        # The engine's own float16 arithmetic orders near-ties its own way.
        check(small, engine, model, rng, tie=1e-3)
    finally:
        for index in (small, engine):
            index.close()
    # Too many points at start: never loaded.
    reopened = EdgeIndex.open(tmp_path / "small", DIM, mirror_max=30)
    try:
        reopened.warm()
        assert reopened._mirror is None
        assert len(reopened.search_dense(np.ones(DIM, np.float32), "default", 50)) == 35
    finally:
        reopened.close()


def test_dead_rows_are_dropped_and_searches_keep_answering() -> None:
    rng = np.random.default_rng(3)
    mirror = DenseMirror(DIM, float16=False)
    vectors = rng.standard_normal((3000, DIM)).astype(np.float32)
    rows = [
        MirrorRow(f"p{i}", f"c{i}", f"d{i // 10}", 1, "default", v) for i, v in enumerate(vectors)
    ]
    mirror.add(rows)
    query = rng.standard_normal(DIM).astype(np.float32)
    # Every tenth document stays; the rest go (far more than a quarter of the rows).
    for doc in range(300):
        if doc % 10:
            mirror.delete_versions(f"d{doc}", None, None)
    assert len(mirror) == 300
    assert mirror.nbytes < 3000 * DIM * 4  # rebuilt smaller
    kept = vectors[[i for i in range(3000) if (i // 10) % 10 == 0]]
    unit = kept / np.linalg.norm(kept, axis=1, keepdims=True)
    scores = unit @ (query / np.linalg.norm(query))
    hits = mirror.search(query, "default", 5)
    assert [round(h.score, 5) for h in hits] == [
        round(float(s), 5) for s in sorted(scores)[::-1][:5]
    ]
    # A point written again replaces its row; one in an unknown collection is not found.
    mirror.add([MirrorRow("p0", "c0", "d0", 2, "default", -query)])
    assert mirror.search(-query, "default", 1)[0].version == 2
    assert mirror.search(query, "elsewhere", 5) == []
