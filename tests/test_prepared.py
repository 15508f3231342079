"""What retrieval and the checks gave a question is kept while the store and the index are
unchanged (answer/pipeline.py `prepare`), and never after either was written."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import anyio
import pytest

from stream_rag.answer.pipeline import Answerer
from stream_rag.answer.results import Options, Prepared
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.index.base import point_id
from stream_rag.index.folders import ingest_paths, sample_kb_dir
from stream_rag.services import Services, open_services

QUESTION = "What does the Pro plan cost per month?"


@pytest.fixture
def services(tmp_path: Path, minilm: MiniLMEmbedder) -> Iterator[Services]:
    settings = Settings(data_dir=tmp_path / "data")
    opened = open_services(settings, embedder=minilm)
    ingest_paths(opened.store, [sample_kb_dir()], settings, indexer=opened.indexer, quiet=True)
    yield opened
    opened.close()


def prepare(answerer: Answerer, question: str = QUESTION, **options: object) -> Prepared:
    return anyio.run(answerer.prepare, question, Options(**options))  # type: ignore[arg-type]


def counting(services: Services) -> tuple[Answerer, list[Mapping[str, float]]]:
    """A new answerer (nothing kept yet) and the list each search's timings are added to."""
    searches: list[Mapping[str, float]] = []
    services.retriever.on_search = searches.append
    answerer = Answerer(services.retriever, services.answerer.model, services.settings)
    return answerer, searches


def test_a_repeated_question_is_answered_from_what_its_search_found(services: Services) -> None:
    answerer, searches = counting(services)
    first = prepare(answerer)
    again = prepare(answerer)
    assert len(searches) == 1
    assert again.blocks == first.blocks
    assert again.context is first.context
    assert again.refusal == first.refusal
    assert again.retrieve_ms == 0.0  # no search ran for this one
    # Another question, or other options, search again.
    prepare(answerer, "How can I export a notebook?")
    prepare(answerer, top_k=2)
    prepare(answerer, min_evidence=0.99)
    assert len(searches) == 4
    assert prepare(answerer, min_evidence=0.99).refusal is not None
    assert len(searches) == 4


def test_a_new_document_is_found_by_the_next_search(services: Services, tmp_path: Path) -> None:
    answerer, searches = counting(services)
    before = prepare(answerer)
    new = tmp_path / "new" / "pro-price.md"
    new.parent.mkdir()
    new.write_text(
        "# What does the Pro plan cost per month?\n\nFrom June the Pro plan costs $9 per month.\n",
        encoding="utf-8",
    )
    ingest_paths(services.store, [new.parent], services.settings, indexer=services.indexer)
    after = prepare(answerer)
    assert len(searches) == 2
    assert "pro-price.md" in [b.name for b in after.blocks]
    assert "pro-price.md" not in [b.name for b in before.blocks]


def test_an_index_write_alone_makes_the_next_question_search(services: Services) -> None:
    answerer, searches = counting(services)
    first = prepare(answerer)
    services.index.delete_points([point_id(first.blocks[0].chunk_id)])
    after = prepare(answerer)
    assert len(searches) == 2
    assert first.blocks[0].chunk_id not in [b.chunk_id for b in after.blocks]


def test_nothing_is_kept_when_a_reranker_orders_the_blocks(services: Services) -> None:
    answerer, searches = counting(services)
    services.retriever.reranker = object()  # type: ignore[assignment]
    try:
        assert answerer._prepared_key(QUESTION, Options()) is None
    finally:
        services.retriever.reranker = None
    prepare(answerer)
    prepare(answerer)
    assert len(searches) == 1
