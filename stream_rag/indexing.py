"""Turning stored versions into index points, and the background queue that does it."""

from __future__ import annotations

import contextlib
import logging
import math
import re
from collections.abc import Sequence

import anyio
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .bm25 import document_vector
from .chunking import heading_context
from .documents import DocumentStore
from .embed import Embedder
from .errors import StreamRagError
from .features import store_features
from .index import Index, IndexPoint
from .sentence_vectors import SentenceEncoder, store_chunk_vectors
from .text import tokenize
from .types import Chunk, Document

log = logging.getLogger("stream_rag")
# Vacuum the index once deleted points are this share of the stored ones (Qdrant's default).
STALE_SHARE = 0.2


def index_text(name: str, chunk_text: str, headings: Sequence[str] = ()) -> str:
    """What the branches see of a chunk: its document's name, the headings it sits under,
    then its text. Name and headings are context for retrieval only (a short FAQ answer
    rarely repeats its question); citations are checked against the chunk text alone."""
    stem = re.sub(r"\.[A-Za-z0-9]{1,8}$", "", name)
    return "\n".join([re.sub(r"[-_]+", " ", stem), *headings, chunk_text])


class Indexer:
    """Indexes one version at a time; blocking, so run it in a worker thread."""

    def __init__(
        self,
        store: DocumentStore,
        index: Index,
        embedder: Embedder | None,
        sentence_encoder: SentenceEncoder | None = None,
    ) -> None:
        self.store = store
        self.index = index
        self.embedder = embedder
        self.sentence_encoder = sentence_encoder  # the gate's semantic stage, if on

    @property
    def fingerprint(self) -> str:
        """Changes whenever stored points would no longer match what queries compare them to."""
        embedder = self.embedder.name if self.embedder else "none"
        return f"{self.index.name}|{embedder}|{self.index.dim}|bm25-v1|headings-v1"

    def index_version(self, doc_id: str, version: int) -> None:
        """Index `version` of `doc_id`, make it live, then drop the points of older versions.

        A failure marks the version `failed` with the reason; the previous live version stays.
        """
        try:
            document = self.store.get(doc_id)
            chunks = self.store.chunks(doc_id, version)
            store_features(self.store, chunks)  # what the gate needs, computed once
            context = heading_context(self.store.text(doc_id, version), [c.start for c in chunks])
            texts = [
                index_text(document.name, c.text, headings)
                for c, headings in zip(chunks, context, strict=True)
            ]
            token_lists = [tokenize(t) for t in texts]
            tokens = sum(len(t) for t in token_lists)
            avgdl = self.store.bm25_average_length(tokens, len(chunks))
            dense = self.embedder.embed(texts) if self.embedder else None
            points = [
                IndexPoint(
                    chunk_id=chunk.id,
                    doc_id=doc_id,
                    version=version,
                    collection=document.collection,
                    sparse=document_vector(token_list, avgdl),
                    dense=None if dense is None else dense[i],
                )
                for i, (chunk, token_list) in enumerate(zip(chunks, token_lists, strict=True))
            ]
            self.index.upsert(points)
            self._sentence_vectors(chunks)
        except StreamRagError as exc:
            self._fail(doc_id, version, exc.message)
            return
        except Exception as exc:  # a backend's own error: keep the service up, record it
            log.exception("indexing %s v%d failed", doc_id, version)
            self._fail(doc_id, version, f"{type(exc).__name__}: {exc}")
            return
        live = self.store.set_ready(doc_id, version, tokens, len(chunks))
        if live is None:  # deleted while we indexed it
            self.index.delete_versions(doc_id)
        else:
            self.index.delete_versions(doc_id, keep=live)

    def _sentence_vectors(self, chunks: Sequence[Chunk]) -> None:
        """Block-side vectors for the gate's semantic stage. Optional: if this fails, a
        request computes them on first use, so indexing goes on."""
        if self.sentence_encoder is None or not chunks:
            return
        try:
            store_chunk_vectors(self.store, self.sentence_encoder, chunks)
        except Exception:
            log.exception(
                "sentence vectors of %s v%d not stored", chunks[0].doc_id, chunks[0].version
            )

    def _fail(self, doc_id: str, version: int, reason: str) -> None:
        with contextlib.suppress(StreamRagError):
            self.store.set_failed(doc_id, version, reason)

    def delete(self, doc_id: str) -> Document:
        """Delete a document from the store, then its points (every delete path comes here).
        A crash in between leaves points of no live version: the start-up check drops them."""
        document = self.store.delete(doc_id)
        self.index.delete_versions(doc_id)
        self.vacuum_if_stale()
        return document

    def vacuum_if_stale(self, share: float = STALE_SHARE) -> bool:
        """Vacuum when deleted points make up `share` of the stored ones: they still count in
        IDF, but a vacuum holds the GIL while it rewrites segments, so not on every delete."""
        stale = self.index.stale_points()
        if stale and stale >= share * (stale + self.index.count()):
            self.index.vacuum()
            return True
        return False

    def version_tokens(self, doc_id: str, version: int) -> int:
        """The BM25 token count of a stored version, as indexing counts it."""
        document = self.store.get(doc_id)
        chunks = self.store.chunks(doc_id, version)
        return sum(len(tokenize(index_text(document.name, c.text))) for c in chunks)

    def reconcile(self) -> list[tuple[str, int]]:
        """Versions to (re)index at start-up: those a crash left `indexing`, or all of them
        when the index or embedder changed since they were indexed."""
        if self.store.meta("index_fingerprint") != self.fingerprint:
            work = self.store.newest_versions()
            self.store.set_indexing(work)
            self.store.set_meta("index_fingerprint", self.fingerprint)
            return work
        return self.store.pending()


class IndexQueue:
    """A single background worker; jobs run in order, off the event loop."""

    def __init__(self, indexer: Indexer) -> None:
        self.indexer = indexer
        self._send: MemoryObjectSendStream[tuple[str, int]]
        self._receive: MemoryObjectReceiveStream[tuple[str, int]]
        self._send, self._receive = anyio.create_memory_object_stream[tuple[str, int]](math.inf)
        self._outstanding = 0
        self._idle = anyio.Event()
        self._idle.set()
        self._stopping = False

    def submit(self, doc_id: str, version: int) -> None:
        if self._stopping:
            return  # stored as `indexing`: the next start indexes it
        self._outstanding += 1
        self._idle = anyio.Event() if self._idle.is_set() else self._idle
        self._send.send_nowait((doc_id, version))

    def submit_all(self, jobs: Sequence[tuple[str, int]]) -> None:
        for doc_id, version in jobs:
            self.submit(doc_id, version)

    async def run(self) -> None:
        async with self._receive:
            async for doc_id, version in self._receive:
                if self._stopping:
                    return  # the job stays `indexing` in the store; reconcile resumes it
                try:
                    await anyio.to_thread.run_sync(self.indexer.index_version, doc_id, version)
                finally:
                    self._outstanding -= 1
                    if self._outstanding == 0:
                        self._idle.set()

    async def join(self) -> None:
        """Wait until every submitted job is done."""
        await self._idle.wait()

    @property
    def depth(self) -> int:
        """Jobs submitted and not finished (`/readyz`). Any replacement queue must keep it."""
        return self._outstanding

    def close(self) -> None:
        self._send.close()

    def stop(self) -> None:
        """Stop at the next job boundary (SIGTERM): the job in hand finishes, the rest wait
        in the store for the next start. Any replacement queue must keep this hook."""
        self._stopping = True
        self._send.close()
