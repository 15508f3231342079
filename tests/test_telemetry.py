"""`/metrics` (Prometheus text), request ids in headers, `done`/`error` and the JSON request log."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import httpx
import pytest

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.model.fake import FakeConfig, create_fake_llm
from stream_rag.model.llm import OpenAIChatModel

from .helpers import HTTP_GUARD_S, running_server
from .test_chat_http import read_events, upload

REFUNDS = (
    b"Annual plans can be refunded within 30 days of purchase. "
    b"A refund of an annual plan goes back to the card that paid for the plan. "
    b"Annual plans bought through the app store are refunded by the store. "
    b"Monthly plans are not refunded, but you can cancel them at any time."
)


def sample(text: str, name: str, labels: str = "") -> float:
    """The value of one sample in a Prometheus text exposition (0 when absent)."""
    pattern = re.escape(name + (f"{{{labels}}}" if labels else "")) + r" ([0-9.e+-]+)"
    found = re.search(rf"^{pattern}$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def test_metrics_count_a_gated_answer_and_its_request(
    tmp_path: Path, minilm: MiniLMEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    fake = create_fake_llm(FakeConfig(unissued=0.5, seed=6))
    with running_server(fake) as llm_url:
        model = OpenAIChatModel(f"{llm_url}/v1", "fake")
        app = create_app(Settings(data_dir=tmp_path / "data"), embedder=minilm, model=model)
        with (
            caplog.at_level(logging.INFO, logger="stream_rag.access"),
            running_server(app) as base_url,
        ):
            upload(base_url, "refunds.txt", REFUNDS)
            with httpx.stream(
                "POST",
                f"{base_url}/v1/chat",
                json={"question": "Can annual plans be refunded?"},
                headers={"X-Request-ID": "load-17"},
                timeout=HTTP_GUARD_S,
            ) as response:
                events = [(n, d) for n, d, _ in read_events(response) if n != "ping"]
            assert response.headers["x-request-id"] == "load-17"
            scraped = httpx.get(f"{base_url}/metrics", timeout=HTTP_GUARD_S)
            bad = httpx.get(
                f"{base_url}/healthz", headers={"X-Request-ID": "a b" * 40}, timeout=HTTP_GUARD_S
            )
    assert scraped.headers["content-type"].startswith("text/plain; version=")
    # Read after the server stopped: every request has finished and been counted.
    text = app.state.telemetry.render().decode()
    done = events[-1][1]
    assert events[-1][0] == "done"
    assert done["request_id"] == "load-17"
    emitted = sum(1 for name, _ in events if name == "sentence")
    dropped = [d["reason"] for name, d in events if name == "dropped"]
    assert emitted == done["sentences"] >= 1, events
    assert sample(text, "stream_rag_sentences_emitted_total") == emitted
    for reason in set(dropped):
        assert sample(text, "stream_rag_sentences_dropped_total", f'reason="{reason}"') == (
            dropped.count(reason)
        )
    assert sample(text, "stream_rag_first_sentence_seconds_count") == 1
    assert sample(text, "stream_rag_sentence_gap_seconds_count") == emitted - 1
    assert sample(text, "stream_rag_streams_in_flight") == 0
    assert sample(text, "stream_rag_upstream_seconds_count", 'phase="total"') == 1
    assert sample(text, "stream_rag_retrieval_seconds_count", 'branch="embed"') >= 1
    assert sample(text, "stream_rag_query_embed_batch_size_count") >= 1
    assert sample(scraped.text, "stream_rag_index_points") >= 1
    # Far below the automatic HNSW build's threshold: every point is searched exactly.
    exact = sample(scraped.text, "stream_rag_index_exact_points")
    assert exact == sample(scraped.text, "stream_rag_index_points")
    assert sample(scraped.text, "stream_rag_indexing_queue_depth") == 0
    chat = 'method="POST",route="/v1/chat",status="200"'
    assert sample(text, "stream_rag_http_requests_total", chat) == 1
    uploads = 'method="POST",route="/v1/documents",status="201"'
    assert sample(text, "stream_rag_http_requests_total", uploads) == 1
    # An id that is not short and plain is replaced, not echoed.
    assert re.fullmatch(r"req_[0-9a-f]{16}", bad.headers["x-request-id"])
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "stream_rag.access"]
    [chat_log] = [line for line in lines if line["request_id"] == "load-17"]
    assert chat_log["route"] == "/v1/chat"
    assert chat_log["status"] == 200
    assert chat_log["duration_ms"] > 0


def test_an_error_event_carries_the_request_id_and_is_counted(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    with running_server(create_fake_llm(FakeConfig(error_after=3))) as llm_url:
        model = OpenAIChatModel(f"{llm_url}/v1", "fake")
        app = create_app(Settings(data_dir=tmp_path / "data"), embedder=minilm, model=model)
        with running_server(app) as base_url:
            upload(base_url, "refunds.txt", REFUNDS)
            with httpx.stream(
                "POST",
                f"{base_url}/v1/chat",
                json={"question": "Can annual plans be refunded?"},
                timeout=HTTP_GUARD_S,
            ) as response:
                events = [(n, d) for n, d, _ in read_events(response) if n != "ping"]
    text = app.state.telemetry.render().decode()
    name, error = events[-1]
    assert name == "error"
    assert error["code"] == "upstream_error"
    assert error["request_id"] == response.headers["x-request-id"]
    assert sample(text, "stream_rag_stream_errors_total", 'code="upstream_error"') == 1
    assert sample(text, "stream_rag_upstream_errors_total", 'code="upstream_error"') == 1
