"""Refusals before generation, the non-streaming path, and the OpenAI-compatible endpoint,
against real servers: the app on uvicorn, the fake model on uvicorn, the official client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from openai import OpenAI
from starlette.applications import Starlette

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.model.fake import FakeConfig, create_fake_llm
from stream_rag.model.llm import OpenAIChatModel

from .helpers import HTTP_GUARD_S, running_server
from .test_chat_http import read_events, upload

REFUND_30 = b"Annual plans can be refunded within 30 days of purchase. Contact billing to ask."
REFUND_14 = b"Annual plans can be refunded within 14 days of purchase. Contact billing to ask."
SYNC = b"Notes sync automatically when the connection returns after being offline."


class Stack:
    """The app on a real server, talking to a fake model on another real server."""

    def __init__(self, base_url: str, fake: Starlette) -> None:
        self.base_url = base_url
        self.fake = fake

    @property
    def model_calls(self) -> int:
        calls: int = self.fake.state.stats.requests
        return calls

    def chat(self, question: str, **options: Any) -> list[tuple[str, dict[str, Any]]]:
        with httpx.stream(
            "POST",
            f"{self.base_url}/v1/chat",
            json={"question": question, **options},
            timeout=HTTP_GUARD_S,
        ) as response:
            return [(n, d) for n, d, _ in read_events(response) if n != "ping"]

    def answer(self, question: str, **options: Any) -> dict[str, Any]:
        response = httpx.post(
            f"{self.base_url}/v1/answer", json={"question": question, **options}, timeout=60
        )
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body


@pytest.fixture
def stack_factory(tmp_path: Path, minilm: MiniLMEmbedder) -> Iterator[Any]:
    exits: list[Any] = []

    def make(config: FakeConfig, documents: dict[str, bytes]) -> Stack:
        fake = create_fake_llm(config)
        llm = running_server(fake)
        llm_url = llm.__enter__()
        exits.append(llm)
        settings = Settings(data_dir=tmp_path / f"data{len(exits)}")
        model = OpenAIChatModel(f"{llm_url}/v1", "fake")
        app = running_server(create_app(settings, embedder=minilm, model=model))
        base_url = app.__enter__()
        exits.append(app)
        for name, data in documents.items():
            upload(base_url, name.split("#")[0], data)
        return Stack(base_url, fake)

    yield make
    for context in reversed(exits):
        context.__exit__(None, None, None)


def test_conflicting_sources_refuse_before_the_model(stack_factory: Any) -> None:
    stack = stack_factory(FakeConfig(), {"policy-a.md": REFUND_30, "policy-b.md": REFUND_14})
    events = stack.chat("How long is the refund window for annual plans?")
    names = [n for n, _ in events]
    assert names == ["sources", "refusal", "done"]
    refusal = events[1][1]
    assert refusal["reason"] == "conflicting_sources"
    conflict = refusal["details"][0]
    text = json.dumps(conflict)
    assert "30 days" in text
    assert "14 days" in text
    doc_ids = {b["doc_id"] for b in events[0][1]["blocks"]}
    assert len(doc_ids) == 2
    assert all(doc_id in text for doc_id in doc_ids)
    assert stack.model_calls == 0
    # Overridable per request: without the detector the model is asked.
    allowed = stack.chat("How long is the refund window for annual plans?", check_conflicts=False)
    assert "refusal" not in [n for n, _ in allowed] or stack.model_calls == 1
    assert stack.model_calls == 1


def test_off_topic_question_is_low_evidence(stack_factory: Any) -> None:
    stack = stack_factory(FakeConfig(), {"policy.md": REFUND_30, "sync.md": SYNC})
    events = stack.chat("What is the best recipe for sourdough bread?")
    assert [n for n, _ in events] == ["sources", "refusal", "done"]
    assert events[1][1]["reason"] == "low_evidence"
    assert events[1][1]["details"][0]["evidence"] < events[1][1]["details"][0]["threshold"]
    assert stack.model_calls == 0
    on_topic = stack.chat("How long is the refund window for annual plans?")
    assert "sentence" in [n for n, _ in on_topic]
    assert stack.model_calls == 1
    forced = stack.chat("What is the best recipe for sourdough bread?", min_evidence=0)
    assert [n for n, _ in forced][1] != "refusal" or forced[1][1]["reason"] != "low_evidence"
    assert stack.model_calls == 2


PLANS = (
    b"# Plans\n\nThe Pro plan costs $12 per user per month. The Team plan costs $25 per user "
    b"per month and includes single sign-on. The X200 router has a 2-year warranty."
)


@pytest.mark.parametrize(
    ("question", "missing"),
    [
        ("How much does the Enterprise plan cost?", ["Enterprise"]),
        ("How long is the warranty of the X500 router?", ["X500"]),
        ("Does the Team plan work in Internet Explorer?", ["Internet", "Explorer"]),
    ],
)
def test_a_name_no_source_has_is_low_evidence(
    stack_factory: Any, question: str, missing: list[str]
) -> None:
    # The blocks share every other word with the question, so the model was asked and the
    # gate passed the Pro and Team prices as the answer about the Enterprise plan.
    stack = stack_factory(FakeConfig(), {"plans.md": PLANS, "sync.md": SYNC})
    events = stack.chat(question)
    assert [n for n, _ in events] == ["sources", "refusal", "done"]
    refusal = events[1][1]
    assert refusal["reason"] == "low_evidence"
    assert refusal["details"][0]["not_in_sources"] == missing
    assert stack.model_calls == 0
    # Named where the sources name it, sentence-initial or an interjection: asked.
    for asked in ("How much does the Team plan cost?", "Is it OK that Pro costs $12 a month?"):
        assert "sentence" in [n for n, _ in stack.chat(asked)]


def test_a_question_asking_several_things_refuses_for_a_name_only_if_every_part_has_one(
    stack_factory: Any,
) -> None:
    # The finding: "the Pro plan and the Basic plan" was refused whole ("does not seem to
    # cover this question") over Basic, though the Pro plan's price is in the sources.
    stack = stack_factory(FakeConfig(), {"plans.md": PLANS, "sync.md": SYNC})
    for question in (
        "What is the price of the Pro plan and the Basic plan?",
        "How much does the Basic plan cost, and how does sync work offline?",
    ):
        events = stack.chat(question)
        assert "sentence" in [n for n, _ in events], (question, events)
    # Every part names something no source has: refused, naming them all.
    events = stack.chat("What is the price of the Basic plan and the Enterprise plan?")
    assert [n for n, _ in events] == ["sources", "refusal", "done"]
    assert events[1][1]["details"][0]["not_in_sources"] == ["Basic", "Enterprise"]
    # One thing asked, about a name no source has: refused as before.
    events = stack.chat("What is the price of the Basic plan?")
    assert [n for n, _ in events] == ["sources", "refusal", "done"]
    assert events[1][1]["details"][0]["not_in_sources"] == ["Basic"]


def test_a_name_only_in_the_situation_told_before_the_question_is_asked(
    stack_factory: Any,
) -> None:
    # The finding: "My flight to Spain landed four hours late, how much can I claim?" was
    # refused because no source names Spain; the customer's situation is not what is asked.
    stack = stack_factory(FakeConfig(), {"plans.md": PLANS, "sync.md": SYNC})
    for question in (
        "I moved to Lisbon last week, how much does the Team plan cost?",
        "We are a school in Norway. How much does the Team plan cost?",
    ):
        calls = stack.model_calls
        events = stack.chat(question)
        refused = [e for n, e in events if n == "refusal"]
        assert not refused or refused[0]["reason"] != "low_evidence", (question, events)
        assert stack.model_calls == calls + 1
    # A name in what is asked, or in a question before another, still refuses.
    for question, missing in (
        ("I moved to Lisbon last week, how much does the Enterprise plan cost?", ["Enterprise"]),
        ("Does the Enterprise plan include single sign-on, can I try it?", ["Enterprise"]),
    ):
        events = stack.chat(question)
        assert [n for n, _ in events] == ["sources", "refusal", "done"], question
        assert events[1][1]["details"][0]["not_in_sources"] == missing


ABOUT = b"Kestrel Cloud is a note-taking service made by Kestrel Labs in Oslo."


def test_a_name_the_knowledge_base_has_elsewhere_is_asked(stack_factory: Any) -> None:
    # The product's own name is in another document than the one that answers: the block
    # retrieved for the price lacks it, the knowledge base does not.
    stack = stack_factory(FakeConfig(), {"plans.md": PLANS, "about.md": ABOUT, "sync.md": SYNC})
    question = "How much does the Kestrel Team plan cost per user per month?"
    events = stack.chat(question, top_k=1)
    assert [b["name"] for b in events[0][1]["blocks"]] == ["plans.md"]
    assert "sentence" in [n for n, _ in events], events
    # A name no document has still refuses with the same single block.
    events = stack.chat("How much does the Enterprise Team plan cost per user per month?", top_k=1)
    assert [n for n, _ in events] == ["sources", "refusal", "done"]
    assert events[1][1]["details"][0]["not_in_sources"] == ["Enterprise"]


def test_answer_regenerates_once_with_reasons(stack_factory: Any) -> None:
    stack = stack_factory(
        FakeConfig(unissued=1.0, fix_on_retry=True), {"policy.md": REFUND_30, "sync.md": SYNC}
    )
    body = stack.answer("How long is the refund window for annual plans?")
    assert body["refusal"] is None
    assert len(body["attempts"]) == 2
    first, second = body["attempts"]
    assert not first["passed"]
    assert {v["reason"] for v in first["verdicts"]} == {"unknown_citation"}
    assert second["passed"]
    assert body["answer"]
    assert "30 days" in body["answer"]
    assert body["sentences"][0]["citations"][0]["name"] == "policy.md"
    assert stack.model_calls == 2


def test_answer_refuses_after_two_failed_drafts(stack_factory: Any) -> None:
    stack = stack_factory(FakeConfig(changed_number=1.0), {"policy.md": REFUND_30})
    body = stack.answer("How long is the refund window for annual plans?")
    assert body["answer"] is None
    assert body["refusal"]["reason"] == "unsupported_answer"
    assert len(body["attempts"]) == 2
    assert all(not a["passed"] for a in body["attempts"])
    assert {v["reason"] for a in body["attempts"] for v in a["verdicts"]} == {"number_mismatch"}
    assert stack.model_calls == 2


def test_answer_input_errors(stack_factory: Any) -> None:
    stack = stack_factory(FakeConfig(), {"policy.md": REFUND_30})
    for bad in (
        {},
        {"question": ""},
        {"question": "x", "min_evidence": 2},
        {"question": "x", "check_conflicts": "no"},
    ):
        response = httpx.post(f"{stack.base_url}/v1/answer", json=bad, timeout=HTTP_GUARD_S)
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "invalid_field"


def test_openai_client_streams_only_gated_sentences(stack_factory: Any) -> None:
    # Faithful content in awkward marker formats; fabrications are covered below.
    stack = stack_factory(
        FakeConfig(split_markers=1.0, label_markers=0.5), {"policy.md": REFUND_30, "sync.md": SYNC}
    )
    client = OpenAI(base_url=f"{stack.base_url}/v1", api_key="unused")
    assert [m.id for m in client.models.list()] == ["stream-rag"]
    question = "How long is the refund window for annual plans, and how does offline sync work?"
    chunks = list(
        client.chat.completions.create(
            model="stream-rag", messages=[{"role": "user", "content": question}], stream=True
        )
    )
    extensions = [c.model_extra.get("stream_rag") for c in chunks if c.model_extra]
    assert extensions[0] is not None
    assert "sources" in extensions[0]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    sentence_exts = [e for e in extensions if e and "citations" in e]
    assert sentence_exts
    issued = {b["n"] for b in extensions[0]["sources"]}
    for extension in sentence_exts:
        assert {c["n"] for c in extension["citations"]} <= issued
    assert "[" not in text
    assert chunks[-1].choices[0].finish_reason == "stop"
    whole = client.chat.completions.create(
        model="stream-rag", messages=[{"role": "user", "content": question}]
    )
    extra = whole.model_extra or {}
    assert "stream_rag" in extra
    assert whole.choices[0].message.content
    assert extra["stream_rag"]["attempts"]


def test_openai_client_never_sees_a_fabricated_sentence(stack_factory: Any) -> None:
    stack = stack_factory(FakeConfig(unissued=1.0), {"policy.md": REFUND_30, "sync.md": SYNC})
    client = OpenAI(base_url=f"{stack.base_url}/v1", api_key="unused")
    chunks = list(
        client.chat.completions.create(
            model="stream-rag",
            messages=[{"role": "user", "content": "How long is the refund window?"}],
            stream=True,
        )
    )
    extensions = [(c.model_extra or {}).get("stream_rag", {}) for c in chunks]
    assert not any("citations" in e for e in extensions)
    refusal = next(e["refusal"] for e in extensions if "refusal" in e)
    assert refusal["reason"] == "no_supported_sentences"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == refusal["message"]


def test_openai_client_sees_refusals_as_messages(stack_factory: Any) -> None:
    stack = stack_factory(FakeConfig(), {"policy.md": REFUND_30})
    client = OpenAI(base_url=f"{stack.base_url}/v1", api_key="unused")
    reply = client.chat.completions.create(
        model="stream-rag",
        messages=[{"role": "user", "content": "Who won the 1998 football world cup?"}],
    )
    assert reply.choices[0].message.content
    assert (reply.model_extra or {})["stream_rag"]["refusal"]["reason"] == "low_evidence"
    chunks = list(
        client.chat.completions.create(
            model="stream-rag",
            messages=[{"role": "user", "content": "Who won the 1998 football world cup?"}],
            stream=True,
        )
    )
    refusals = [
        c.model_extra["stream_rag"]["refusal"]
        for c in chunks
        if c.model_extra and "refusal" in c.model_extra.get("stream_rag", {})
    ]
    assert refusals[0]["reason"] == "low_evidence"
    assert stack.model_calls == 0


def test_names_are_words_with_a_capital_inside_a_sentence_or_a_letter_and_digits() -> None:
    from stream_rag.language.terms import names

    assert names("How much does the Enterprise plan cost?") == ["Enterprise"]
    assert names("X500 reset? Hi. Is it OK to use PayPal?") == ["X500", "PayPal"]
    # Title Case and capitals say nothing of names; a model name still counts.
    assert names("How To Change My Billing Address In Acme?") == []
    assert names("HOW DO I RESET THE X500?") == ["X500"]
    assert names("Does Acme work in Internet Explorer?") == ["Acme", "Internet", "Explorer"]
