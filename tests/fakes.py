"""Small real HTTP services standing in for remote backends: a TEI/Cohere-style reranker and
an OpenAI-compatible embeddings endpoint. Deterministic; behaviour set per instance."""

from __future__ import annotations

import hashlib

import anyio
import numpy as np
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from stream_rag.text import tokenize


def overlap_score(query: str, text: str) -> float:
    """A deterministic relevance score: the share of query terms the text contains."""
    terms = set(tokenize(query))
    return len(terms & set(tokenize(text))) / max(len(terms), 1)


def rerank_app(behaviour: str = "ok", delay_s: float = 0.0) -> Starlette:
    """`ok` (TEI style), `cohere` (Cohere style), `error` (HTTP 500), `slow` (sleeps), or
    `garbage` (a reply without scores)."""
    calls: list[dict[str, object]] = []

    async def rerank(request: Request) -> JSONResponse:
        body = await request.json()
        calls.append(body)
        if behaviour == "slow":
            await anyio.sleep(delay_s)
        if behaviour == "error":
            return JSONResponse({"error": "model crashed"}, status_code=500)
        if behaviour == "garbage":
            return JSONResponse({"unexpected": True})
        texts = body.get("texts") or body.get("documents") or []
        scores = [overlap_score(body["query"], t) for t in texts]
        if behaviour == "cohere":
            results = [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]
            return JSONResponse({"results": sorted(results, key=lambda r: -r["relevance_score"])})
        items = [{"index": i, "score": s} for i, s in enumerate(scores)]
        return JSONResponse(sorted(items, key=lambda r: -r["score"]))

    app = Starlette(routes=[Route("/rerank", rerank, methods=["POST"])])
    app.state.calls = calls
    return app


def embeddings_app(dim: int = 16) -> Starlette:
    """OpenAI-compatible `/v1/embeddings`: hashed bag-of-words vectors (not normalised)."""
    calls: list[int] = []

    def vector(text: str) -> list[float]:
        out = np.zeros(dim)
        for term in tokenize(text) or [text]:
            digest = hashlib.blake2b(term.encode(), digest_size=8).digest()
            out[int.from_bytes(digest[:4], "big") % dim] += 1 + digest[4] / 255
        return [float(v) * 3 for v in out]

    async def embeddings(request: Request) -> JSONResponse:
        body = await request.json()
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        calls.append(len(inputs))
        data = [
            {"object": "embedding", "index": i, "embedding": vector(t)}
            for i, t in reversed(list(enumerate(inputs)))
        ]
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            }
        )

    app = Starlette(routes=[Route("/v1/embeddings", embeddings, methods=["POST"])])
    app.state.calls = calls
    return app
