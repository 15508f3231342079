"""Hybrid retrieval: dense and BM25 branches in parallel, fused, optionally reranked, and
resolved to blocks that carry the chunk's ORIGINAL text and its document's identity."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Set
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from ..config import Settings
from ..embed.backends import Embedder, Vectors
from ..embed.queries import QueryEmbedder
from ..errors import InvalidFieldError
from ..index.base import Index, IndexHit
from ..index.bm25 import query_vector
from ..index.features import load_features
from ..index.questions import any_questions, load_questions, question_hits
from ..language.question import Question
from ..store.documents import DocumentStore
from ..text import tokenize
from .blocks import Block, SearchResult
from .fusion import FUSION_METHODS, Fused, FusionMethod, check_weights, fuse
from .rerank import Reranker, RerankError

__all__ = ["BRANCHES", "Block", "Retriever", "SearchResult"]

BRANCHES = ("dense", "bm25", "title")
T = TypeVar("T")
R = TypeVar("R")


def _nothing(result: object) -> None:
    return None


@dataclass(slots=True)
class _Plan:
    """One search's checked parameters and the timings it collects on its way."""

    query: str
    collection: str
    top_k: int
    method: FusionMethod
    weights: Mapping[str, float]
    limit: int
    tokens: tuple[str, ...]  # BM25's, the question's own when it was read (`Question.tokens`)
    rerank: str = "off"
    timings: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Side:
    """What a search's side thread found (see `Retriever._side_work`)."""

    hits: list[IndexHit]
    docs: set[str]
    live: dict[str, int]
    questions: bool


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
        queries: QueryEmbedder | None = None,
    ) -> None:
        self.store = store
        self.index = index
        self.embedder = embedder
        self.reranker = reranker
        self.settings = settings
        self.dense_status = dense_status or ("on" if embedder else "off")
        self.queries = queries or (QueryEmbedder(embedder) if embedder is not None else None)
        self._limiter: anyio.CapacityLimiter | None = None
        # BM25 runs here while a worker embeds the question (see `_fused`); made on first use.
        self._side: ThreadPoolExecutor | None = None
        self._side_lock = threading.Lock()
        # Called with each search's timings (ms by branch), e.g. for the Prometheus metrics.
        self.on_search: Callable[[Mapping[str, float]], None] | None = None

    async def search(
        self,
        query: str | Question,
        *,
        collection: str | None = None,
        top_k: int | None = None,
        weights: Mapping[str, float] | None = None,
        fusion: str | None = None,
    ) -> SearchResult:
        result, _ = await self.search_then(
            query, _nothing, collection=collection, top_k=top_k, weights=weights, fusion=fusion
        )
        return result

    async def search_then(
        self,
        query: str | Question,
        then: Callable[[SearchResult], T],
        *,
        collection: str | None = None,
        top_k: int | None = None,
        weights: Mapping[str, float] | None = None,
        fusion: str | None = None,
    ) -> tuple[SearchResult, T]:
        """Search, then run `then` on the result in the same worker-thread call: one hand-off
        for the index, the store and whatever the caller needs computed from the blocks."""
        settings = self.settings
        # The question read once (the answer pipeline's) is searched by its own tokens; a
        # bare query string (/v1/search, evaluation) is tokenized here.
        asked = query if isinstance(query, Question) else None
        query = query.text if isinstance(query, Question) else query
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
            weights
            or {
                "dense": settings.dense_weight,
                "bm25": settings.bm25_weight,
                "title": settings.title_weight,
            },
            BRANCHES,
        )
        if chosen["dense"] + chosen["bm25"] <= 0:
            raise InvalidFieldError(
                "the dense or bm25 weight must be positive (title reorders them)"
            )
        tokens = asked.tokens if asked is not None and asked.tokens else tuple(tokenize(query))
        limit = max(settings.candidates, top_k)
        plan = _Plan(query, collection, top_k, method, chosen, limit, tokens)
        found = await self._search(plan, then)
        if self.on_search is not None:
            self.on_search(found[0].timings_ms)
        return found

    async def _search(
        self, plan: _Plan, then: Callable[[SearchResult], T]
    ) -> tuple[SearchResult, T]:
        started = time.perf_counter()
        # The question is embedded in the same worker call as the searches: one hand-off per
        # search, as for BM25 alone (docs/decisions/, "Search: one worker call").
        if self.reranker is None:
            return await self._worker(self._search_sync, plan, started, then)
        fused = await self._worker(self._fused, plan)
        rerank_status = "off"
        if fused:
            t0 = time.perf_counter()
            fused, rerank_status = await self._rerank(plan.query, fused)
            plan.timings["rerank"] = (time.perf_counter() - t0) * 1000
        plan.rerank = rerank_status
        return await self._worker(self._finish, plan, fused, started, then)

    async def _worker(self, func: Callable[..., R], *args: Any) -> R:
        """Run blocking work in a worker thread, at most `limiter` at once, so that bursts of
        requests queue here instead of crowding the event loop out of the GIL."""
        return await anyio.to_thread.run_sync(func, *args, limiter=self.limiter())

    def limiter(self) -> anyio.CapacityLimiter:
        """The worker threads' limiter (`STREAM_RAG_CPU_WORKERS`), made on first use in the
        event loop; an answer's other blocking CPU work may share it."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.settings.cpu_worker_threads)
        return self._limiter

    def close(self) -> None:
        """Let the side threads go (searches after this start new ones)."""
        with self._side_lock:
            side, self._side = self._side, None
        if side is not None:
            side.shutdown(wait=False)

    def _side_pool(self) -> ThreadPoolExecutor:
        with self._side_lock:
            if self._side is None:
                self._side = ThreadPoolExecutor(
                    max_workers=self.settings.cpu_worker_threads,
                    thread_name_prefix="stream-rag-bm25",
                )
            return self._side

    def _search_sync(
        self, plan: _Plan, started: float, then: Callable[[SearchResult], T]
    ) -> tuple[SearchResult, T]:
        return self._finish(plan, self._fused(plan), started, then)

    def _vector(self, plan: _Plan, meanwhile: Callable[[], object] | None = None) -> Vectors | None:
        """The question's vector when a branch needs it (blocking); `meanwhile` as in
        `QueryEmbedder.embed_here`."""
        if self.queries is None or not (plan.weights["dense"] or plan.weights["title"]):
            return None
        t0 = time.perf_counter()
        vector = self.queries.embed_here(plan.query, meanwhile)
        plan.timings["embed"] = (time.perf_counter() - t0) * 1000
        return vector

    def mentions(self, words: str, collection: str | None = None) -> bool:
        """Whether a live chunk of `collection` has one of `words`' BM25 terms (blocking): a
        word that no chunk has, the knowledge base never mentions."""
        sparse = query_vector(tokenize(words))
        hits = self.index.search_sparse(sparse, collection or self.settings.default_collection, 8)
        live = self.store.live_versions({h.doc_id for h in hits})
        return any(live.get(h.doc_id) == h.version for h in hits)

    def look_up(
        self, text: str, collection: str | None, exclude: Set[str], start: int, limit: int = 3
    ) -> list[Block]:
        """The live chunks of other documents than `exclude` whose words are most like
        `text`'s (BM25, blocking), numbered from `start`: where a document that retrieval
        left out says the same thing as a retrieved one, or otherwise."""
        sparse = query_vector(tokenize(text))
        hits = self.index.search_sparse(
            sparse, collection or self.settings.default_collection, limit + 8
        )
        live = self.store.live_versions({h.doc_id for h in hits})
        kept = [h for h in hits if h.doc_id not in exclude and live.get(h.doc_id) == h.version]
        found = self._blocks([Fused(h.chunk_id, h.score, {"bm25": h.score}) for h in kept[:limit]])
        return [replace(b, n=start + i) for i, b in enumerate(found)]

    def _bm25(self, plan: _Plan) -> list[IndexHit]:
        t0 = time.perf_counter()
        sparse = query_vector(plan.tokens)
        hits = self.index.search_sparse(sparse, plan.collection, plan.limit)
        plan.timings["bm25"] = (time.perf_counter() - t0) * 1000
        return hits

    def _side_work(self, plan: _Plan) -> _Side:
        """BM25, and what fusion needs that no vector decides: its documents' live versions
        and whether any chunk has FAQ questions (on the side thread, while the main one runs
        the model, which releases the GIL)."""
        hits = self._bm25(plan)
        docs = {h.doc_id for h in hits}
        asked = plan.weights["title"] != 0 and self._any_questions()
        return _Side(hits, docs, self.store.live_versions(docs), asked)

    def _any_questions(self) -> bool:
        return self.embedder is not None and any_questions(self.store, self.embedder.name)

    def _fused(self, plan: _Plan) -> list[Fused]:
        """The question's vector, both branches, live-version filter and fusion (blocking)."""
        sparse: list[Future[_Side]] = []

        def side() -> None:
            # BM25 needs no vector: it runs on a side thread (the machine's other core when it
            # is free) while this one embeds the question, with no event-loop hand-off. It
            # starts once the question's tokens are ready, as the model runs without the GIL:
            # started before, its engine call (which holds the GIL) delayed the tokenizer.
            sparse.append(self._side_pool().submit(self._side_work, plan))

        vector = self._vector(plan, side if plan.weights["bm25"] != 0 else None)
        branches: dict[str, list[IndexHit]] = {"dense": [], "bm25": []}
        timings = plan.timings
        if vector is not None and plan.weights["dense"] != 0:
            t0 = time.perf_counter()
            branches["dense"] = self.index.search_dense(vector, plan.collection, plan.limit)
            timings["dense"] = (time.perf_counter() - t0) * 1000
        found = sparse[0].result() if sparse else None
        if found is not None:
            branches["bm25"] = found.hits
        elif plan.weights["bm25"] != 0:
            branches["bm25"] = self._bm25(plan)
        t0 = time.perf_counter()
        docs = {h.doc_id for hits in branches.values() for h in hits}
        if found is None:
            live = self.store.live_versions(docs)
        else:  # the side thread looked BM25's documents up
            live = {**found.live, **self.store.live_versions(docs - found.docs)}
        # Only each document's live version may answer: points of an older version can
        # linger for a moment after a new version goes live.
        current = {
            name: [(h.chunk_id, h.score) for h in hits if live.get(h.doc_id) == h.version]
            for name, hits in branches.items()
        }
        if (
            vector is not None
            and plan.weights["title"] != 0
            and self.embedder is not None
            and (found.questions if found is not None else self._any_questions())
        ):
            # Only the candidates the other branches found: a boost, not a search of its own.
            ids = list(dict.fromkeys(c for hits in current.values() for c, _ in hits))
            asked = load_questions(self.store, ids, self.embedder.name, self.embedder.dim)
            current["title"] = question_hits(vector, asked, current["dense"])
        fused = fuse(current, plan.weights, plan.method)
        timings["fuse"] = (time.perf_counter() - t0) * 1000
        return fused

    def _finish(
        self,
        plan: _Plan,
        fused: list[Fused],
        started: float,
        then: Callable[[SearchResult], T],
    ) -> tuple[SearchResult, T]:
        blocks = self._blocks(fused[: plan.top_k])
        plan.timings["total"] = (time.perf_counter() - started) * 1000
        result = SearchResult(
            query=plan.query,
            collection=plan.collection,
            blocks=tuple(blocks),
            fusion=plan.method,
            weights=plan.weights,
            dense=self.dense_status,
            rerank=plan.rerank,
            timings_ms=plan.timings,
        )
        return result, then(result)

    async def _rerank(self, query: str, fused: list[Fused]) -> tuple[list[Fused], str]:
        assert self.reranker is not None
        head = fused[: self.settings.candidates]
        chunks = await self._worker(self.store.chunks_by_id, [f.id for f in head])
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
        sources = self.store.chunk_sources([f.id for f in fused])
        features = load_features(self.store, list(sources))
        blocks: list[Block] = []
        for item in fused:
            source = sources.get(item.id)
            if source is None:
                continue  # deleted between search and now
            chunk, name, filename, sha256 = (
                source.chunk,
                source.name,
                source.filename,
                source.sha256,
            )
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
                    features=features.get(chunk.id),
                    page=chunk.page_start,
                    dated=source.dated,
                    headings=chunk.headings,
                )
            )
        return blocks
