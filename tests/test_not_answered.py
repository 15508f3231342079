"""When the model says the sources do not answer the question (the rule the prompt gives it),
the refusal says so, with `details` naming the cause, instead of "try rephrasing"; the
non-streaming answer asks for its one second draft as for any failing draft. Over real HTTP,
with scripted models."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from stream_rag.answer.refusals import says_no_answer
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.model.extractive import NO_ANSWER, tokens_of
from stream_rag.types import Message

from .helpers import running_server
from .test_chat_http import read_events, upload

POLICY = b"Annual plans can be refunded within 30 days of purchase. Contact billing to ask."


class ScriptedModel:
    """A chat model that writes the same reply to every request, word by word."""

    name = "scripted"

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.calls = 0

    async def stream(self, messages: Sequence[Message]) -> AsyncGenerator[str, None]:
        self.calls += 1
        for piece in tokens_of(self.reply):
            yield piece


class SecondDraftModel:
    """A chat model that writes `first` to the first request and `then` to every later one,
    keeping each request's last message."""

    name = "second-draft"

    def __init__(self, first: str, then: str) -> None:
        self.replies = [first, then]
        self.calls = 0
        self.seen: list[str] = []

    async def stream(self, messages: Sequence[Message]) -> AsyncGenerator[str, None]:
        reply = self.replies[min(self.calls, 1)]
        self.calls += 1
        self.seen.append(messages[-1].content)
        for piece in tokens_of(reply):
            yield piece


@pytest.mark.parametrize(
    "text",
    [
        NO_ANSWER,
        "The provided sources do not mention how long refunds take.",
        "The documents don't say whether gift cards can be refunded.",
        "I could not find this in the sources.",
        "There is no information about monthly plans in the sources.",
        "The context does not contain an answer to this question.",
    ],
)
def test_a_model_saying_the_sources_do_not_answer_is_recognised(text: str) -> None:
    assert says_no_answer(text)


@pytest.mark.parametrize(
    "text",
    [
        "Annual plans can be refunded within 30 days of purchase.",
        "Refunds are not available for monthly plans.",
        "The source does say that gift cards cannot be refunded.",
        "Contact billing; do not open a dispute with your bank.",
    ],
)
def test_an_answer_is_not_taken_for_no_answer(text: str) -> None:
    assert not says_no_answer(text)


def test_the_refusal_says_the_sources_do_not_answer(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    model = ScriptedModel("The sources do not say whether monthly plans can be refunded.")
    settings = Settings(data_dir=tmp_path / "data")
    with running_server(create_app(settings, embedder=minilm, model=model)) as base_url:
        upload(base_url, "policy.md", POLICY)
        question = {"question": "Can monthly plans be refunded within 30 days?"}
        with httpx.stream("POST", f"{base_url}/v1/chat", json=question, timeout=120) as response:
            events = [(name, data) for name, data, _ in read_events(response) if name != "ping"]
        names = [name for name, _ in events]
        assert names == ["sources", "dropped", "refusal", "done"], names
        refusal: dict[str, Any] = events[2][1]
        assert refusal["reason"] == "no_supported_sentences"  # the documented reason stays
        assert refusal["message"].startswith("The sources do not answer this question")
        assert refusal["details"] == [{"cause": "no_answer_in_sources"}]

        calls = model.calls
        response = httpx.post(f"{base_url}/v1/answer", json=question, timeout=120)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["refusal"]["message"].startswith("The sources do not answer this question")
        assert body["refusal"]["details"] == [{"cause": "no_answer_in_sources"}]
        # The first draft failed verification, so a second was asked for, once, with the
        # reasons; it said the same, and the refusal says what the model said.
        assert model.calls == calls + 2
        assert len(body["attempts"]) == 2
        assert body["attempts"][0]["draft"] == model.reply

        # A draft that states something uncited is still "no supported sentences".
        model.reply = "Monthly plans can always be refunded."
        with httpx.stream(
            "POST", f"{base_url}/v1/chat", json={"question": "Are refunds possible?"}, timeout=120
        ) as response:
            events = [(n, d) for n, d, _ in read_events(response) if n in ("refusal",)]
        assert events[0][1]["reason"] == "no_supported_sentences"
        assert "details" not in events[0][1]


def test_an_abstaining_first_draft_gets_its_second_draft(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    # "I don't know" may be over-cautious: the non-streaming answer asks once more, with the
    # reasons, as for any failing draft, and the gate checks what the second draft says.
    model = SecondDraftModel(
        "I could not find this in the sources.",
        "Annual plans can be refunded within 30 days of purchase [1].",
    )
    settings = Settings(data_dir=tmp_path / "data")
    with running_server(create_app(settings, embedder=minilm, model=model)) as base_url:
        upload(base_url, "policy.md", POLICY)
        question = {"question": "Can annual plans be refunded?"}
        response = httpx.post(f"{base_url}/v1/answer", json=question, timeout=120)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body.get("refusal") is None, body
    assert "within 30 days" in body["answer"]
    assert model.calls == 2
    assert "Your previous answer failed verification" in model.seen[-1]
    assert [attempt["passed"] for attempt in body["attempts"]] == [False, True]
