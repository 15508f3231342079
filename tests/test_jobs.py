"""The indexing queue: durable jobs, fair batches, and no crash loop."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from stream_rag.embed.backends import OpenAIEmbedder, Vectors
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.errors import QueueFullError
from stream_rag.index.doctor import check
from stream_rag.index.edge import EdgeIndex
from stream_rag.index.indexing import Indexer
from stream_rag.index.jobs import IndexQueue
from stream_rag.store.documents import DocumentStore

pytestmark = pytest.mark.anyio


def add(store: DocumentStore, name: str, text: str) -> tuple[str, int]:
    stager = store.blobs.stager(10**7)
    stager.write(text.encode())
    result = store.add(stager.finish(), filename=name)
    return result.document.id, result.version.version


class Recording:
    """The real embedder, noting which document each call embedded (by its marker word)."""

    def __init__(self, inner: MiniLMEmbedder) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.calls: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append("small" if any("Walrus" in t for t in texts) else "big")
        return self.inner.embed(texts)


async def run_queue(queue: IndexQueue) -> None:
    async with anyio.create_task_group() as group:
        group.start_soon(queue.run)
        await queue.join()
        queue.close()


async def test_a_small_document_is_not_stuck_behind_a_large_one(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    store = DocumentStore(tmp_path / "data", chunk_chars=200, chunk_overlap_chars=0)
    index = EdgeIndex.open(tmp_path / "index", minilm.dim)
    embedder = Recording(minilm)
    try:
        paragraphs = [f"Paragraph {i} is about the annual refund window." for i in range(300)]
        big = add(store, "big.txt", "\n\n".join(f"{p} {p}" for p in paragraphs))
        small = add(store, "small.txt", "Walrus care is covered in the zoo handbook.")
        queue = IndexQueue(Indexer(store, index, embedder), workers=1, batch=16)
        queue.submit_all([big, small])  # the big one first: it is older
        await run_queue(queue)
        # Round robin per batch: the small document's only batch is the second one embedded.
        assert embedder.calls[:3] == ["big", "small", "big"]
        assert len(embedder.calls) > 10
        for doc_id, version in (big, small):
            assert store.version(doc_id, version).status == "ready"
        assert store.pending() == []
        assert index.count() == store.get(big[0]).latest.chunk_count + 1
    finally:
        index.close()
        store.close()


async def test_a_version_that_fails_twice_ends_failed_with_its_reason(tmp_path: Path) -> None:
    store = DocumentStore(tmp_path / "data")
    index = EdgeIndex.open(tmp_path / "index", 384)
    dead = OpenAIEmbedder("http://127.0.0.1:9/v1", "m", dim=384, max_retries=0, timeout_s=1)
    try:
        key = add(store, "a.txt", "Refunds take five days.")
        queue = IndexQueue(Indexer(store, index, dead), workers=2, max_attempts=2)
        queue.submit(*key)
        await run_queue(queue)  # returns: no endless retries
        record = store.version(*key)
        assert record.status == "failed"
        assert record.status_reason is not None
        assert record.status_reason.startswith("indexing gave up after 2 attempts")
        assert "embedding endpoint failed" in record.status_reason
        assert store.pending() == []
    finally:
        index.close()
        store.close()


CRASHER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    import anyio
    import numpy as np
    from stream_rag.config import Settings
    from stream_rag.index.jobs import IndexQueue
    from stream_rag.services import open_services

    class Killer:
        # Dies on one document, as an out-of-memory kill would.
        name, dim = "killer", 8

        def embed(self, texts):
            if any("CRASH" in t for t in texts):
                os.kill(os.getpid(), signal.SIGKILL)
            return np.full((len(texts), 8), 8 ** -0.5, dtype=np.float32)

    async def main():
        services = open_services(Settings(data_dir=Path(sys.argv[1])), embedder=Killer())
        queue = IndexQueue(services.indexer, workers=1)
        queue.submit_all(services.indexer.reconcile())
        async with anyio.create_task_group() as group:
            group.start_soon(queue.run)
            await queue.join()
            queue.close()
        services.close()

    if __name__ == "__main__":
        anyio.run(main)
    """
)


def test_a_version_that_kills_the_process_ends_failed_instead_of_a_crash_loop(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    store = DocumentStore(data_dir)
    crash = add(store, "crash.txt", "CRASH: this document takes the indexer down.")
    fine = add(store, "fine.txt", "Backups are kept for ninety days.")
    store.close()
    script = tmp_path / "crasher.py"
    script.write_text(CRASHER)
    codes = [
        subprocess.run([sys.executable, str(script), str(data_dir)], check=False).returncode
        for _ in range(3)
    ]
    assert codes == [-9, -9, 0]
    store = DocumentStore(data_dir)
    try:
        record = store.version(*crash)
        assert record.status == "failed"
        assert record.status_reason == (
            "indexing gave up after 2 attempts: the process stopped while indexing this version"
        )
        assert store.version(*fine).status == "ready"
        assert store.pending() == []
    finally:
        store.close()


def test_the_queue_is_bounded_and_durable(tmp_path: Path) -> None:
    store = DocumentStore(tmp_path / "data", max_jobs=2)
    first = add(store, "a.txt", "One.")
    add(store, "b.txt", "Two.")
    with pytest.raises(QueueFullError):
        add(store, "c.txt", "Three.")
    assert store.count() == 2
    store.close()
    again = DocumentStore(tmp_path / "data", max_jobs=2)
    try:
        assert again.pending()[0] == first  # the jobs outlive the process, oldest first
        assert len(again.pending()) == 2
    finally:
        again.close()


async def test_versions_of_one_document_indexed_in_turns_keep_the_newest_complete(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    """v3 (large) starts, v2 (small) finishes first and goes live: dropping the points of
    older versions must not touch v3's half-indexed ones."""
    store = DocumentStore(tmp_path / "data", chunk_chars=200, chunk_overlap_chars=0)
    index = EdgeIndex.open(tmp_path / "index", minilm.dim)
    try:
        indexer = Indexer(store, index, minilm)
        doc_id, _ = add(store, "notes.txt", "Version one of the notes.")
        indexer.index_version(doc_id, 1)

        def version(text: str) -> int:
            stager = store.blobs.stager(10**7)
            stager.write(text.encode())
            return store.add_version(doc_id, stager.finish(), filename="notes.txt").version.version

        small = version("Version two of the notes.")
        large = version("\n\n".join(f"Paragraph {i} of version three." * 4 for i in range(60)))
        queue = IndexQueue(indexer, workers=1, batch=8)
        queue.submit_all([(doc_id, large), (doc_id, small)])
        await run_queue(queue)
        assert store.get(doc_id).live_version == large
        report = check(store, index)
        assert (report.extra, report.missing) == ([], {})
        assert report.points == report.live_chunks == store.version(doc_id, large).chunk_count
    finally:
        index.close()
        store.close()


async def test_the_answer_warm_up_waits_until_the_version_is_live(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    store = DocumentStore(tmp_path / "data", chunk_chars=200, chunk_overlap_chars=0)
    index = EdgeIndex.open(tmp_path / "index", minilm.dim)
    try:
        indexer = Indexer(store, index, minilm)
        warmed: list[tuple[str, str]] = []  # (the version's status then, chunk text)
        keys: list[tuple[str, int]] = []

        def warm(name: str, texts: Sequence[str]) -> None:
            warmed.extend((store.version(*keys[-1]).status, text) for text in texts)

        indexer.on_indexed = warm

        def document(n: int) -> list[str]:
            warmed.clear()
            lines = [f"Paragraph {i} of {n} is about the annual refund window." for i in range(40)]
            keys.append(add(store, f"doc{n}.txt", "\n\n".join(lines)))
            return [c.text for c in store.chunks(*keys[-1])]

        indexer.warm_after_live = True
        chunks = document(1)
        queue = IndexQueue(indexer, workers=1, batch=8)
        queue.submit(*keys[-1])
        await run_queue(queue)  # join() waits for the warm-up too
        assert [text for _, text in warmed] == chunks  # every batch, once, in order
        assert {status for status, _ in warmed} == {"ready"}

        chunks = document(2)
        indexer.index_version(*keys[-1], batch=8)
        assert [text for _, text in warmed] == chunks
        assert {status for status, _ in warmed} == {"ready"}

        indexer.warm_after_live = False  # as before: each batch as it is indexed
        chunks = document(3)
        indexer.index_version(*keys[-1], batch=8)
        assert [text for _, text in warmed] == chunks
        assert {status for status, _ in warmed} == {"indexing"}
    finally:
        index.close()
        store.close()
