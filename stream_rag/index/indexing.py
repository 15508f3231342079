"""Turning stored versions into index points, batch by batch (the queue is in jobs.py)."""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath

from ..embed.backends import Embedder, sharing
from ..embed.sentences import SentenceEncoder, store_chunk_vectors
from ..errors import NotFoundError, StreamRagError
from ..ingest.chunking import heading_context
from ..ingest.layout import EXTRACTION_VERSION
from ..store.documents import DocumentStore
from ..store.records import chunk_id
from ..text import tokenize
from ..types import Chunk, Document
from .base import Index, IndexPoint, point_id
from .bm25 import document_vector
from .features import FEATURES_VERSION, store_features
from .questions import chunk_questions, embed_questions, save_questions

log = logging.getLogger("stream_rag")
# Vacuum the index once deleted points are this share of the stored ones (Qdrant's default).
STALE_SHARE = 0.2
# Chunks embedded and upserted at a time; the queue rotates between versions per batch.
DEFAULT_BATCH = 64


def index_text(name: str, chunk_text: str, headings: Sequence[str] = ()) -> str:
    """What the branches see of a chunk: its document's name, the headings it sits under,
    then its text. Name and headings are context for retrieval only (a short FAQ answer
    rarely repeats its question); citations are checked against the chunk text alone."""
    stem = re.sub(r"\.[A-Za-z0-9]{1,8}$", "", name)
    return "\n".join([re.sub(r"[-_]+", " ", stem), *headings, chunk_text])


@dataclass(slots=True)
class VersionJob:
    """One version being indexed, batch by batch; `done` chunks are in the index."""

    doc_id: str
    version: int
    name: str
    collection: str
    headings: list[tuple[str, ...]]
    avgdl: float
    tokens: int
    chunks: int
    done: int = 0
    # Indexed batches (first ordinal, count) whose answer warm-up waits until the version is
    # live; their texts are read again then, not held: a start-up backlog begins every version
    # in turn, so held texts were the whole collection's until each version went live.
    warm: list[tuple[int, int]] = field(default_factory=list)
    live: bool = False


@dataclass(frozen=True, slots=True)
class ChunkReader:
    """Data an upper stage derives from each chunk's text, computed and stored as the chunk
    is indexed (e.g. the conflict check's readings), so a request does not read it again."""

    format: str  # name and version, part of the fingerprint: a new format indexes again
    store: Callable[[DocumentStore, Sequence[Chunk]], None]  # blocking; skips deleted chunks


def failure_reason(exc: BaseException, doc_id: str, version: int) -> str:
    if isinstance(exc, StreamRagError):
        return exc.message
    # A backend's own error: keep the service up, record it.
    log.error("indexing %s v%d failed", doc_id, version, exc_info=exc)
    return f"{type(exc).__name__}: {exc}"


def hnsw_graphs(index: Index) -> int:
    """Segments with an HNSW graph that `build_hnsw` made (the embedded index's; a Qdrant
    server builds and keeps its own, so 0 there). A vacuum rewrites segments without them."""
    count = getattr(index, "hnsw_segments", None)
    return int(count()) if callable(count) else 0


class Indexer:
    """Indexes one version at a time; blocking, so run it in a worker thread."""

    def __init__(
        self,
        store: DocumentStore,
        index: Index,
        embedder: Embedder | None,
        sentence_encoder: SentenceEncoder | None = None,
        readers: Sequence[ChunkReader] = (),
    ) -> None:
        self.store = store
        self.index = index
        self.embedder = embedder
        self.sentence_encoder = sentence_encoder  # the gate's semantic stage, if on
        self.readers = tuple(readers)
        # Told each indexed batch (document name, chunk texts): the local generator embeds
        # their sentences ahead of the first question about them.
        self.on_indexed: Callable[[str, Sequence[str]], None] | None = None
        # Whether that waits until the version is live (`warm_step`): when it shares no
        # vectors with the gate's sentence pass (another precision), it is a third of a text
        # document's indexing CPU and nothing the search needs (docs/decisions/).
        self.warm_after_live = False

    @property
    def fingerprint(self) -> str:
        """Changes whenever stored points would no longer match what queries compare them to."""
        embedder = self.embedder.name if self.embedder else "none"
        # Not where the data directory is (the embedded index's name carries its path): a
        # copied or moved directory has the same points. A Qdrant server's name is its own.
        index = str(getattr(self.index, "identity", self.index.name))
        # The stored per-chunk features and readings count too: rows of an older format would
        # otherwise be recomputed on every request until something indexed their chunks again.
        return (
            f"{index}|{embedder}|{self.index.dim}|bm25-v3|headings-v1|questions-v2"
            f"|features-v{FEATURES_VERSION}|extraction-v{EXTRACTION_VERSION}"
            + "".join(f"|{r.format}" for r in self.readers)
        )

    def index_version(self, doc_id: str, version: int, batch: int = DEFAULT_BATCH) -> None:
        """Index `version` of `doc_id`, make it live, then drop the points of older versions.

        A failure marks the version `failed` with the reason; the previous live version stays.
        """
        try:
            job = self.begin(doc_id, version)
            while not self.step(job, batch):
                pass
        except Exception as exc:
            self._fail(doc_id, version, failure_reason(exc, doc_id, version))
            return
        self.finish(job)
        while not self.warm_step(job):
            pass

    def begin(self, doc_id: str, version: int) -> VersionJob:
        """What a version's batches share: its name, headings, token count and BM25 average
        length (the live versions' tokens plus this one's, as if it were indexed)."""
        document = self.store.get(doc_id)
        chunks = self.store.chunks(doc_id, version)
        context = heading_context(self.store.text(doc_id, version), [c.start for c in chunks])
        headings = [tuple(h) for h in context]
        tokens = sum(
            len(tokenize(index_text(document.name, c.text, h)))
            for c, h in zip(chunks, headings, strict=True)
        )
        avgdl = self.store.bm25_average_length(tokens, len(chunks))
        return VersionJob(
            doc_id,
            version,
            document.name,
            document.collection,
            headings,
            avgdl,
            tokens,
            len(chunks),
        )

    def step(self, job: VersionJob, batch: int = DEFAULT_BATCH) -> bool:
        """Embed and upsert the next `batch` chunks of `job`; True once all are in the index."""
        chunks = self.store.chunk_batch(job.doc_id, job.version, job.done, batch)
        if chunks:
            # What the gate needs (its semantic stage's terms too, if on), computed once.
            store_features(self.store, chunks, semantic=self.sentence_encoder is not None)
            for reader in self.readers:  # and what the upper stages read in them
                reader.store(self.store, chunks)
            texts = [index_text(job.name, c.text, job.headings[c.ordinal]) for c in chunks]
            dense = self.embedder.embed(texts) if self.embedder else None
            if self.embedder is not None:  # the FAQ questions each chunk answers
                asked = [chunk_questions(c.text, job.headings[c.ordinal]) for c in chunks]
                vectors = embed_questions(self.embedder, asked)
                save_questions(self.store, self.embedder.name, [c.id for c in chunks], vectors)
            self.index.upsert(
                [
                    IndexPoint(
                        chunk_id=chunk.id,
                        doc_id=job.doc_id,
                        version=job.version,
                        collection=job.collection,
                        sparse=document_vector(tokenize(text), job.avgdl),
                        dense=None if dense is None else dense[i],
                    )
                    for i, (chunk, text) in enumerate(zip(chunks, texts, strict=True))
                ]
            )
            # The gate's sentences and the answer warm-up's are mostly the same: embed once.
            with sharing(self.embedder):
                self._sentence_vectors(chunks)
                if self.on_indexed is not None and self.warm_after_live:
                    job.warm.append((job.done, len(chunks)))
                elif self.on_indexed is not None:
                    self._warm(job, [c.text for c in chunks])
            job.done += len(chunks)
        return len(chunks) < batch or job.done >= job.chunks

    def warm_step(self, job: VersionJob) -> bool:
        """The answer warm-up of one indexed batch that waited for the version to be live;
        True once none is left."""
        if job.warm:
            offset, count = job.warm.pop(0)
            chunks = self.store.chunk_batch(job.doc_id, job.version, offset, count)
            if chunks:  # none once the document is deleted
                with sharing(self.embedder):
                    self._warm(job, [c.text for c in chunks])
        return not job.warm

    def _warm(self, job: VersionJob, texts: list[str]) -> None:
        if self.on_indexed is None:
            return
        try:
            self.on_indexed(job.name, texts)
        except Exception:  # a warm-up only: answers embed what is missing
            log.exception("warming answer vectors of %s failed", job.doc_id)

    def finish(self, job: VersionJob) -> None:
        """Make the indexed version live (one transaction), then drop older versions' points."""
        live = self.store.set_ready(job.doc_id, job.version, job.tokens, job.chunks)
        job.live = True
        if live is None:  # deleted while we indexed it
            job.warm.clear()
            self.index.delete_versions(job.doc_id)
        else:
            # Only older versions: a newer one may be half indexed by another worker.
            self.index.delete_versions(job.doc_id, below=live)

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
        self.drop_failed(doc_id, version)

    def drop_failed(self, doc_id: str, version: int) -> None:
        """Remove what a failed version put in the index, unless it is the live one (a
        failed re-index of the live version leaves its complete points)."""
        try:
            if self.store.live_versions([doc_id]).get(doc_id) == version:
                return
            record = self.store.version(doc_id, version)
            self.index.delete_points(
                [point_id(chunk_id(doc_id, version, i)) for i in range(record.chunk_count)]
            )
        except NotFoundError:
            return  # deleted: the delete removed its points
        except Exception:  # the check at the next start removes them then
            log.exception("points of failed %s v%d not removed", doc_id, version)

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
        if getattr(self.index, "building", False):
            return False  # the build's copy replaces the shard; the next delete after it checks
        stale = self.index.stale_points()
        if stale and stale >= share * (stale + self.index.count()):
            graphs = hnsw_graphs(self.index)
            self.index.vacuum()
            if graphs:  # searched exactly from now on: slow at 100k points, so say so
                log.warning(
                    "vacuuming %d deleted points dropped the index's HNSW graphs: run "
                    "`stream-rag optimize` (or POST /v1/index/optimize) to build them again",
                    stale,
                )
            return True
        return False

    def _moved(self, stored: str) -> bool:
        """Whether `stored` is this fingerprint in its old form, which named the embedded
        index by its absolute path (any path ending in the same directory)."""
        head, _, rest = self.fingerprint.partition("|")
        kind, _, directory = head.partition(":")
        old = stored.removesuffix("|" + rest)
        return (
            kind == "qdrant-edge"
            and old != stored
            and old.startswith(kind + ":")
            and PurePath(old.removeprefix(kind + ":")).name == directory
        )

    def version_tokens(self, doc_id: str, version: int) -> int:
        """The BM25 token count of a stored version, as indexing counts it."""
        return self.begin(doc_id, version).tokens

    def reextract(self) -> list[tuple[str, int]]:
        """Extract again the versions an older extraction made (their text and chunks; ids,
        versions and hashes stay), and drop the points of chunks that are no more. Returns
        the versions extracted again."""
        outdated = self.store.outdated_versions()
        if outdated:
            log.info(
                "extracting %d stored versions again (extraction v%d)",
                len(outdated),
                EXTRACTION_VERSION,
            )
        for doc_id, version in outdated:
            try:
                old, new = self.store.reextract(doc_id, version)
            except NotFoundError:
                continue  # deleted meanwhile
            if new < old:
                self.index.delete_points(
                    [point_id(chunk_id(doc_id, version, i)) for i in range(new, old)]
                )
        return outdated

    def current_versions(self) -> list[tuple[str, int]]:
        """Every document's newest version, and its live one when that is older (the newer
        failed or waits): the versions whose points searches use or will."""
        newest = self.store.newest_versions()
        live = self.store.live_versions([doc_id for doc_id, _ in newest])
        known = set(newest)
        return sorted([*newest, *((d, v) for d, v in live.items() if (d, v) not in known)])

    def reconcile(self) -> list[tuple[str, int]]:
        """Versions to (re)index at start-up: those a crash left `indexing`, or all of them
        when the index, embedder or extraction changed since they were indexed (versions an
        older extraction made are extracted again first)."""
        again = set(self.reextract())
        stored = self.store.meta("index_fingerprint")
        if stored is not None and stored != self.fingerprint and self._moved(stored):
            self.store.set_meta("index_fingerprint", self.fingerprint)  # in the new form
            stored = self.fingerprint
        if stored != self.fingerprint:
            work = self.current_versions()
            self.store.set_indexing(work)
            self.store.set_meta("index_fingerprint", self.fingerprint)
            return work
        work = self.store.pending()
        # The versions extracted again that answer or will are indexed again, as a new one is.
        work += [key for key in self.current_versions() if key in again and key not in work]
        self.store.set_indexing(work)  # job rows for versions that have none (attempts kept)
        return work
