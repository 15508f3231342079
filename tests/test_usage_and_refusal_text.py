"""Refusal texts that stand alone (HTTP, OpenAI content, CLI) and the upstream model's token
counts in `usage`, against real servers: the app and the fake model on uvicorn."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from openai import OpenAI

from stream_rag.cli.commands import main
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.model.fake import FakeConfig, create_fake_llm
from stream_rag.model.llm import OpenAIChatModel

from .helpers import running_server
from .test_chat_http import upload

POLICY = b"Annual plans can be refunded within 30 days of purchase. Contact billing to ask."
FAQ = b"Annual plans can be refunded within 14 days of purchase. Contact billing to ask."
FIRMWARE = (
    b"# How do firmware updates work?\n\nFirmware updates install automatically at night while "
    b"the appliance is idle. An update takes about five minutes to finish."
)
DELIVERY = b"# How long does delivery take?\n\nStandard delivery takes 3 to 5 business days."
REFUND_Q = "How long is the refund window for annual plans?"


@pytest.fixture
def server(tmp_path: Path, minilm: MiniLMEmbedder) -> Iterator[str]:
    with running_server(create_fake_llm(FakeConfig())) as llm_url:
        settings = Settings(data_dir=tmp_path / "data", condense="llm")
        model = OpenAIChatModel(f"{llm_url}/v1", "fake")
        with running_server(create_app(settings, embedder=minilm, model=model)) as base_url:
            for name, data in {
                "refund-policy.md": POLICY,
                "billing-faq.md": FAQ,
                "firmware.md": FIRMWARE,
                "delivery.md": DELIVERY,
            }.items():
                upload(base_url, name, data)
            yield base_url


def post(base_url: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(f"{base_url}{path}", json=body, timeout=60)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def assert_names_both_sides(text: str) -> None:
    for part in ("refund-policy.md", "billing-faq.md", "30 days", "14 days"):
        assert part in text
    assert "below" not in text


def test_conflict_refusal_names_both_documents_and_values(server: str) -> None:
    body = post(server, "/v1/answer", {"question": REFUND_Q})
    assert body["refusal"]["reason"] == "conflicting_sources"
    assert_names_both_sides(body["refusal"]["message"])
    reply = OpenAI(base_url=f"{server}/v1", api_key="unused").chat.completions.create(
        model="stream-rag", messages=[{"role": "user", "content": REFUND_Q}]
    )
    assert_names_both_sides(reply.choices[0].message.content or "")


def test_cli_ask_prints_a_refusal_that_stands_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "refund-policy.md").write_bytes(POLICY)
    (kb / "billing-faq.md").write_bytes(FAQ)
    data_dir = str(tmp_path / "data")
    assert main(["--data-dir", data_dir, "ingest", str(kb)]) == 0
    capsys.readouterr()
    assert main(["--data-dir", data_dir, "ask", REFUND_Q]) == 3
    assert_names_both_sides(capsys.readouterr().out)


def test_usage_carries_the_upstream_counts(server: str) -> None:
    question = {"question": "How long does an update take?"}
    body = post(server, "/v1/answer", question)
    assert body["refusal"] is None
    assert body["usage"]["prompt_tokens"] > 0
    assert body["usage"]["completion_tokens"] > 0
    client = OpenAI(base_url=f"{server}/v1", api_key="unused")
    messages: Any = [{"role": "user", "content": question["question"]}]
    reply = client.chat.completions.create(model="stream-rag", messages=messages)
    assert reply.usage is not None
    assert reply.usage.prompt_tokens == body["usage"]["prompt_tokens"]
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    chunks = list(
        client.chat.completions.create(
            model="stream-rag",
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.prompt_tokens == body["usage"]["prompt_tokens"]
    plain = list(client.chat.completions.create(model="stream-rag", messages=messages, stream=True))
    assert all(c.usage is None for c in plain)


def test_a_local_answer_reports_no_upstream_usage(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    with running_server(create_app(settings, embedder=minilm)) as base_url:
        upload(base_url, "firmware.md", FIRMWARE)
        body = post(base_url, "/v1/answer", {"question": "How long does an update take?"})
        assert body["refusal"] is None
        assert body["usage"] is None
        reply = post(
            base_url,
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": "How long does an update take?"}]},
        )
        assert reply["usage"] == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


def test_condense_llm_rewrites_a_follow_up_with_the_model(server: str) -> None:
    history = [{"question": "How do firmware updates work?", "answer": "They install at night."}]
    body = post(server, "/v1/answer", {"question": "How long does it take?", "history": history})
    assert body["query"] == "How do firmware updates work: How long does it take?"
    assert body["refusal"] is None
    assert "five minutes" in body["answer"]
    with httpx.stream(
        "POST",
        f"{server}/v1/chat/completions",
        timeout=60,
        json={
            "stream": True,
            "stream_options": "yes",
            "messages": [{"role": "user", "content": "x"}],
        },
    ) as response:
        response.read()
        assert response.status_code == 400
        assert json.loads(response.text)["error"]["code"] == "invalid_field"
