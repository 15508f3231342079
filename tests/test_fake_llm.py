from __future__ import annotations

import json
import time
from dataclasses import replace

import httpx
import pytest

from stream_rag.answer.prompt import build_messages
from stream_rag.answer.results import Attempt, Judged, revision_request
from stream_rag.gate.citations import extract
from stream_rag.gate.lexical import Verdict
from stream_rag.gate.segment import split_segments
from stream_rag.model.fake import FakeConfig, compose, create_fake_llm, write
from stream_rag.prompt_format import parse_blocks, parse_question
from stream_rag.retrieve.hybrid import Block
from stream_rag.types import Message

from .helpers import HTTP_GUARD_S, running_server


def block(n: int, text: str, name: str = "policy.md") -> Block:
    return Block(n, f"doc_{n}:v1:0", f"doc_{n}", 1, "0" * 64, name, name, 0, len(text), text, {})


BLOCKS = [
    block(1, "Annual plans can be refunded within 30 days of purchase. Monthly plans are not."),
    block(2, "Notes sync automatically when the connection returns after being offline."),
    block(3, "Two-factor authentication works with authenticator apps and security keys."),
]
QUESTION = "Can I get a refund on annual plans and how does sync work offline?"


def messages(feedback: str | None = None) -> list[dict[str, str]]:
    return [m.to_json() for m in build_messages(QUESTION, BLOCKS, feedback)]


def test_prompt_round_trip() -> None:
    prompt = build_messages(QUESTION, BLOCKS)[1].content
    assert parse_question(prompt) == QUESTION
    assert parse_blocks(prompt) == {b.n: b.text for b in BLOCKS}
    system = build_messages(QUESTION, BLOCKS)[0]
    assert "[1], [2], [3]" in system.content
    assert isinstance(system, Message)


def test_faithful_answers_cite_the_right_blocks() -> None:
    pieces, behaviours = compose(FakeConfig(), messages())
    text = "".join(pieces)
    assert set(behaviours) == {"faithful"}
    assert "Annual plans can be refunded within 30 days of purchase. [1]" in text
    _, citations = extract(text)
    assert {c.n for c in citations} <= {1, 2, 3}


@pytest.mark.parametrize("behaviour", ["unissued", "wrong_block", "changed_number", "extra_claim"])
def test_each_fabrication(behaviour: str) -> None:
    config = FakeConfig(**{behaviour: 1.0})  # type: ignore[arg-type]
    pieces, behaviours = compose(config, messages())
    text = "".join(pieces)
    assert set(behaviours) == {behaviour}
    _, citations = extract(text)
    if behaviour == "unissued":
        assert all(c.n > 3 for c in citations)
    if behaviour == "changed_number":
        assert "within 30 days" not in text


def test_markers_split_and_as_labels() -> None:
    pieces, _ = compose(FakeConfig(split_markers=1.0, label_markers=1.0), messages())
    assert pieces[0] == "["
    assert pieces[1].isdigit()
    assert pieces[2] == "]"


def test_deterministic_per_seed_and_fixed_on_retry() -> None:
    config = FakeConfig(seed=5, unissued=0.5, changed_number=0.5)
    assert compose(config, messages()) == compose(config, messages())
    retried = FakeConfig(unissued=1.0, fix_on_retry=True)
    _, behaviours = compose(retried, messages("Your draft failed: ..."))
    assert set(behaviours) == {"faithful"}


def test_openai_framing_over_http() -> None:
    app = create_fake_llm(FakeConfig(tokens_per_second=200))
    with running_server(app) as base_url:
        with httpx.stream(
            "POST",
            f"{base_url}/v1/chat/completions",
            json={"model": "fake", "messages": messages(), "stream": True},
            timeout=HTTP_GUARD_S,
        ) as response:
            lines = [line for line in response.iter_lines() if line]
        whole = httpx.post(
            f"{base_url}/v1/chat/completions",
            json={"model": "fake", "messages": messages()},
            timeout=HTTP_GUARD_S,
        ).json()
        assert (
            httpx.get(f"{base_url}/v1/models", timeout=HTTP_GUARD_S).json()["data"][0]["id"]
            == "fake-llm"
        )
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line[6:]) for line in lines[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    streamed = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    assert streamed == whole["choices"][0]["message"]["content"]
    assert app.state.stats.completed == 2


def test_scripted_stall_and_error() -> None:
    stalled = create_fake_llm(FakeConfig(stall_after=2, stall_s=0.5))
    with running_server(stalled) as base_url:
        start = time.monotonic()
        httpx.post(
            f"{base_url}/v1/chat/completions",
            json={"model": "f", "messages": messages(), "stream": True},
            timeout=HTTP_GUARD_S,
        ).read()
        assert time.monotonic() - start >= 0.5
    broken = create_fake_llm(FakeConfig(error_after=3))
    with (
        running_server(broken) as base_url,
        pytest.raises(httpx.HTTPError),
        httpx.stream(
            "POST",
            f"{base_url}/v1/chat/completions",
            json={"model": "f", "messages": messages(), "stream": True},
            timeout=HTTP_GUARD_S,
        ) as response,
    ):
        for _ in response.iter_lines():
            pass


def test_timelines_are_bounded_and_kept_per_newest_request() -> None:
    app = create_fake_llm()
    app.state.stats.keep = 2
    asked = ["Refunds on annual plans?", "How does offline sync work?", "Which 2FA apps work?"]
    with running_server(app) as base_url:
        for question in [*asked, asked[1]]:
            body = {
                "model": "fake",
                "messages": messages_for(question),
                "stream": True,
            }
            httpx.post(f"{base_url}/v1/chat/completions", json=body, timeout=HTTP_GUARD_S).read()
    timelines = app.state.stats.timelines
    assert list(timelines) == [asked[2], asked[1]]  # the oldest question went first
    # The repeated question holds its newest request's pieces, not both requests'.
    assert len(timelines[asked[1]]) == len(compose(FakeConfig(), messages_for(asked[1]))[0])


def messages_for(question: str) -> list[dict[str, str]]:
    return [m.to_json() for m in build_messages(question, BLOCKS)]


@pytest.mark.parametrize("failed", [0, 1])
def test_revised_on_retry_without_the_sentences_that_failed(failed: int) -> None:
    """`revise_on_retry`: the second draft is the first less the sentences the revision request
    (the server's own wording of it) names, a table row too; without it, the same draft."""
    config = FakeConfig(seed=3, markup=0.5, revise_on_retry=True)
    asked = [m.to_json() for m in build_messages("Are annual or monthly plans refunded?", BLOCKS)]
    first = write(config, asked)
    draft = "".join(compose(config, asked)[0])
    assert len(first) == len(split_segments(draft)) == 2
    assert {w.behaviour for w in first} == {"faithful", "markup"}
    judged = tuple(
        Judged(i, s, Verdict(i != failed, "claim_mismatch", (1,), 0.0, 'says "not": x'))
        for i, s in enumerate(split_segments(draft))
    )
    feedback = build_messages(
        "Are annual or monthly plans refunded?",
        BLOCKS,
        revision_request(Attempt(draft, judged), len(BLOCKS)),
    )
    retry = [m.to_json() for m in feedback]
    assert write(config, retry) == [w for i, w in enumerate(first) if i != failed]
    stubborn = replace(config, revise_on_retry=False)
    assert write(stubborn, retry) == write(stubborn, asked) == first
