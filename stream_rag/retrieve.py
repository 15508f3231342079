"""Hybrid retrieval: dense and BM25 branches in parallel, fused, optionally reranked, and
resolved to blocks that carry the chunk's ORIGINAL text and its document's identity."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import anyio
import anyio.to_thread

from .bm25 import query_vector
from .config import Settings
from .documents import DocumentStore
from .embed import Embedder
from .errors import InvalidFieldError
from .fusion import FUSION_METHODS, Fused, FusionMethod, check_weights, fuse
from .index import Index, IndexHit
from .rerank import Reranker, RerankError
from .text import tokenize

BRANCHES = ("dense", "bm25")


@dataclass(frozen=True, slots=True)
class Block:
    """One retrieved chunk, numbered `n` (1-based) in the order it is offered to the model."""

    n: int
    chunk_id: str
    doc_id: str
    version: int
    sha256: str
    name: str
    filename: str
    start: int
    end: int
    text: str
    scores: Mapping[str, float]

    @property
    def url(self) -> str:
        return f"/v1/documents/{self.doc_id}/versions/{self.version}/content"

    def to_json(self) -> dict[str, object]:
        return {
            "n": self.n,
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "version": self.version,
            "sha256": self.sha256,
            "name": self.name,
            "filename": self.filename,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "scores": dict(self.scores),
            "url": self.url,
        }


@dataclass(frozen=True, slots=True)
class SearchResult:
    query: str
    collection: str
    blocks: tuple[Block, ...]
    fusion: FusionMethod
    weights: Mapping[str, float]
    dense: str
    rerank: str
    timings_ms: Mapping[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "query": self.query,
            "collection": self.collection,
            "fusion": self.fusion,
            "weights": dict(self.weights),
            "dense": self.dense,
            "rerank": self.rerank,
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
            "blocks": [b.to_json() for b in self.blocks],
        }


class Retriever:
    def __init__(
        self,
        store: DocumentStore,
        index: Index,
        embedder: Embedder | None,
        settings: Settings,
        *,
        reranker: Reranker | None = None,
        dense_status: str = "",
    ) -> None:
        self.store = store
        self.index = index
        self.embedder = embedder
        self.reranker = reranker
        self.settings = settings
        self.dense_status = dense_status or ("on" if embedder else "off")

    async def search(
        self,
        query: str,
        *,
        collection: str | None = None,
        top_k: int | None = None,
        weights: Mapping[str, float] | None = None,
        fusion: str | None = None,
    ) -> SearchResult:
        settings = self.settings
        if not query.strip():
            raise InvalidFieldError("query must not be empty")
        collection = collection or settings.default_collection
        top_k = settings.top_k if top_k is None else top_k
        if not 1 <= top_k <= 100:
            raise InvalidFieldError("top_k must be between 1 and 100")
        method = fusion or settings.fusion
        if method not in FUSION_METHODS:
            raise InvalidFieldError(f"fusion must be one of {list(FUSION_METHODS)}")
        chosen = check_weights(
            weights or {"dense": settings.dense_weight, "bm25": settings.bm25_weight}, BRANCHES
        )
        limit = max(settings.candidates, top_k)
        timings: dict[str, float] = {}
        branches: dict[str, list[IndexHit]] = {"dense": [], "bm25": []}
        dense_status = self.dense_status
        started = time.perf_counter()

        async def dense_branch() -> None:
            if self.embedder is None or chosen["dense"] == 0:
                return
            t0 = time.perf_counter()
            vector = (await anyio.to_thread.run_sync(self.embedder.embed, [query]))[0]
            t1 = time.perf_counter()
            branches["dense"] = await anyio.to_thread.run_sync(
                self.index.search_dense, vector, collection, limit
            )
            timings["embed"] = (t1 - t0) * 1000
            timings["dense"] = (time.perf_counter() - t1) * 1000

        async def bm25_branch() -> None:
            if chosen["bm25"] == 0:
                return
            t0 = time.perf_counter()
            vector = query_vector(tokenize(query))
            branches["bm25"] = await anyio.to_thread.run_sync(
                self.index.search_sparse, vector, collection, limit
            )
            timings["bm25"] = (time.perf_counter() - t0) * 1000

        async with anyio.create_task_group() as group:
            group.start_soon(dense_branch)
            group.start_soon(bm25_branch)

        t0 = time.perf_counter()
        live = await anyio.to_thread.run_sync(
            self.store.live_versions, {h.doc_id for hits in branches.values() for h in hits}
        )
        # Only each document's live version may answer: points of an older version can
        # linger for a moment after a new version goes live.
        current = {
            name: [(h.chunk_id, h.score) for h in hits if live.get(h.doc_id) == h.version]
            for name, hits in branches.items()
        }
        fused = fuse(current, chosen, method)
        timings["fuse"] = (time.perf_counter() - t0) * 1000

        rerank_status = "off"
        if self.reranker is not None and fused:
            t0 = time.perf_counter()
            fused, rerank_status = await self._rerank(query, fused)
            timings["rerank"] = (time.perf_counter() - t0) * 1000
        blocks = await anyio.to_thread.run_sync(self._blocks, fused[:top_k])
        timings["total"] = (time.perf_counter() - started) * 1000
        return SearchResult(
            query=query,
            collection=collection,
            blocks=tuple(blocks),
            fusion=method,
            weights=chosen,
            dense=dense_status,
            rerank=rerank_status,
            timings_ms=timings,
        )

    async def _rerank(self, query: str, fused: list[Fused]) -> tuple[list[Fused], str]:
        assert self.reranker is not None
        head = fused[: self.settings.candidates]
        chunks = await anyio.to_thread.run_sync(self.store.chunks_by_id, [f.id for f in head])
        texts = [chunks[f.id].text if f.id in chunks else "" for f in head]
        try:
            scores = await self.reranker.rerank(query, texts)
        except RerankError as exc:
            return fused, f"fallback: {exc}"
        ranked = sorted(
            (
                Fused(f.id, f.score, {**f.raw, "fused": f.score, "rerank": s})
                for f, s in zip(head, scores, strict=True)
            ),
            key=lambda f: -f.raw["rerank"],
        )
        return ranked + fused[len(head) :], f"on: {self.reranker.name}"

    def _blocks(self, fused: list[Fused]) -> list[Block]:
        chunks = self.store.chunks_by_id([f.id for f in fused])
        blocks: list[Block] = []
        documents: dict[str, tuple[str, str, str]] = {}
        for item in fused:
            chunk = chunks.get(item.id)
            if chunk is None:
                continue  # deleted between search and now
            key = f"{chunk.doc_id}:{chunk.version}"
            if key not in documents:
                record = self.store.version(chunk.doc_id, chunk.version)
                documents[key] = (self.store.get(chunk.doc_id).name, record.filename, record.sha256)
            name, filename, sha256 = documents[key]
            scores = {"fused": item.score, **item.raw}
            blocks.append(
                Block(
                    n=len(blocks) + 1,
                    chunk_id=chunk.id,
                    doc_id=chunk.doc_id,
                    version=chunk.version,
                    sha256=sha256,
                    name=name,
                    filename=filename,
                    start=chunk.start,
                    end=chunk.end,
                    text=chunk.text,
                    scores=scores,
                )
            )
        return blocks
