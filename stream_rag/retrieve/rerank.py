"""Optional cross-encoder rerank through a remote `/rerank` endpoint.

Two request styles: `tei` (Hugging Face Text Embeddings Inference: `{"query", "texts"}` ->
`[{"index", "score"}]`) and `cohere` (Cohere, Jina, Voyage: `{"model", "query", "documents"}`
-> `{"results": [{"index", "relevance_score"}]}`). Any failure or timeout is reported to the
caller, who falls back to the fused order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

import httpx

RerankStyle = Literal["tei", "cohere"]


class RerankError(Exception):
    """The reranker could not answer (down, slow, or an unexpected reply)."""


class Reranker(Protocol):
    name: str

    async def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text, in the order given."""
        ...

    async def aclose(self) -> None: ...


class HttpReranker:
    def __init__(
        self,
        url: str,
        *,
        style: RerankStyle = "tei",
        model: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 2.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url = url
        self.style = style
        self.model = model
        self.name = f"{style}:{url}"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(timeout_s), headers=headers, transport=transport
        )

    async def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        body: dict[str, object]
        if self.style == "tei":
            body = {"query": query, "texts": list(texts), "truncate": True}
        else:
            body = {"query": query, "documents": list(texts), "top_n": len(texts)}
            if self.model:
                body["model"] = self.model
        try:
            response = await self._client.post(self.url, json=body)
            response.raise_for_status()
            payload = response.json()
        except httpx.TimeoutException:
            raise RerankError("reranker timed out") from None
        except httpx.HTTPStatusError as exc:
            raise RerankError(f"reranker answered HTTP {exc.response.status_code}") from None
        except (httpx.HTTPError, ValueError) as exc:
            raise RerankError(f"reranker unreachable ({type(exc).__name__})") from None
        return _scores(payload, len(texts))

    async def aclose(self) -> None:
        await self._client.aclose()


def _scores(payload: object, n: int) -> list[float]:
    items = payload.get("results") if isinstance(payload, dict) else payload
    if not isinstance(items, list):
        raise RerankError("unexpected reranker reply (no result list)")
    scores: list[float | None] = [None] * n
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("index"), int):
            raise RerankError("unexpected reranker reply (item without index)")
        score = item.get("relevance_score", item.get("score"))
        index = item["index"]
        if not isinstance(score, int | float) or not 0 <= index < n:
            raise RerankError("unexpected reranker reply (bad score or index)")
        scores[index] = float(score)
    if any(s is None for s in scores):
        raise RerankError("reranker did not score every text")
    return [s for s in scores if s is not None]
