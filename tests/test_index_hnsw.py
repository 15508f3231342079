"""HNSW graphs for the embedded index: built on a copy in a child process, swapped in while
searches and writes go on; the writes made meanwhile are re-applied to the copy."""

from __future__ import annotations

import logging
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import qdrant_edge as qe

from stream_rag.config import Settings
from stream_rag.index import edge_build
from stream_rag.index.base import BuildAbandonedError, IndexPoint, IndexUnavailableError
from stream_rag.index.bm25 import SparseVector
from stream_rag.index.edge import EdgeIndex
from stream_rag.services import open_services

DIM = 16


def points(start: int, n: int, rng: np.random.Generator) -> list[IndexPoint]:
    vectors = rng.normal(size=(n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [
        IndexPoint(
            chunk_id=f"c{start + i}",
            doc_id=f"d{(start + i) // 10}",
            version=1,
            collection="default",
            sparse=SparseVector((1 + (start + i) % 50,), (1.0,)),
            dense=vectors[i],
        )
        for i in range(n)
    ]


def test_build_swaps_in_graphs_without_stopping_search_or_losing_writes(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    index = EdgeIndex.open(tmp_path / "edge", DIM, hnsw_ef=128)
    try:
        index.upsert(points(0, 3000, rng))
        queries = [p.dense for p in points(10_000, 20, rng) if p.dense is not None]
        assert index.hnsw_segments() == 0
        exact = [[h.chunk_id for h in index.search_dense(q, "default", 10)] for q in queries]

        errors: list[BaseException] = []
        searches = 0
        timings: dict[str, float] = {}

        def build() -> None:
            try:
                timings.update(index.build_hnsw(threshold_kb=1))
            except BaseException as exc:  # reported below
                errors.append(exc)

        builder = threading.Thread(target=build)
        builder.start()
        while builder.is_alive():  # searches keep working while the graph is built
            assert len(index.search_dense(queries[searches % 20], "default", 10)) == 10
            searches += 1
        builder.join()
        assert not errors
        assert timings["hnsw_segments"] >= 1
        exact_again = [
            [h.chunk_id for h in index.search_dense(q, "default", 10, exact=True)] for q in queries
        ]
        assert exact_again == exact
        found = [[h.chunk_id for h in index.search_dense(q, "default", 10)] for q in queries]
        recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(exact, found, strict=True)])
        assert recall >= 0.9
        late = points(3000, 50, rng)
        index.upsert(late)  # a write after the swap goes to the new shard
        assert index.count() == 3050
    finally:
        index.close()
    reopened = EdgeIndex.open(tmp_path / "edge", DIM)
    try:
        assert reopened.count() == 3050
        assert reopened.hnsw_segments() >= 1  # the serving config keeps the graphs
    finally:
        reopened.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edge"]


class Paused:
    """A `build_hook` that stops the build at a stage until the test lets it go on."""

    def __init__(self, *stages: str) -> None:
        self.reached = {stage: threading.Event() for stage in stages}
        self.go = {stage: threading.Event() for stage in stages}

    def __call__(self, stage: str) -> None:
        if stage in self.reached:
            self.reached[stage].set()
            self.go[stage].wait()

    def build(self, index: EdgeIndex, timings: dict[str, float], errors: list[Exception]) -> None:
        """Run the build; however it ends, no stage is waited for any longer."""
        try:
            timings.update(index.build_hnsw(threshold_kb=1))
        except Exception as exc:  # reported by the test
            errors.append(exc)
        finally:
            for event in self.reached.values():
                event.set()


def chunk_ids(index: EdgeIndex) -> set[str]:
    return {p.chunk_id for p in index.points()}


def test_writes_during_the_build_go_on_and_are_in_the_swapped_shard(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    index = EdgeIndex.open(tmp_path / "edge", DIM, hnsw_ef=128)
    settings = Settings(data_dir=tmp_path / "data")
    services = open_services(settings, index=index)
    try:
        index.upsert(points(0, 3000, rng))  # documents d0..d299, ten chunks each
        expected = chunk_ids(index)
        paused = Paused("building", "caught_up")
        index.build_hook = paused
        timings: dict[str, float] = {}
        errors: list[Exception] = []
        builder = threading.Thread(target=paused.build, args=(index, timings, errors))
        builder.start()
        paused.reached["building"].wait()
        # The child is building on the copy: writes go to the live shard at once, and a
        # search sees them at once. (Were they waiting for the build, this would hang.)
        assert index.building
        index.delete_versions("d5")
        newer = [replace(p, chunk_id=f"v2-{p.chunk_id}", version=2) for p in points(70, 10, rng)]
        index.upsert(newer)  # a new version of d7 is indexed, then its old one goes
        index.delete_versions("d7", below=2)
        assert not services.indexer.vacuum_if_stale(share=0.0)  # a delete's vacuum: skipped
        index.vacuum()  # returns at once too: the build's copy replaces this shard
        gone = {f"c{i}" for i in (*range(50, 60), *range(70, 80))}  # d5, d7 v1
        expected = (expected - gone) | {p.chunk_id for p in newer}
        probe = newer[0].dense
        assert probe is not None
        found = index.search_dense(probe, "default", 3000)
        assert found[0].chunk_id == "v2-c70"
        assert not {"d5"} & {h.doc_id for h in found}
        assert {h.version for h in found if h.doc_id == "d7"} == {2}
        paused.go["building"].set()
        # The copy has caught up with those; a write now is re-applied under the lock.
        paused.reached["caught_up"].wait()
        assert not errors
        late = points(5000, 10, rng)
        index.upsert(late)
        index.delete_points([p.point_id for p in points(2990, 10, rng)])  # d299's chunks
        expected = (expected | {p.chunk_id for p in late}) - {f"c{i}" for i in range(2990, 3000)}
        paused.go["caught_up"].set()
        builder.join()
        assert not errors
        assert timings["replayed"] == 5  # the upserts are one batch each; no vacuum
        assert timings["hnsw_segments"] >= 1
        assert index.hnsw_segments() >= 1
        assert not index.building
        assert chunk_ids(index) == expected
        assert index.search_dense(probe, "default", 1)[0].chunk_id == "v2-c70"
        assert late[0].dense is not None
        assert index.search_dense(late[0].dense, "default", 1)[0].chunk_id == "c5000"
    finally:
        services.close()
    reopened = EdgeIndex.open(tmp_path / "edge", DIM)
    try:
        assert chunk_ids(reopened) == expected
        assert reopened.hnsw_segments() >= 1
    finally:
        reopened.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "edge"]


def test_a_build_stopped_before_its_swap_keeps_the_live_shard_and_its_writes(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(8)
    index = EdgeIndex.open(tmp_path / "edge", DIM)
    try:
        index.upsert(points(0, 1500, rng))
        paused = Paused("caught_up")
        index.build_hook = paused
        errors: list[Exception] = []
        builder = threading.Thread(target=paused.build, args=(index, {}, errors))
        builder.start()
        paused.reached["caught_up"].wait()
        assert not errors
        index.upsert(points(1500, 10, rng))
        index.stop_building()  # the index is closing: the build gives up at the swap
        paused.go["caught_up"].set()
        builder.join()
        assert [str(e) for e in errors] == ["HNSW build stopped: the index is closing"]
        assert isinstance(errors[0], IndexUnavailableError)
        assert index.count() == 1510
        assert index.hnsw_segments() == 0
    finally:
        index.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edge"]


def test_open_recovers_from_a_crash_between_the_two_renames(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    index = EdgeIndex.open(tmp_path / "edge", DIM)
    index.upsert(points(0, 20, rng))
    index.close()
    (tmp_path / "edge").rename(tmp_path / "edge.replaced")
    index = EdgeIndex.open(tmp_path / "edge", DIM)
    try:
        assert index.count() == 20
    finally:
        index.close()


def test_the_built_shard_keeps_deleting_by_document_and_version(tmp_path: Path) -> None:
    # The build moves the deletion-only payload indexes to mmap and drops the unused chunk_id
    # index of older shards: deleting by document and version must work as before.
    rng = np.random.default_rng(6)
    index = EdgeIndex.open(tmp_path / "edge", DIM)
    try:
        index._shard.update(  # an index as shards made before the build change carry
            qe.UpdateOperation.create_field_index("chunk_id", qe.PayloadSchemaType.Keyword)
        )
        index.upsert(points(0, 2000, rng))
        index.build_hnsw(threshold_kb=1)
        schema = index._shard.info().payload_schema
        assert "chunk_id" not in schema
        assert getattr(schema["doc_id"].params, "memory", None) == qe.Memory.Cold
        assert index.hnsw_segments() >= 1
        assert list((tmp_path / "edge").glob("segments/*/vector_storage-dense/quantized.data"))
        # The engine counts a graph's vectors as indexed too; none of them is a stale point
        # (a wrong count here made the next delete vacuum the graph away).
        assert index.stale_points() == 0
        index.delete_versions("d7")  # chunks c70..c79
        index.delete_versions("d8", keep=2)  # version 1 goes
        assert index.count() == 1980
        assert index.stale_points() == 20
        probe = np.ones(DIM, dtype=np.float32)
        found = {h.doc_id for h in index.search_dense(probe, "default", 2000, exact=True)}
        assert not {"d7", "d8"} & found
        assert "d9" in found
    finally:
        index.close()


def test_the_collection_filter_is_skipped_only_while_one_collection_has_points(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(7)
    first = points(0, 40, rng)
    other = [replace(p, chunk_id=f"o{i}", collection="other") for i, p in enumerate(first)]
    probe = np.ones(DIM, dtype=np.float32)
    index = EdgeIndex.open(tmp_path / "edge", DIM)
    try:
        index.upsert(first)
        assert len(index.search_dense(probe, "default", 100)) == 40
        assert index.search_dense(probe, "other", 100) == []
        assert index.search_sparse(SparseVector((1, 2), (1.0, 1.0)), "other", 100) == []
        index.upsert(other)  # same vectors and terms, another collection
        for collection, prefix in (("default", "c"), ("other", "o")):
            dense = index.search_dense(probe, collection, 100)
            sparse = index.search_sparse(SparseVector((1, 2), (1.0, 1.0)), collection, 100)
            assert len(dense) == 40
            assert {h.chunk_id[0] for h in dense + sparse} == {prefix}
        index.delete_versions("d0")  # still two collections: the filter stays
        assert {h.chunk_id[0] for h in index.search_dense(probe, "other", 100)} == {"o"}
    finally:
        index.close()
    reopened = EdgeIndex.open(tmp_path / "edge", DIM)  # the set is read back from the shard
    try:
        assert {h.chunk_id[0] for h in reopened.search_dense(probe, "other", 100)} == {"o"}
        assert len(reopened.search_dense(probe, "default", 100)) == 30
    finally:
        reopened.close()


def test_closing_keeps_the_graphs_and_a_vacuum_that_drops_them_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, settings = tmp_path / "edge", Settings(data_dir=tmp_path / "data")
    index = EdgeIndex.open(path, DIM)
    index.upsert(points(0, 3000, np.random.default_rng(5)))
    index.build_hnsw(threshold_kb=1)
    index.delete_versions("d0")  # ten points
    open_services(settings, index=index).close()
    # A vacuum at close would have rewritten the segment without its graph.
    index = EdgeIndex.open(path, DIM)
    assert (index.hnsw_segments(), index.stale_points()) == (1, 10)
    services = open_services(settings, index=index)
    try:
        with caplog.at_level(logging.WARNING, logger="stream_rag"):
            assert services.indexer.vacuum_if_stale(share=0.0)
    finally:
        services.close()
    assert "dropped the index's HNSW graphs: run `stream-rag optimize`" in caplog.text
    index = EdgeIndex.open(path, DIM)
    try:
        assert (index.hnsw_segments(), index.stale_points()) == (0, 0)
    finally:
        index.close()


@pytest.mark.parametrize("stage", ["building", "caught_up"])
def test_writes_past_the_journal_cap_abandon_the_build_and_keep_the_live_shard(
    tmp_path: Path, stage: str
) -> None:
    # DIM 16: a point takes ~300 bytes in the journal, so 40 fit in 15 KB and 100 do not.
    rng = np.random.default_rng(9)
    index = EdgeIndex.open(tmp_path / "edge", DIM, journal_max_bytes=15_000)
    paused = Paused(stage)
    try:
        index.upsert(points(0, 1500, rng))
        index.build_hook = paused
        errors: list[Exception] = []
        builder = threading.Thread(target=paused.build, args=(index, {}, errors))
        builder.start()
        paused.reached[stage].wait()
        index.upsert(points(1500, 40, rng))
        assert index._journal is not None
        assert not index._journal.overflowed
        index.upsert(points(1540, 60, rng))
        index.delete_versions("d0")  # after the overflow: the live shard only
        assert index._journal is not None
        assert index._journal.overflowed
        assert len(index._journal) == 0  # what it held is let go at once
        paused.go[stage].set()
        builder.join()
        assert len(errors) == 1
        assert isinstance(errors[0], BuildAbandonedError)
        assert "STREAM_RAG_HNSW_JOURNAL_MB" in str(errors[0])
        assert isinstance(errors[0], IndexUnavailableError)
        assert not index.building
        assert index.hnsw_segments() == 0
        assert index.count() == 1590
        assert "c1599" in chunk_ids(index)
        assert "c5" not in chunk_ids(index)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["edge"]
        index.build_hook = None
        timings = index.build_hnsw(threshold_kb=1)  # a quiet retry swaps in as usual
        assert timings["hnsw_segments"] >= 1
        assert index.count() == 1590
    finally:
        paused.go[stage].set()  # a failed assertion must not leave the build waiting
        index.close()


def test_an_overflowing_write_ends_the_build_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A child that would run for ten minutes: passing the cap ends it, not the build's end.
    monkeypatch.setattr(edge_build, "_BUILD", "import time; time.sleep(600)")
    index = EdgeIndex.open(tmp_path / "edge", DIM, journal_max_bytes=1_000)
    started = threading.Event()
    index.build_hook = lambda stage: started.set() if stage == "building" else None
    errors: list[Exception] = []

    def build() -> None:
        try:
            index.build_hnsw(threshold_kb=1)
        except Exception as exc:  # reported below
            errors.append(exc)
        finally:
            started.set()

    try:
        index.upsert(points(0, 50, np.random.default_rng(10)))
        builder = threading.Thread(target=build)
        builder.start()
        started.wait()
        child = index._builder._child
        assert child is not None
        assert child.poll() is None
        index.upsert(points(50, 10, np.random.default_rng(11)))
        assert child.wait(timeout=120) < 0  # killed by a signal, not left to finish
        builder.join()
        assert [type(e) for e in errors] == [BuildAbandonedError]
        assert (index.count(), index.hnsw_segments()) == (60, 0)
    finally:
        index.close()
