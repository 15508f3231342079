"""HNSW graphs built in the background once enough points are searched exactly, while
searches go on (in the index and over HTTP); a closing index ends a running build."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import anyio
import httpx
import numpy as np
import pytest

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.errors import StreamRagError
from stream_rag.http.app import create_app
from stream_rag.index import edge_build
from stream_rag.index.auto_hnsw import AutoHnsw
from stream_rag.index.base import BuildAbandonedError
from stream_rag.index.edge import EdgeIndex
from stream_rag.index.indexing import Indexer
from stream_rag.index.jobs import IndexQueue
from stream_rag.store.documents import DocumentStore

from .helpers import HTTP_GUARD_S, running_server
from .test_chat_http import upload
from .test_index_hnsw import DIM, Paused, points
from .test_jobs import add
from .test_telemetry import sample

WORDS = (
    "refund invoice airfoil boundary layer shock wave turbine blade walrus zoo keeper "
    "glacier pasta recipe violin concerto orbit satellite tax return mortgage rate "
    "vaccine trial python compiler harbour ferry timetable chess opening"
).split()


def test_a_build_is_due_per_min_points_searched_exactly(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    index = EdgeIndex.open(tmp_path / "edge", DIM)
    try:
        auto = AutoHnsw(index, 1000)
        index.upsert(points(0, 900, rng))
        assert (index.exact_points(), auto.due(), auto.build_if_due()) == (900, False, None)
        index.upsert(points(900, 300, rng))
        assert auto.due()
        timings = auto.build_if_due()
        assert timings is not None
        assert timings["hnsw_segments"] >= 1
        assert (auto.builds, index.exact_points(), auto.due()) == (1, 0, False)
        index.upsert(points(1200, 600, rng))  # new points land in an exact segment
        assert (index.exact_points(), auto.due()) == (600, False)
        index.upsert(points(1800, 500, rng))
        assert (index.exact_points(), auto.due()) == (1100, True)
        assert not AutoHnsw(index, 0).due()  # 0: never
    finally:
        index.close()


def test_a_build_abandoned_at_the_journal_cap_is_due_again_and_a_failed_one_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(edge_build, "_BUILD", "import time; time.sleep(600)")
    index = EdgeIndex.open(tmp_path / "edge", DIM, journal_max_bytes=1_000)
    rng = np.random.default_rng(14)
    # Writes arrive while the child builds: past the cap the build gives up.
    index.build_hook = lambda stage: (
        index.upsert(points(100, 10, rng)) if stage == "building" else None
    )
    try:
        auto = AutoHnsw(index, 100)
        index.upsert(points(0, 100, rng))
        with pytest.raises(BuildAbandonedError):
            auto.build_if_due()
        assert (index.count(), index.hnsw_segments()) == (110, 0)
        assert auto.due()  # the next idle check builds again
        index.build_hook = None
        monkeypatch.setattr(edge_build, "_BUILD", "import sys; sys.exit(3)")
        with pytest.raises(StreamRagError, match="HNSW build failed"):
            auto.build_if_due()
        assert not auto.due()  # a failure is not retried until more points come
        assert auto.builds == 0
    finally:
        index.close()


@pytest.mark.anyio
async def test_the_queue_going_idle_builds_graphs_while_searches_go_on(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    store = DocumentStore(tmp_path / "data", chunk_chars=200, chunk_overlap_chars=0)
    index = EdgeIndex.open(tmp_path / "index", 384)
    rng = np.random.default_rng(12)
    paragraphs = [" ".join(rng.choice(WORDS, 12)) + "." for _ in range(150)]
    queries = minilm.embed([" ".join(rng.choice(WORDS, 5)) for _ in range(20)])
    try:
        key = add(store, "big.txt", "\n\n".join(paragraphs))
        queue = IndexQueue(Indexer(store, index, minilm), workers=1)
        auto = AutoHnsw(index, 50)
        built = anyio.Event()
        found: list[dict[str, float]] = []

        def on_build(timings: dict[str, float]) -> None:
            found.append(timings)
            built.set()

        auto.on_build = on_build
        searches = 0
        stop = threading.Event()

        def search() -> None:  # a user searching now and then (the build runs at nice 19)
            nonlocal searches
            while not stop.wait(0.01):
                assert len(index.search_dense(queries[searches % 20], "default", 10)) == 10
                searches += 1

        queue.submit(*key)
        async with anyio.create_task_group() as group:
            group.start_soon(queue.run)
            group.start_soon(auto.run, queue)
            await queue.join()
            exact = [[h.chunk_id for h in index.search_dense(q, "default", 10)] for q in queries]
            assert index.exact_points() >= 50
            searcher = threading.Thread(target=search)
            searcher.start()
            try:
                with anyio.fail_after(300):  # a hang guard, not a speed target
                    await built.wait()
            finally:
                stop.set()
                searcher.join()
            group.cancel_scope.cancel()
        assert searches > 0
        assert found[0]["hnsw_segments"] >= 1
        assert index.hnsw_segments() >= 1
        assert (auto.builds, index.exact_points()) == (1, 0)
        approx = [[h.chunk_id for h in index.search_dense(q, "default", 10)] for q in queries]
        recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(exact, approx, strict=True)])
        assert recall >= 0.99
    finally:
        index.close()
        store.close()


def test_closing_the_index_ends_a_running_build_and_keeps_the_shard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A child that would run for ten minutes: close() must not wait for it.
    monkeypatch.setattr(edge_build, "_BUILD", "import time; time.sleep(600)")
    index = EdgeIndex.open(tmp_path / "edge", DIM)
    started = threading.Event()
    index.build_hook = lambda stage: started.set() if stage == "building" else None
    index.upsert(points(0, 50, np.random.default_rng(13)))
    errors: list[BaseException] = []

    def build() -> None:
        try:
            index.build_hnsw(threshold_kb=1)
        except StreamRagError as exc:
            errors.append(exc)
        finally:
            started.set()  # however it ended, nothing waits for it any longer

    builder = threading.Thread(target=build)
    builder.start()
    started.wait()  # the child process runs
    index.close()
    builder.join()
    assert [str(e) for e in errors] == ["HNSW build stopped: the index is closing"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edge"]
    reopened = EdgeIndex.open(tmp_path / "edge", DIM)
    try:
        assert (reopened.count(), reopened.hnsw_segments()) == (50, 0)
    finally:
        reopened.close()


def test_a_server_answers_searches_while_it_builds_graphs_by_itself(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    rng = np.random.default_rng(14)
    text = "\n\n".join(" ".join(rng.choice(WORDS, 12)) + "." for _ in range(150))
    settings = Settings(
        data_dir=tmp_path / "data", chunk_chars=200, chunk_overlap_chars=0, hnsw_auto_points=50
    )
    app = create_app(settings, embedder=minilm)
    questions = [" ".join(rng.choice(WORDS, 4)) for _ in range(10)]
    with running_server(app) as base_url:
        # `upload` waits until the version is ready; the build starts once the queue is idle.
        upload(base_url, "words.txt", text.encode())
        before = {q: search(base_url, q) for q in questions}
        searches = 0
        deadline = time.monotonic() + 300  # a hang guard, not a speed target
        while exact_points(base_url) > 0:
            assert time.monotonic() < deadline, "no background build"
            assert search(base_url, questions[searches % 10])  # answered meanwhile
            searches += 1
        after = {q: search(base_url, q) for q in questions}
    # The graph finds what exact search found: the same chunks, in the same order.
    assert after == before


def search(base_url: str, query: str) -> list[str]:
    response = httpx.post(
        f"{base_url}/v1/search", json={"query": query, "top_k": 8}, timeout=HTTP_GUARD_S
    )
    response.raise_for_status()
    return [block["chunk_id"] for block in response.json()["blocks"]]


def exact_points(base_url: str) -> float:
    return sample(
        httpx.get(f"{base_url}/metrics", timeout=HTTP_GUARD_S).text, "stream_rag_index_exact_points"
    )


def found_docs(base_url: str, query: str) -> set[str]:
    response = httpx.post(
        f"{base_url}/v1/search", json={"query": query, "top_k": 8}, timeout=HTTP_GUARD_S
    )
    response.raise_for_status()
    return {block["doc_id"] for block in response.json()["blocks"]}


def test_a_delete_and_an_upload_during_a_servers_build_are_answered_and_kept(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path / "data", hnsw_auto_points=0)
    index = EdgeIndex.open(settings.data_dir / "index" / "edge-384-f16", minilm.dim)
    paused = Paused("building")
    index.build_hook = paused
    app = create_app(settings, embedder=minilm, index=index)
    with running_server(app) as base_url:
        walrus = upload(base_url, "walrus.txt", b"The walrus weighs about a ton on Arctic ice.")
        otter = upload(base_url, "otter.txt", b"The sea otter cracks shellfish on a stone.")
        result: dict[str, object] = {}
        errors: list[Exception] = []

        def optimise() -> None:
            try:
                response = httpx.post(f"{base_url}/v1/index/optimize", timeout=None)
                result.update(response.json())
            except Exception as exc:  # reported below
                errors.append(exc)
            finally:
                paused.reached["building"].set()

        builder = threading.Thread(target=optimise)
        builder.start()
        paused.reached["building"].wait()  # the child builds on a copy of the shard
        assert not errors
        # Both writes are answered while the build runs (waiting for it, this would hang),
        # and searches see them at once.
        assert (
            httpx.delete(f"{base_url}/v1/documents/{walrus}", timeout=HTTP_GUARD_S).status_code
            == 200
        )
        assert walrus not in found_docs(base_url, "walrus weight ice")
        heron = upload(base_url, "heron.txt", b"The grey heron waits in shallow water for fish.")
        assert heron in found_docs(base_url, "heron fish")
        paused.go["building"].set()
        builder.join()
        assert not errors
        assert result["optimized"] is True
        replayed = result["replayed"]
        assert isinstance(replayed, int)
        assert replayed >= 3  # the delete; the upload's points, then its older versions' delete
        assert walrus not in found_docs(base_url, "walrus weight ice")
        assert heron in found_docs(base_url, "heron fish")
        assert otter in found_docs(base_url, "otter shellfish stone")
        listed = httpx.get(f"{base_url}/v1/documents", timeout=HTTP_GUARD_S).json()["documents"]
        assert {d["id"] for d in listed} == {otter, heron}
