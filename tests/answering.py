"""Answering questions in process over a folder ingested first: the tests of what an answer
rests on share it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio

from stream_rag.answer.results import AnswerResult, Options
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.index.folders import ingest_paths
from stream_rag.model.extractive import ExtractiveModel
from stream_rag.model.llm import ChatModel
from stream_rag.services import open_services


def answers_over(
    kb: Path,
    settings: Settings,
    minilm: MiniLMEmbedder,
    questions: Sequence[str],
    model: ChatModel | None = None,
) -> list[AnswerResult]:
    """Each of `questions` answered, in order, after `kb` is ingested into `settings`' store."""
    services = open_services(settings, embedder=minilm, model=model)
    try:
        ingest_paths(services.store, [kb], settings, indexer=services.indexer, quiet=True)

        async def run() -> list[AnswerResult]:
            try:
                return [await services.answerer.answer(q, Options()) for q in questions]
            finally:
                await services.aclose()

        return anyio.run(run)
    finally:
        services.close()


def extractive_answers(
    files: dict[str, str], tmp_path: Path, minilm: MiniLMEmbedder, questions: Sequence[str]
) -> list[AnswerResult]:
    """`questions` answered by the extractive model over a knowledge base of `files`."""
    kb = tmp_path / "kb"
    kb.mkdir()
    for name, text in files.items():
        (kb / name).write_text(text)
    settings = Settings(data_dir=tmp_path / "data")
    return answers_over(kb, settings, minilm, questions, model=ExtractiveModel(embedder=minilm))
