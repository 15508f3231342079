"""`not_answered`: a question whose best entry states no answer of the kind it asks outright is
refused before any model call, naming what the knowledge base covers nearby, in the team's
wording; a question the entry answers in other words is answered."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path

import anyio
import httpx
import pytest

from stream_rag.answer.answerable import answering_order
from stream_rag.answer.evidence import Similarity
from stream_rag.answer.results import AnswerResult, Options
from stream_rag.config import Settings
from stream_rag.embed.backends import Vectors
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.index.folders import ingest_paths, sample_kb_dir
from stream_rag.model.extractive import ExtractiveModel, SentenceVectors
from stream_rag.model.fake import create_fake_llm
from stream_rag.model.llm import OpenAIChatModel
from stream_rag.retrieve.hybrid import Block
from stream_rag.services import open_services
from stream_rag.types import Message, Turn

from .answering import answers_over
from .helpers import running_server

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
    return answers_over(kb, local, minilm, questions, model=model), model.calls


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


class RecordingModel:
    """A chat model that records each prompt and says the sources do not answer."""

    name = "recording"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def stream(self, messages: Sequence[Message]) -> AsyncGenerator[str, None]:
        self.prompts.append(next(m.content for m in messages if m.role == "user"))
        yield "The sources do not answer this question."


def _block(n: int, name: str, text: str) -> Block:
    return Block(n, f"c{n}", f"d{n}", 1, "0" * 64, name, name, 0, len(text), text, {})


def test_blocks_are_offered_in_the_answering_order(minilm: MiniLMEmbedder) -> None:
    blocks = [
        _block(1, "gym.md", "# The gym\n\nThe gym has a sauna and a pool for members.\n"),
        _block(2, "prices.md", "# Prices\n\nA guest pass costs 12 euros for one visit.\n"),
    ]
    dense = SentenceVectors(minilm)
    ordered = answering_order("How much does a guest pass cost?", blocks, dense)
    assert [b.n for b in ordered] == [2, 1]  # numbers kept, order changed


def test_a_chat_models_prompt_offers_blocks_in_the_answering_order(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "gym.md").write_text(
        "# The gym\n\nThe gym has a sauna and a pool. Guests of members are welcome at the gym.\n"
    )
    (kb / "prices.md").write_text("# Prices\n\nA guest pass costs 12 euros for one visit.\n")
    local = Settings(data_dir=tmp_path / "data")
    model = RecordingModel()
    services = open_services(local, embedder=minilm, model=model)
    question = "How much does a guest pass for the gym cost?"
    try:
        ingest_paths(services.store, [kb], local, indexer=services.indexer, quiet=True)

        async def run() -> AnswerResult:
            try:
                return await services.answerer.answer(question, Options())
            finally:
                await services.aclose()

        result = anyio.run(run)
        expected = answering_order(question, result.blocks, services.answerer.ranking)
    finally:
        services.close()
    assert model.prompts, result.refusal
    prompt = model.prompts[0]
    offered = sorted(result.blocks, key=lambda b: prompt.index(f"[{b.n}] {b.name}"))
    assert offered == expected
    assert expected[0].filename == "prices.md"


class ThreadRecordingRanking:
    """The answerer's sentence ranking, recording the thread and the question of each call."""

    def __init__(self, inner: Similarity) -> None:
        self.inner = inner
        self.calls: list[tuple[int, str]] = []

    def __call__(self, question: str, sentences: Sequence[str]) -> Sequence[float]:
        self.calls.append((threading.get_ident(), question))
        return self.inner(question, sentences)


def test_a_follow_ups_blocks_are_ordered_in_a_worker_thread_by_the_resolved_question(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "gym.md").write_text(
        "# The gym\n\nThe gym has a sauna and a pool. Guests of members are welcome at the gym.\n"
    )
    (kb / "prices.md").write_text("# Prices\n\nA guest pass costs 12 euros for one visit.\n")
    local = Settings(data_dir=tmp_path / "data")
    model = RecordingModel()
    services = open_services(local, embedder=minilm, model=model)
    assert services.answerer.ranking is not None
    ranking = ThreadRecordingRanking(services.answerer.ranking)
    services.answerer.ranking = ranking
    history = (Turn("Can I bring a guest pass to the gym?", ""),)
    try:
        ingest_paths(services.store, [kb], local, indexer=services.indexer, quiet=True)

        async def run() -> tuple[int, AnswerResult]:
            try:
                options = Options(history=history)
                result = await services.answerer.answer("How much does it cost?", options)
                return threading.get_ident(), result
            finally:
                await services.aclose()

        loop_thread, result = anyio.run(run)
        expected = answering_order(result.query, result.blocks, ranking.inner)
    finally:
        services.close()
    assert result.query != "How much does it cost?"  # resolved with the earlier turn
    assert model.prompts, result.refusal
    assert ranking.calls
    assert {q for _, q in ranking.calls} == {result.query}
    assert loop_thread not in {t for t, _ in ranking.calls}  # never on the event loop
    offered = sorted(result.blocks, key=lambda b: model.prompts[0].index(f"[{b.n}] {b.name}"))
    assert offered == expected


class CountingEmbedder:
    """MiniLM, recording the texts of each `embed` call."""

    def __init__(self, inner: MiniLMEmbedder) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.calls: list[tuple[str, ...]] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(tuple(texts))
        return self.inner.embed(texts)


def test_with_a_chat_model_concurrent_questions_are_embedded_for_ranking_in_one_batch(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "gym.md").write_text(GYM)
    (kb / "prices.md").write_text("# Prices\n\nA guest pass costs 12 euros for one visit.\n")
    local = Settings(data_dir=tmp_path / "data")
    embedder = CountingEmbedder(minilm)
    services = open_services(local, embedder=embedder, model=RecordingModel())
    questions = [
        "How much does a guest pass cost?",
        "When is the gym open?",
        "Which evenings are the yoga classes?",
        "Can members bring a guest to the gym?",
    ]
    try:
        ingest_paths(services.store, [kb], local, indexer=services.indexer, quiet=True)
        embedder.calls.clear()

        async def run() -> None:
            try:
                async with anyio.create_task_group() as tg:
                    for question in questions:
                        tg.start_soon(services.answerer.answer, question, Options())
            finally:
                await services.aclose()

        anyio.run(run)
    finally:
        services.close()
    asked = [c for c in embedder.calls if set(c) & set(questions)]
    # Once alone for retrieval each, once together for the ranking: never again in the checks.
    assert sorted(q for c in asked for q in c) == sorted(questions * 2)
    assert sorted(sorted(c) for c in asked if len(c) > 1) == [sorted(questions)]


def test_sources_that_disagree_are_logged_for_the_team(
    tmp_path: Path, minilm: MiniLMEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "refund-policy.md").write_text(
        "Annual plans can be refunded within 30 days of purchase. Contact billing to ask.\n"
    )
    (kb / "billing-faq.md").write_text(
        "Annual plans can be refunded within 14 days of purchase. Contact billing to ask.\n"
    )
    local = Settings(data_dir=tmp_path / "data")
    services = open_services(local, embedder=minilm)
    try:
        ingest_paths(services.store, [kb], local, indexer=services.indexer, quiet=True)

        async def run() -> AnswerResult:
            try:
                return await services.answerer.answer(
                    "Within how many days can annual plans be refunded?", Options()
                )
            finally:
                await services.aclose()

        with caplog.at_level(logging.WARNING, logger="stream_rag"):
            result = anyio.run(run)
    finally:
        services.close()
    assert result.refusal is not None
    assert result.refusal.reason == "conflicting_sources"
    (logged,) = [r.getMessage() for r in caplog.records if "conflicting sources" in r.getMessage()]
    assert "refund-policy.md v1" in logged
    assert "billing-faq.md v1" in logged
    assert "30 days" in logged
    assert "14 days" in logged


def test_with_a_chat_model_over_http_the_check_runs_first_and_the_answering_block_leads(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    """The scripted OpenAI-compatible server and the app, each a real uvicorn, over the sample
    knowledge base: a near miss is refused as `not_answered` on both routes with no request
    reaching the model, and an answered question's prompt offers first the block that answers
    it (the refund policy), not retrieval's first (the pricing page)."""
    fake = create_fake_llm()
    with running_server(fake) as llm_url:
        model = OpenAIChatModel(f"{llm_url}/v1", "fake")
        app = create_app(Settings(data_dir=tmp_path / "data"), embedder=minilm, model=model)
        with (
            running_server(app) as base_url,
            httpx.Client(base_url=base_url, timeout=60) as client,
        ):
            for path in sorted(sample_kb_dir().iterdir()):
                added = client.post("/v1/documents", files={"file": (path.name, path.read_bytes())})
                assert added.status_code == 201, added.text
                wait_ready(client, added.json()["document"]["id"])
            near_miss = "How much does it cost to export a notebook?"
            refused = client.post("/v1/answer", json={"question": near_miss}).json()
            assert refused["refusal"]["reason"] == "not_answered", refused
            chat = client.get("/v1/chat", params={"q": near_miss}).text
            assert '"reason": "not_answered"' in chat
            assert fake.state.stats.requests == 0  # neither route called the model

            asked = "Can I get my money back on an annual plan?"
            answered = client.post("/v1/answer", json={"question": asked}).json()
            by_n = {b["n"]: b["name"] for b in answered["sources"]}
            assert by_n[1] == "pricing.md"  # retrieval ranks the pricing page first ...
            (_, offered), *_ = fake.state.stats.offered
            assert by_n[offered[0]] == "refund-policy.md"  # ... the prompt the refund policy
            assert sorted(offered) == sorted(by_n)
            client.get("/v1/chat", params={"q": asked})
            assert fake.state.stats.offered[-1][1] == offered  # the stream's prompt alike


def wait_ready(client: httpx.Client, doc_id: str) -> None:
    deadline = time.monotonic() + 120  # against a hang only
    while client.get(f"/v1/documents/{doc_id}").json()["versions"][-1]["status"] != "ready":
        assert time.monotonic() < deadline
        time.sleep(0.05)
