"""A version whose answer warm-up waits until it is live holds which chunks to warm, not their
texts (a start-up backlog begins every version in turn, so it held the whole collection's):
the texts are read when the warm-up runs, the same texts in the same order."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path

from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.index.edge import EdgeIndex
from stream_rag.index.indexing import Indexer
from stream_rag.store.documents import DocumentStore

from .test_jobs import add


def _strings(value: object) -> Iterator[str]:
    """Every string in `value`, however deep in lists and tuples."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def test_a_version_waiting_for_its_warm_up_holds_no_chunk_text(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    store = DocumentStore(tmp_path / "data", chunk_chars=200, chunk_overlap_chars=0)
    index = EdgeIndex.open(tmp_path / "index", minilm.dim)
    try:
        warmed: list[str] = []

        def warm(name: str, texts: Sequence[str]) -> None:
            warmed.extend(texts)

        indexer = Indexer(store, index, minilm)
        indexer.on_indexed = warm
        indexer.warm_after_live = True
        lines = [f"Paragraph {i} is about the annual refund window." for i in range(40)]
        key = add(store, "doc.txt", "\n\n".join(lines))
        chunks = [c.text for c in store.chunks(*key)]
        job = indexer.begin(*key)
        while not indexer.step(job, 8):
            pass
        indexer.finish(job)
        assert job.warm
        assert not warmed
        assert not set(chunks) & set(_strings(dataclasses.astuple(job)))
        while not indexer.warm_step(job):
            pass
        assert warmed == chunks
    finally:
        index.close()
        store.close()


def test_a_warm_up_of_a_deleted_document_reads_nothing(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    store = DocumentStore(tmp_path / "data", chunk_chars=200, chunk_overlap_chars=0)
    index = EdgeIndex.open(tmp_path / "index", minilm.dim)
    try:
        warmed: list[str] = []
        indexer = Indexer(store, index, minilm)
        indexer.on_indexed = lambda name, texts: warmed.extend(texts)
        indexer.warm_after_live = True
        lines = [f"Paragraph {i} is about the annual refund window." for i in range(40)]
        key = add(store, "doc.txt", "\n\n".join(lines))
        job = indexer.begin(*key)
        while not indexer.step(job, 8):
            pass
        indexer.finish(job)
        indexer.delete(key[0])
        while not indexer.warm_step(job):
            pass
        assert warmed == []
    finally:
        index.close()
        store.close()
