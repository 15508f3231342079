"""The fake model's streamed reply (model/fake_stream.py) against one built here the plain way:
each chunk a whole `json.dumps` of OpenAI's chunk object, each piece due one pace after the
last (a stall before piece `stall_after`), as the per-token generator it replaced sent them."""

from __future__ import annotations

import importlib.util
import json
import time
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_rag.answer.prompt import build_messages
from stream_rag.model.fake import FakeConfig, compose, create_fake_llm
from stream_rag.model.fake_stream import plan
from stream_rag.retrieve.hybrid import Block

from .helpers import HTTP_GUARD_S, running_server

TEXTS = [
    'Annual plans can be refunded within 30 days. The "Pro" plan costs $12 per month.',
    "Notes sync automatically — même hors ligne — when the connection returns.",
    "Two-factor authentication works with authenticator apps and security keys.",
]
QUESTION = "Can I get a refund on the Pro plan and how does sync work?"


def messages(question: str = QUESTION) -> list[dict[str, str]]:
    blocks = [
        Block(n, f"d{n}:v1:0", f"d{n}", 1, "0" * 64, "kb.md", "kb.md", 0, len(t), t, {})
        for n, t in enumerate(TEXTS, start=1)
    ]
    return [m.to_json() for m in build_messages(question, blocks)]


def expected(
    config: FakeConfig, pieces: list[str], fields: dict[str, Any], usage: dict[str, int] | None
) -> tuple[bytes, list[tuple[str, float]]]:
    """The body and each sent piece's due time (s after the stream starts), the plain way."""

    def chunk(delta: dict[str, str], finish: str | None = None) -> bytes:
        choices = [{"index": 0, "delta": delta, "finish_reason": finish}]
        return f"data: {json.dumps({**fields, 'choices': choices})}\n\n".encode()

    body = [chunk({"role": "assistant", "content": ""})]
    schedule: list[tuple[str, float]] = []
    pace = 1 / config.tokens_per_second if config.tokens_per_second else 0.0
    due = 0.0
    for i, piece in enumerate(pieces):
        if i == config.error_after:
            return b"".join(body), schedule
        due += pace + (config.stall_s if i == config.stall_after else 0.0)
        schedule.append((piece, due))
        body.append(chunk({"content": piece}))
    body.append(chunk({}, "stop"))
    if usage is not None:  # in the order the generator wrote its fields
        last = {"id": fields["id"], "choices": [], "usage": usage, "object": fields["object"]}
        last |= {"created": fields["created"], "model": fields["model"]}
        body.append(f"data: {json.dumps(last)}\n\n".encode())
    body.append(b"data: [DONE]\n\n")
    return b"".join(body), schedule


FIELDS = {"id": "chatcmpl-7", "object": "chat.completion.chunk", "created": 1, "model": "m"}


@settings(deadline=None, max_examples=200)
@given(
    pieces=st.lists(st.text(min_size=1, max_size=6), max_size=12),
    tokens_per_second=st.sampled_from([0.0, 5.0, 50.0, 1000.0]),
    stall_after=st.one_of(st.none(), st.integers(0, 13)),
    stall_s=st.sampled_from([0.0, 0.25, 3.0]),
    error_after=st.one_of(st.none(), st.integers(0, 13)),
    with_usage=st.booleans(),
)
def test_plan_sends_the_plain_bytes_on_the_plain_schedule(
    pieces: list[str],
    tokens_per_second: float,
    stall_after: int | None,
    stall_s: float,
    error_after: int | None,
    with_usage: bool,
) -> None:
    config = FakeConfig(
        tokens_per_second=tokens_per_second,
        stall_after=stall_after,
        stall_s=stall_s,
        error_after=error_after,
    )
    usage = {"prompt_tokens": 3, "completion_tokens": len(pieces), "total_tokens": 3}
    body, schedule = expected(config, pieces, FIELDS, usage if with_usage else None)
    reply = plan(config, pieces, FIELDS, usage if with_usage else None)
    assert b"".join(step.body for step in reply.steps) == body
    sent = [(piece, step.due) for step in reply.steps for piece in step.pieces]
    assert [piece for piece, _ in sent] == [piece for piece, _ in schedule]
    assert [due for _, due in sent] == pytest.approx([due for _, due in schedule])
    assert reply.breaks == (error_after is not None and error_after < len(pieces))
    # One timer per moment: no two steps share a due time, and none goes back.
    dues = [step.due for step in reply.steps]
    assert dues == sorted(set(dues))


HTTP = ["h11"] + (["httptools"] if importlib.util.find_spec("httptools") else [])
CONFIGS = [
    FakeConfig(),
    FakeConfig(tokens_per_second=200, split_markers=1.0),
    FakeConfig(tokens_per_second=100, stall_after=3, stall_s=0.1, label_markers=1.0),
    FakeConfig(error_after=5, unissued=1.0),
    FakeConfig(tokens_per_second=100, error_after=4, changed_number=1.0),
    FakeConfig(seed=3, paraphrase=0.5, extra_claim=0.3, tokens_per_second=300, model="x"),
]


@pytest.mark.parametrize("http", HTTP)
@pytest.mark.parametrize("config", CONFIGS, ids=range(len(CONFIGS)))
def test_streams_over_http_as_the_plain_generator_did(config: FakeConfig, http: str) -> None:
    app = create_fake_llm(config)
    request = {"model": "asked-for", "messages": messages(), "stream": True}
    if config.error_after is None:
        request["stream_options"] = {"include_usage": True}
    received: list[bytes] = []
    with running_server(app, http=http) as base_url:
        asked_at = time.monotonic()
        try:
            with httpx.stream(
                "POST", f"{base_url}/v1/chat/completions", json=request, timeout=HTTP_GUARD_S
            ) as reply:
                assert reply.headers["content-type"] == "text/event-stream; charset=utf-8"
                received.extend(reply.iter_raw())
        except httpx.RemoteProtocolError:
            assert config.error_after is not None  # the scripted break: the body is cut off
    body = b"".join(received)
    pieces = compose(config, messages())[0]
    first = json.loads(body.split(b"\n\n")[0][6:])
    fields = {k: first[k] for k in ("id", "object", "created", "model")}
    assert fields["id"] == "chatcmpl-1"
    assert fields["model"] == "asked-for"
    usage = {"prompt_tokens": sum(len(m["content"].split()) for m in messages())}
    usage |= {"completion_tokens": len(pieces)}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    plain, schedule = expected(
        config, pieces, fields, usage if "stream_options" in request else None
    )
    assert body == plain
    timeline = app.state.stats.timelines[QUESTION]
    assert [piece for piece, _ in timeline] == [piece for piece, _ in schedule]
    # Paced: a busy machine can make a piece late, never early (uvicorn's loop may be uvloop,
    # whose timers round to a millisecond).
    for (_, sent), (_, due) in zip(timeline, schedule, strict=True):
        assert sent - asked_at >= due - 0.002
    stats = app.state.stats
    assert (stats.completed, stats.disconnected) == (int(config.error_after is None), 0)


@pytest.mark.parametrize("http", HTTP)
def test_a_client_that_leaves_is_counted_and_the_stream_stops(http: str) -> None:
    app = create_fake_llm(FakeConfig(tokens_per_second=5))
    request = {"model": "m", "messages": messages(), "stream": True}
    with running_server(app, http=http) as base_url:
        with httpx.stream(
            "POST", f"{base_url}/v1/chat/completions", json=request, timeout=HTTP_GUARD_S
        ) as reply:
            next(reply.iter_raw())
        stats = app.state.stats
        deadline = time.monotonic() + 10
        while not stats.disconnected:
            assert time.monotonic() < deadline, "the stream never saw its client leave"
            time.sleep(0.01)
        sent = len(stats.timelines[QUESTION])
    assert (stats.completed, stats.disconnected, len(stats.disconnect_times)) == (0, 1, 1)
    assert sent < len(compose(FakeConfig(), messages())[0])


@pytest.mark.parametrize("http", HTTP)
def test_whole_answers_refusals_and_models_unchanged(http: str) -> None:
    app = create_fake_llm(FakeConfig(reject_fields=("logprobs",)))
    with running_server(app, http=http) as base_url:
        url = f"{base_url}/v1/chat/completions"
        whole = httpx.post(
            url, json={"model": "m", "messages": messages()}, timeout=HTTP_GUARD_S
        ).json()
        refused = httpx.post(
            url, json={"model": "m", "messages": [], "logprobs": True}, timeout=HTTP_GUARD_S
        )
        listed = httpx.get(f"{base_url}/v1/models", timeout=HTTP_GUARD_S).json()
        wrong_method = httpx.get(url, timeout=HTTP_GUARD_S)
    assert whole["object"] == "chat.completion"
    assert whole["choices"][0]["message"]["content"] == "".join(
        compose(FakeConfig(), messages())[0]
    )
    assert whole["usage"]["completion_tokens"] == len(compose(FakeConfig(), messages())[0])
    assert refused.status_code == 400
    assert refused.json()["error"]["param"] == "logprobs"
    assert listed["data"][0]["id"] == "fake-llm"
    assert wrong_method.status_code == 405
    assert app.state.stats.requests == 2
