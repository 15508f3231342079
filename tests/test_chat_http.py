"""The SSE endpoint against a real uvicorn server (in-process test clients buffer responses)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.model.fake import FakeConfig, create_fake_llm
from stream_rag.model.llm import OpenAIChatModel
from stream_rag.sse import EventStreamParser

from .helpers import HTTP_GUARD_S, running_server

POLICY = (
    b"Refunds for annual plans are possible within 30 days. Refunds for monthly plans are "
    b"not possible. Refunds for team plans cover unused seats within 30 days."
)
QUESTION = "Refunds for plans?"


def read_events(response: httpx.Response) -> Iterator[tuple[str, dict[str, Any], float]]:
    """(event name, data, arrival time) for each SSE event; ping comments as ("ping", {})."""
    parser = EventStreamParser()
    for line in response.iter_lines():
        comments = parser.comments
        event = parser.line(line)
        if event is not None:
            yield event.event, event.json(), time.monotonic()
        elif parser.comments > comments:
            yield "ping", {}, time.monotonic()


def upload(base_url: str, name: str, data: bytes) -> str:
    # Generous timeouts: on a loaded machine extraction and indexing take seconds.
    response = httpx.post(f"{base_url}/v1/documents", files={"file": (name, data)}, timeout=120)
    assert response.status_code == 201, response.text
    doc_id: str = response.json()["document"]["id"]
    deadline = time.monotonic() + 120
    url = f"{base_url}/v1/documents/{doc_id}"
    while httpx.get(url, timeout=120).json()["versions"][-1]["status"] != "ready":
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return doc_id


@contextmanager
def app_with_model(
    tmp_path: Path, minilm: MiniLMEmbedder, fake: Starlette, **overrides: Any
) -> Iterator[str]:
    """The app on a real server, answering with `fake` on another, with POLICY uploaded."""
    with running_server(fake) as llm_url:
        settings = Settings(data_dir=tmp_path / "data", **overrides)
        model = OpenAIChatModel(f"{llm_url}/v1", "fake")
        with running_server(create_app(settings, embedder=minilm, model=model)) as base_url:
            upload(base_url, "policy.md", POLICY)
            yield base_url


def test_same_name_documents_are_cited_by_their_own_ids(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    first = b"Annual plans can be refunded within 30 days of purchase."
    second = b"Team plans can be refunded for unused seats within 30 days of adding them."
    with running_server(create_app(settings, embedder=minilm)) as base_url:
        ids = {upload(base_url, "test1.txt", first), upload(base_url, "test1.txt", second)}
        events = []
        # An answer quotes one document, so ask once about each.
        for question in ("Can annual plans be refunded?", "Can unused Team seats be refunded?"):
            with httpx.stream(
                "POST", f"{base_url}/v1/chat", json={"question": question}, timeout=HTTP_GUARD_S
            ) as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                answer = list(read_events(response))
            names = [name for name, _, _ in answer if name != "ping"]
            assert names[0] == "sources"
            assert names[-1] == "done"
            events.extend(answer)
        citations = [c for name, data, _ in events if name == "sentence" for c in data["citations"]]
        assert {c["doc_id"] for c in citations} == ids
        for citation in citations:
            assert citation["name"] == "test1.txt"
            assert set(citation) >= {"n", "doc_id", "version", "sha256", "chunk_id", "url"}
            body = httpx.get(f"{base_url}{citation['url']}", timeout=HTTP_GUARD_S).content
            assert body == (first if b"Annual" in body else second)
            assert body in (first, second)
        by_id = {
            c["doc_id"]: httpx.get(f"{base_url}{c['url']}", timeout=HTTP_GUARD_S).content
            for c in citations
        }
        assert sorted(by_id.values()) == sorted([first, second])


def test_get_for_eventsource_and_input_errors(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    with running_server(create_app(settings, embedder=minilm)) as base_url:
        upload(base_url, "faq.md", b"Support answers email within one business day.")
        with httpx.stream(
            "GET",
            f"{base_url}/v1/chat",
            params={"q": "How fast does support answer email?"},
            timeout=HTTP_GUARD_S,
        ) as response:
            names = [name for name, _, _ in read_events(response)]
        assert names[0] == "sources"
        assert "sentence" in names
        for body in ({}, {"question": ""}, {"question": "x", "top_k": 0}, {"question": 3}):
            bad = httpx.post(f"{base_url}/v1/chat", json=body, timeout=HTTP_GUARD_S)
            assert bad.status_code == 400
            assert bad.json()["error"]["code"] == "invalid_field"
        assert (
            httpx.get(
                f"{base_url}/v1/chat", params={"q": "x", "top_k": "a"}, timeout=HTTP_GUARD_S
            ).status_code
            == 400
        )


def test_sentences_arrive_while_the_model_is_still_writing(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    fake = create_fake_llm(FakeConfig(tokens_per_second=10))
    with (
        app_with_model(tmp_path, minilm, fake, sse_ping_s=0.3) as base_url,
        httpx.stream(
            "POST", f"{base_url}/v1/chat", json={"question": QUESTION}, timeout=HTTP_GUARD_S
        ) as response,
    ):
        events = list(read_events(response))
    sentence_times = [t for name, _, t in events if name == "sentence"]
    assert len(sentence_times) >= 2
    # The first sentence is on screen before the model has written its last piece (an order
    # of events on one clock, with seconds between them at 10 pieces a second).
    (timeline,) = fake.state.stats.timelines.values()
    assert sentence_times[0] < timeline[-1][1]
    assert any(name == "ping" for name, _, _ in events)


def test_client_disconnect_cancels_the_upstream_request(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    # At 2 pieces a second the answer would take half a minute: it must not complete.
    fake = create_fake_llm(FakeConfig(tokens_per_second=2, sentences=3))
    # No grace for a resume (tests/test_resume.py has it): the answer stops with its client.
    with app_with_model(tmp_path, minilm, fake, resume_grace_s=0) as base_url:
        with httpx.stream(
            "POST", f"{base_url}/v1/chat", json={"question": QUESTION}, timeout=120
        ) as response:
            for name, _, _ in read_events(response):
                if name == "sentence":
                    break
        deadline = time.monotonic() + 60  # against a hang only
        while not fake.state.stats.disconnected:
            assert time.monotonic() < deadline, "the upstream request was never closed"
            time.sleep(0.01)
    assert fake.state.stats.completed == 0
