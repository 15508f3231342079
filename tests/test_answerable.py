"""`not_answered`: a question whose best entry states no answer of the kind it asks outright is
refused before any model call, naming what the knowledge base covers nearby, in the team's
wording; a question the entry answers in other words is answered."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from pathlib import Path

import anyio

from stream_rag.answer.results import AnswerResult, Options
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.index.folders import ingest_paths
from stream_rag.model.extractive import ExtractiveModel
from stream_rag.services import open_services
from stream_rag.types import Message

GYM = (
    "# Opening hours\n\n"
    "The gym is open from 6 am to 10 pm every day. Members can bring one guest to the gym.\n\n"
    "# Classes\n\n"
    "Yoga classes run on Monday and Thursday evenings in the studio.\n"
)


class CountingModel:
    """The local generator, counting the calls that reach it."""

    name = "counting"

    def __init__(self, inner: ExtractiveModel) -> None:
        self.inner = inner
        self.calls = 0

    async def stream(self, messages: Sequence[Message]) -> AsyncGenerator[str, None]:
        self.calls += 1
        async for piece in self.inner.stream(messages):
            yield piece


def ask(
    tmp_path: Path, minilm: MiniLMEmbedder, questions: list[str], **settings: object
) -> tuple[list[AnswerResult], int]:
    kb = tmp_path / "kb"
    kb.mkdir(exist_ok=True)
    (kb / "gym.md").write_text(GYM)
    local = Settings(data_dir=tmp_path / "data", **settings)  # type: ignore[arg-type]
    model = CountingModel(ExtractiveModel(embedder=minilm))
    services = open_services(local, embedder=minilm, model=model)
    try:
        ingest_paths(services.store, [kb], local, indexer=services.indexer, quiet=True)

        async def run() -> list[AnswerResult]:
            try:
                return [await services.answerer.answer(q, Options()) for q in questions]
            finally:
                await services.aclose()

        return anyio.run(run), model.calls
    finally:
        services.close()


def test_a_near_miss_is_refused_naming_what_is_covered(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    results, calls = ask(
        tmp_path,
        minilm,
        ["How much does it cost to bring a guest to the gym?", "When are yoga classes held?"],
        not_answered_text="Not in our help pages. Nearby: {nearby}.",
    )
    refused, answered = results
    assert refused.refusal is not None
    assert refused.refusal.reason == "not_answered"
    assert refused.refusal.message.startswith("Not in our help pages. Nearby: Opening hours")
    assert refused.refusal.details[0]["nearby"][0] == "Opening hours"
    assert answered.refusal is None
    assert "Monday and Thursday" in answered.text
    assert calls == 1  # the refused question never reached the model


def test_the_check_can_be_turned_off(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    (result,), calls = ask(
        tmp_path,
        minilm,
        ["How much does it cost to bring a guest to the gym?"],
        check_answered=False,
    )
    assert result.refusal is None
    assert calls == 1
