"""The service's components, built once from `Settings` and passed explicitly."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import partial

from .answer.conflicts import LexicalConflictDetector
from .answer.pipeline import Answerer
from .answer.readings import READER, load_readings
from .config import Settings
from .embed.backends import Embedder, at_precision, build_embedder
from .embed.queries import QueryEmbedder
from .gate.judge import Stages
from .http.telemetry import ObservedModel, Telemetry
from .index.base import Index, open_index
from .index.indexing import ChunkReader, Indexer, hnsw_graphs
from .ingest.extract import ExtractLimits
from .ingest.extract_pool import ExtractionPool, InProcessExtractor, Limits
from .ingest.fairness import FairSlots
from .model.extractive import ExtractiveModel, Known, SentenceVectors
from .model.llm import ChatModel, OpenAIChatModel
from .retrieve.hybrid import Retriever
from .retrieve.rerank import HttpReranker, Reranker
from .store.documents import DocumentStore

DEFAULT_DIM = 384
# What the indexer derives from each chunk for the stages above it (part of its fingerprint).
CHUNK_READERS: tuple[ChunkReader, ...] = (READER,)
log = logging.getLogger("stream_rag")


@dataclass(slots=True)
class Services:
    settings: Settings
    store: DocumentStore
    index: Index
    embedder: Embedder | None
    indexer: Indexer
    retriever: Retriever
    reranker: Reranker | None
    dense_status: str
    model: ChatModel
    answerer: Answerer
    telemetry: Telemetry
    # Threads that may wait on extraction at once (set in the app's lifespan): uploads past
    # it wait without a thread, so a burst of heavy files never takes every worker thread.
    upload_limiter: FairSlots | None = None

    def close(self) -> None:
        """Close what these services opened (the reranker is async: see `aclose`). Deleted
        points are vacuumed first, while nothing is being served, unless that would drop the
        index's HNSW graphs (the next start would search exactly until an optimize); they wait
        for the vacuum a delete makes once they are `STALE_SHARE` of the points."""
        stop_building = getattr(self.index, "stop_building", None)
        if callable(stop_building):  # a background HNSW build would hold the close up
            stop_building()
        try:
            if self.index.stale_points() and not hnsw_graphs(self.index):
                self.index.vacuum()
        except Exception:  # never keep the store open because the index misbehaved
            log.exception("vacuuming the index on close failed")
        close_embedder = getattr(self.embedder, "close", None)
        if callable(close_embedder):
            close_embedder()
        self.retriever.close()
        self.index.close()
        self.store.close()

    async def aclose(self) -> None:
        if self.reranker is not None:
            await self.reranker.aclose()
        verifier = self.answerer.stages.verifier
        close_verifier = getattr(verifier, "aclose", None)
        if callable(close_verifier):
            await close_verifier()
        close_model = getattr(self.model, "aclose", None)
        if callable(close_model):
            await close_model()


def open_store(settings: Settings, *, processes: bool = True) -> DocumentStore:
    """The store; it extracts in worker processes unless `processes` is False."""
    limits = extraction_limits(settings)
    extractor = (
        ExtractionPool(limits, settings.extract_workers)
        if processes
        else InProcessExtractor(limits)
    )
    return DocumentStore(
        settings.data_dir,
        chunk_chars=settings.chunk_chars,
        chunk_overlap_chars=settings.chunk_overlap_chars,
        extractor=extractor,
        max_jobs=settings.max_queued_jobs,
        database_url=settings.database_url,
        pool_size=settings.database_pool,
    )


def extraction_limits(settings: Settings) -> Limits:
    return Limits(
        content=ExtractLimits(
            max_chars=settings.max_extracted_chars,
            max_pages=settings.max_pdf_pages,
            max_unzipped_bytes=int(settings.max_unzipped_mb * 1024 * 1024),
            max_zip_ratio=settings.max_zip_ratio,
        ),
        max_chunks=settings.max_chunks_per_doc,
        max_chunks_per_kb=settings.max_chunks_per_kb,
        cpu_s=settings.extract_cpu_s,
        memory_mb=settings.extract_memory_mb,
        wall_s=settings.extract_wall_s,
    )


def open_services(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    index: Index | None = None,
    reranker: Reranker | None = None,
    model: ChatModel | None = None,
    telemetry: Telemetry | None = None,
) -> Services:
    """Open everything (blocking). Explicit components replace the configured ones."""
    if embedder is not None:
        dense_status = f"dense branch on: {embedder.name} ({embedder.dim} dims)"
    else:
        embedder, dense_status = build_embedder(settings)
    store = open_store(settings)
    try:
        index = index or open_index(settings, embedder.dim if embedder else DEFAULT_DIM)
    except BaseException:
        store.close()
        raise
    if reranker is None and settings.rerank_url:
        reranker = HttpReranker(
            settings.rerank_url,
            style="cohere" if settings.rerank_style == "cohere" else "tei",
            model=settings.rerank_model,
            api_key=settings.rerank_api_key,
            timeout_s=settings.rerank_timeout_s,
        )
    telemetry = telemetry or Telemetry()
    queries = (
        None
        if embedder is None
        else QueryEmbedder(
            at_precision(embedder, settings.embed_query_precision),
            cache_size=settings.query_cache_size,
            on_batch=telemetry.embed_batch.observe,
        )
    )
    retriever = Retriever(
        store,
        index,
        embedder,
        settings,
        reranker=reranker,
        dense_status=dense_status,
        queries=queries,
    )
    retriever.on_search = telemetry.observe_search
    base_model = model or build_model(settings, embedder, queries)
    model = ObservedModel(base_model, telemetry)
    stages = build_stages(settings, store, embedder)
    encoder = stages.semantic.encoder if stages.semantic else None
    passages = (
        None if embedder is None else at_precision(embedder, settings.embed_passage_precision)
    )
    # An FAQ entry is compared with the question as its chunk is: the retrieval vector
    # against the passage model's.
    known = None if queries is None else queries.cached
    indexer = Indexer(store, index, passages, encoder, readers=CHUNK_READERS)
    # The answerability check and the prompt's block order rank sentences as the local
    # generator does, with its vectors; with a chat model, with a generator's vectors of their
    # own, so a question is checked alike whichever answers. Either is warmed as chunks are
    # indexed: a first question over a new knowledge base does not embed its sentences.
    # With a chat model the ranking's fp32 question vector (retrieval's is int8) is embedded
    # ahead of that step, batched with other requests' (MiniLM on a CPU: 2.4 ms a question in
    # batches of 10, 5.0 ms alone).
    asked = (
        QueryEmbedder(embedder, cache_size=settings.query_cache_size, limiter=retriever.limiter)
        if embedder is not None
        and not isinstance(base_model, ExtractiveModel)
        and _generator_known(settings, queries) is None
        else None
    )
    ranker = (
        base_model
        if isinstance(base_model, ExtractiveModel)
        else None
        if embedder is None
        else ExtractiveModel(
            embedder=embedder,
            known=asked.cached if asked is not None else _generator_known(settings, queries),
        )
    )
    if ranker is not None:
        indexer.on_indexed = ranker.warm
        # Its sentences come from the gate's pass only at the gate's precision (`sharing`).
        indexer.warm_after_live = encoder is None or _precision(encoder) != _precision(embedder)
    return Services(
        settings=settings,
        store=store,
        index=index,
        embedder=embedder,
        indexer=indexer,
        retriever=retriever,
        reranker=reranker,
        dense_status=dense_status,
        model=model,
        answerer=Answerer(
            retriever,
            model,
            settings,
            detector=LexicalConflictDetector(load=partial(load_readings, store)),
            telemetry=telemetry,
            stages=stages,
            entries=None if passages is None else SentenceVectors(passages, 4096, known=known),
            ranking=None if ranker is None else ranker.dense,
            ranking_question=None if asked is None else asked.embed,
        ),
        telemetry=telemetry,
    )


def _precision(embedder: object) -> str:
    return str(getattr(embedder, "precision", "fp32"))


def build_model(
    settings: Settings, embedder: Embedder | None = None, queries: QueryEmbedder | None = None
) -> ChatModel:
    if settings.llm_base_url:
        return OpenAIChatModel(
            settings.llm_base_url,
            settings.llm_model,
            api_key=settings.llm_api_key,
            timeout_s=settings.llm_timeout_s,
            stall_s=settings.llm_stall_s,
            max_tokens=settings.llm_max_tokens,
        )
    return ExtractiveModel(embedder=embedder, known=_generator_known(settings, queries))


def _generator_known(settings: Settings, queries: QueryEmbedder | None) -> Known | None:
    """The question's vector as retrieval embedded it a moment before, for the generator's
    sentence scores; None (embed it again) when it is int8: scored against fp32 sentences it
    moved one sample answer to the wrong document (docs/decisions/)."""
    if queries is not None and settings.embed_query_precision == "fp32":
        return queries.cached
    return None


def build_stages(settings: Settings, store: DocumentStore, embedder: Embedder | None) -> Stages:
    """The gate's stages after the lexical one. The semantic stage is calibrated for the
    local MiniLM, so it runs only when that is the embedder."""
    from .embed.minilm import MiniLMEmbedder
    from .gate.semantic import SemanticStage
    from .gate.verify import build_verifier

    semantic = None
    if settings.gate_semantic and isinstance(embedder, MiniLMEmbedder):
        # Block sentences (stored at ingest) and the grey-zone sentence at one precision; the
        # cutoff is the gate mode's unless the setting gives one.
        semantic = SemanticStage(
            embedder, settings.gate_semantic_cutoff, settings.embed_gate_precision
        )
    return Stages(semantic, store, build_verifier(settings))
