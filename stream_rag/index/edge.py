"""Qdrant Edge: the embedded, in-process index (`qdrant-edge-py`).

Engine facts this adapter relies on (checked with qdrant-edge-py 0.9.0): new points are
searchable at once (an appendable segment, searched exactly); one `update()` is
all-or-nothing, also across a SIGKILL (WAL replay); the WAL directory is locked, so a second
process on the same directory fails to open it; calls hold the GIL, so upserts go in small
batches to keep the event loop responsive.

HNSW graphs are built only by `build_hnsw`: on a copy, in a child process at the lowest CPU
priority (the build holds its GIL for minutes), then swapped in by renaming. Searches and
writes go on against the live shard meanwhile; the writes are journaled and re-applied to the
copy before the swap (edge_build.py). Opening the new shard holds the server's GIL, so the
child also moves the payload indexes that only deletions use to mmap, which opens without
reading them.
A shard opened with the serving config keeps the graphs it has and never builds new ones.

A small index (`mirror_max` points) is searched densely on an in-memory copy of its vectors
(mirror.py): every write goes to the engine, then to the copy, under the write lock.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import qdrant_edge as qe

from .base import (
    DENSE,
    SPARSE,
    UPSERT_BATCH,
    IndexHit,
    IndexPoint,
    IndexUnavailableError,
    PointRef,
    hit_from_payload,
    ref_from_payload,
)
from .bm25 import SparseVector
from .edge_build import BuildChild, HnswBuilds, Journal, collections_of, replaced
from .edge_config import (
    DEFAULT_HNSW_EF,
    FIELDS,
    edge_config,
    load,
    read_extra,
    save_extra,
)
from .edge_points import OPERATION_BYTES, engine_point, match, point_bytes
from .mirror import DenseMirror, MirrorRow, mirror_rows
from .refs import PREFILL_MAX, HitRefs

log = logging.getLogger("stream_rag")
# Quantized segments: twice the limit found on int8, rescored on the stored vectors.
_RESCORE = qe.QuantizationSearchParams(rescore=True, oversampling=2.0)
_EXACT = qe.QuantizationSearchParams(ignore=True)
# Every payload field (four short ones): the engine's `PayloadSelector.Include` of the three a
# hit needs cost more than reading them all (thread CPU per 50 hits on 11k Cranfield chunks:
# dense HNSW 0.84 -> 0.65 ms, sparse 0.39 -> 0.26 ms).
_PAYLOAD = True
# Points read per engine call while the dense mirror loads (each call holds the GIL).
_MIRROR_BATCH = 256
# What a running HNSW build's journal of writes may hold by default (`Settings.hnsw_journal_mb`).
JOURNAL_MAX_BYTES = 256 * 2**20


class EdgeIndex(HnswBuilds):
    def __init__(
        self,
        shard: qe.EdgeShard,
        path: Path,
        dim: int,
        *,
        float16: bool = True,
        hnsw_ef: int,
        mirror_max: int = 0,
        journal_max_bytes: int = JOURNAL_MAX_BYTES,
    ) -> None:
        self._shard = shard
        self.path = path
        self.dim = dim
        self.float16 = float16
        self.hnsw_ef = hnsw_ef
        self.name = f"qdrant-edge:{path}"
        # What the points are, wherever the data directory is (the index fingerprint's part).
        self.identity = f"qdrant-edge:{path.name}"
        # Every shard call holds `_shard_lock` (they hold the GIL anyway, so nothing is lost);
        # writes also hold `_write_lock`, which `build_hnsw` takes for the copy and the swap
        # only; one build (or vacuum) at a time holds `_build_lock`.
        self._shard_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._build_lock = threading.Lock()
        # While a build runs: the writes since its copy, re-applied to the copy at the swap.
        self._journal: Journal | None = None
        self.journal_max_bytes = journal_max_bytes
        # Bumped (under `_shard_lock`) by every write: what a search found is known to be
        # what it would find again while this is unchanged (answer/pipeline.py keeps results).
        self.generation = 0
        # Every collection that has points (a superset: deletions never shrink it), so that a
        # search in the only collection skips the payload filter (~18% of an HNSW query).
        self._collections = collections_of(shard)
        self._extra = read_extra(path)
        # Dense search of up to `mirror_max` points runs on an in-memory copy (mirror.py),
        # loaded by `warm` or the first dense search; None: not loaded, or too many points.
        self.mirror_max = mirror_max
        self._mirror: DenseMirror | None = None
        self._mirror_tried = mirror_max <= 0
        # Dense hits come without payload, resolved by point id here (refs.py: never stale).
        self._refs = HitRefs()
        # The build's child process (`stop_building` ends it when the index closes).
        self._builder = BuildChild()
        # Called by `build_hnsw` with "building" (the child is running) and "caught_up" (the
        # copy has the writes made until then; the last ones follow under the write lock):
        # tests use it to write at those points.
        self.build_hook: Callable[[str], None] | None = None

    @classmethod
    def open(
        cls,
        path: Path,
        dim: int,
        *,
        float16: bool = True,
        hnsw_ef: int = DEFAULT_HNSW_EF,
        mirror_max: int = 0,
        journal_max_bytes: int = JOURNAL_MAX_BYTES,
    ) -> EdgeIndex:
        """Open or create the shard at `path`. Dense vectors are stored as float16 by default:
        exact search reads half the memory (see docs/decisions/). Collections of up to
        `mirror_max` points are searched densely in memory (0, the default: by the engine).
        A build abandons itself once the writes made meanwhile pass `journal_max_bytes`."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() and replaced(path).exists():
            os.rename(replaced(path), path)  # a crash between the two renames of a swap
        try:
            shard = load(path, edge_config(dim, float16=float16))
        except Exception as exc:
            if "WouldBlock" in str(exc):
                raise IndexUnavailableError(
                    f"the index at {path} is in use by another process (is `stream-rag serve` "
                    "running on this data directory? stop it, or go through its HTTP API: "
                    "`stream-rag ingest|search|delete|ask|optimize --url`, `POST /v1/search`, "
                    "`DELETE /v1/documents/{id}`)"
                ) from None
            raise IndexUnavailableError(f"cannot open the index at {path}: {exc}") from None
        existing = set(shard.info().payload_schema)
        for name, schema in FIELDS:
            if name not in existing:
                shard.update(qe.UpdateOperation.create_field_index(name, schema))
        return cls(
            shard,
            path,
            dim,
            float16=float16,
            hnsw_ef=hnsw_ef,
            mirror_max=mirror_max,
            journal_max_bytes=journal_max_bytes,
        )

    def warm(self) -> None:
        """Read every point's refs (up to `PREFILL_MAX` points) and load the dense mirror, if
        the index is small enough (blocking; writes wait for the mirror)."""
        self._warm_refs()
        with self._write_lock:
            if self._mirror_tried:
                return
            self._mirror_tried = True
            with self._shard_lock:
                count = int(self._shard.count(qe.CountRequest(exact=True)))
            if count > self.mirror_max:
                return
            mirror = DenseMirror(self.dim, float16=self.float16)
            mirror.reserve(count)
            offset: Any = None
            while True:
                request = qe.ScrollRequest(
                    offset=offset, limit=_MIRROR_BATCH, with_payload=True, with_vector=[DENSE]
                )
                with self._shard_lock:
                    records, offset = self._shard.scroll(request)
                vectors: list[Any] = [r.vector for r in records]
                mirror.add(
                    mirror_rows(
                        [
                            (str(r.id), r.payload or {}, np.asarray(v[DENSE], np.float32))
                            for r, v in zip(records, vectors, strict=True)
                            if isinstance(v, dict) and DENSE in v
                        ]
                    )
                )
                if offset is None or not records:
                    break
            self._mirror = mirror

    def _warm_refs(self) -> None:
        """The refs of every point, so that no dense search fetches payloads: a search that
        found points not seen before read them from the engine, ~0.35 ms a search over the
        first thousands of searches at 11k points (docs/decisions/)."""
        with self._shard_lock:
            if int(self._shard.count(qe.CountRequest(exact=True))) > PREFILL_MAX:
                return
        offset: Any = None
        while True:
            request = qe.ScrollRequest(offset=offset, limit=_MIRROR_BATCH, with_payload=True)
            with self._shard_lock:
                records, offset = self._shard.scroll(request)
                if not self._refs.fill(records):
                    return
            if offset is None or not records:
                return

    def upsert(self, points: Sequence[IndexPoint]) -> None:
        for start in range(0, len(points), UPSERT_BATCH):
            chunk = points[start : start + UPSERT_BATCH]
            ids = [p.point_id for p in chunk]  # a uuid5 each: once
            batch = [engine_point(p, i, self.dim) for p, i in zip(chunk, ids, strict=True)]
            with self._write_lock, self._writing():
                size = sum(point_bytes(p, self.dim) for p in chunk)
                self._apply(qe.UpdateOperation.upsert_points(batch), size)
                if self._collections is not None:
                    self._collections.update(p.collection for p in chunk)
                for p, i in zip(chunk, ids, strict=True):
                    self._refs.put(i, p.chunk_id, p.doc_id, p.version)
                self._mirror_upsert(chunk)

    def _mirror_upsert(self, points: Sequence[IndexPoint]) -> None:
        """After the engine took `points` (write lock held): the same in the mirror, which is
        dropped once the index outgrows it (until the next start)."""
        mirror = self._mirror
        if mirror is None:
            return
        mirror.delete_points(p.point_id for p in points)  # a point without a vector now
        if len(mirror) + len(points) > self.mirror_max:
            self._mirror = None
            return
        mirror.add(
            MirrorRow(p.point_id, p.chunk_id, p.doc_id, p.version, p.collection, p.dense)
            for p in points
            if p.dense is not None
        )

    def _apply(self, operation: qe.UpdateOperation, size: int = OPERATION_BYTES) -> None:
        """A write (both locks held): to the shard, and to a running build's journal (`size`:
        about what the operation holds). Past the journal's cap the build's child is ended."""
        self._shard.update(operation)
        journal = self._journal
        if journal is not None and not journal.overflowed and not journal.add(operation, size):
            self._builder.cancel()
            log.warning(
                "HNSW build abandoned: over %g MB written meanwhile", journal.max_bytes / 2**20
            )

    def delete_versions(
        self, doc_id: str, keep: int | None = None, *, below: int | None = None
    ) -> None:
        must_not: list[Any] | None = [match("version", keep)] if keep is not None else None
        must: list[Any] = [match("doc_id", doc_id)]
        if below is not None:
            must.append(qe.FieldCondition(key="version", range=qe.RangeFloat(lt=below)))
        selector = qe.Filter(must=must, must_not=must_not)
        with self._write_lock, self._writing():
            self._apply(qe.UpdateOperation.delete_points_by_filter(selector))
            if self._mirror is not None:
                self._mirror.delete_versions(doc_id, keep, below)

    def search_dense(
        self, vector: npt.NDArray[np.float32], collection: str, limit: int, *, exact: bool = False
    ) -> list[IndexHit]:
        """Nearest by cosine, exactly in the mirror when the index is small enough, else by
        the engine: segments with an HNSW graph are searched approximately (with `hnsw_ef`)
        unless `exact`."""
        if not self._mirror_tried:
            self.warm()
        mirror = self._mirror
        if mirror is not None:
            return mirror.search(vector, collection, limit)
        query = qe.Query.Nearest(vector.tolist(), using=DENSE)
        params = qe.SearchParams(hnsw_ef=self.hnsw_ef, quantization=_RESCORE)
        if exact:  # exact is the reference: the stored vectors only, never their int8 copies
            params = qe.SearchParams(exact=True, quantization=_EXACT)
        return self._query(query, collection, limit, params, self._refs)

    def search_sparse(self, vector: SparseVector, collection: str, limit: int) -> list[IndexHit]:
        if not vector:
            return []
        sparse = qe.SparseVector(indices=list(vector.indices), values=list(vector.values))
        return self._query(qe.Query.Nearest(sparse, using=SPARSE), collection, limit)

    def _query(
        self,
        query: qe.Query,
        collection: str,
        limit: int,
        params: qe.SearchParams | None = None,
        refs: HitRefs | None = None,
    ) -> list[IndexHit]:
        """The engine's hits; with `refs`, found without payload and resolved through it."""
        with self._shard_lock:
            # Without a filter when every point is in `collection` (the usual single-collection
            # deployment): the same hits, BM25's IDF being shard-wide either way. Decided under
            # the lock, so a write to another collection cannot slip in between.
            only = self._collections == {collection}
            request = qe.QueryRequest(
                limit=limit,
                query=query,
                filter=None if only else qe.Filter(must=[match("collection", collection)]),
                with_payload=_PAYLOAD if refs is None else False,
                params=params,
            )
            found = self._shard.query(request)
            if refs is not None:
                return refs.hits(found, self._payloads)
        return [hit_from_payload(p.payload, p.score) for p in found]

    def _payloads(self, point_ids: list[Any]) -> list[qe.Record]:
        return self._shard.retrieve(point_ids, with_payload=True, with_vector=False)

    def count(self) -> int:
        with self._shard_lock:
            return int(self._shard.count(qe.CountRequest(exact=True)))

    def points(self) -> Iterator[PointRef]:
        offset: Any = None
        while True:
            request = qe.ScrollRequest(offset=offset, limit=1000, with_payload=True)
            with self._shard_lock:
                records, offset = self._shard.scroll(request)
            for record in records:
                yield ref_from_payload(record.id, record.payload)
            if offset is None or not records:
                return

    def delete_points(self, point_ids: Sequence[str]) -> None:
        ids = list(point_ids)
        for start in range(0, len(ids), UPSERT_BATCH):
            batch: list[Any] = ids[start : start + UPSERT_BATCH]
            with self._write_lock, self._writing():
                self._apply(qe.UpdateOperation.delete_points(batch), 64 * len(batch))
                if self._mirror is not None:
                    self._mirror.delete_points(batch)

    def stale_points(self) -> int:
        # The engine's indexed vectors include deleted points until a vacuum rewrites their
        # segment. They also count each live point's sparse vector and, in a segment with a
        # graph, its dense one: `_extra` (saved when nothing was stale) takes those out.
        with self._shard_lock:
            info = self._shard.info()
        return max(0, int(info.indexed_vectors_count) - int(info.points_count) - self._extra)

    def vacuum(self) -> None:
        # A vacuumed segment is rewritten without its HNSW graph: run `build_hnsw` again.
        # Skipped while a build runs (a delete must not wait for it): its copy replaces this
        # shard, and the next delete after the swap counts the stale points again.
        if not self._build_lock.acquire(blocking=False):
            log.info("vacuum skipped: an HNSW build is running")
            return
        try:
            with self._write_lock, self._writing():
                self._shard.optimize()
                self._extra = save_extra(self._shard, self.path)
        finally:
            self._build_lock.release()

    def optimize(self) -> bool:
        """Vacuum deleted points (refreshing IDF statistics) and merge segments."""
        with self._build_lock, self._write_lock, self._writing():
            changed = bool(self._shard.optimize())
            self._extra = save_extra(self._shard, self.path)
            return changed

    def close(self) -> None:
        self.stop_building()
        self._mirror = None
        with self._shard_lock:
            self._shard.flush()
            self._shard.close()
