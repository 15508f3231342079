from __future__ import annotations

import pytest

from stream_rag.retrieve.rerank import HttpReranker, RerankError

from .fakes import rerank_app
from .helpers import running_server

TEXTS = ["billing and invoices", "refund within 30 days", "sync conflicts"]


@pytest.mark.anyio
@pytest.mark.parametrize("style", ["tei", "cohere"])
async def test_scores_come_back_in_input_order(style: str) -> None:
    app = rerank_app("ok" if style == "tei" else "cohere")
    with running_server(app) as base_url:
        reranker = HttpReranker(f"{base_url}/rerank", style="tei" if style == "tei" else "cohere")
        try:
            scores = await reranker.rerank("refund days", TEXTS)
        finally:
            await reranker.aclose()
    assert scores == [0.0, 1.0, 0.0]
    sent = app.state.calls[0]
    assert ("texts" in sent) == (style == "tei")
    assert ("documents" in sent) == (style == "cohere")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("behaviour", "message"),
    [("error", "HTTP 500"), ("slow", "timed out"), ("garbage", "unexpected")],
)
async def test_failures_are_rerank_errors(behaviour: str, message: str) -> None:
    with running_server(rerank_app(behaviour, delay_s=2.0)) as base_url:
        # Only the slow server is meant to time out; the others' failure must be the one seen.
        reranker = HttpReranker(f"{base_url}/rerank", timeout_s=0.3 if behaviour == "slow" else 30)
        try:
            with pytest.raises(RerankError, match=message):
                await reranker.rerank("refund", TEXTS)
        finally:
            await reranker.aclose()


@pytest.mark.anyio
async def test_unreachable() -> None:
    reranker = HttpReranker("http://127.0.0.1:9/rerank", timeout_s=0.5)
    try:
        with pytest.raises(RerankError, match=r"unreachable|timed out"):
            await reranker.rerank("refund", TEXTS)
    finally:
        await reranker.aclose()
