"""Qdrant Edge: the embedded, in-process index (`qdrant-edge-py`).

Engine facts this adapter relies on (checked with qdrant-edge-py 0.9.0): new points are
searchable at once (an appendable segment, searched exactly); one `update()` is
all-or-nothing, also across a SIGKILL (WAL replay); the WAL directory is locked, so a second
process on the same directory fails to open it; calls hold the GIL, so upserts go in small
batches to keep the event loop responsive.

HNSW graphs are built only by `build_hnsw`: on a copy, in a child process at the lowest CPU
priority (the build holds its GIL for minutes), then swapped in by renaming; searches go on
meanwhile and writes wait. Opening the new shard holds the server's GIL, so the child also
moves the payload indexes that only deletions use to mmap, which opens without reading them.
A shard opened with the serving config keeps the graphs it has and never builds new ones.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
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

# Serving: segments never grow an HNSW graph by themselves; optimize() only vacuums.
_NO_HNSW_THRESHOLD_KB = 1_000_000_000
# `build_hnsw`: segments with at least this much vector data (~10k float16 384-d vectors) get
# a graph; smaller ones stay exact, which is as fast at that size.
HNSW_THRESHOLD_KB = 8_000
# Graph parameters and search ef, chosen on bench_hnsw's recall and latency (docs/decisions.md):
# a denser graph costs build time in the child, a large ef costs every query.
HNSW_M = 32
HNSW_EF_CONSTRUCT = 200
DEFAULT_HNSW_EF = 256
_BUILD = "import sys; from stream_rag.index.edge import build_main; sys.exit(build_main())"
_PAYLOAD = qe.PayloadSelector.Include(["doc_id", "version", "chunk_id"])


# Payload indexes: `collection` filters every search and stays in RAM; `doc_id` and `version`
# serve deletions only, so they live in mmap files, which a shard opens without reading (the
# 100k-point swap spent most of its GIL hold loading in-RAM maps). Shards made before this
# also index `chunk_id`, which nothing filters on; `build_hnsw` drops it.
_COLD = qe.Memory.Cold
_MAX_TRACKED = 1000
_EXTRA_FILE = "stream_rag_counts.json"
# Quantized segments: twice the limit found on int8, rescored on the stored vectors.
_RESCORE = qe.QuantizationSearchParams(rescore=True, oversampling=2.0)
_EXACT = qe.QuantizationSearchParams(ignore=True)
_FIELDS: tuple[tuple[str, Any], ...] = (
    ("collection", qe.KeywordIndexParams(enable_hnsw=False)),
    ("doc_id", qe.KeywordIndexParams(memory=_COLD)),
    ("version", qe.IntegerIndexParams(lookup=True, range=True, memory=_COLD)),
)


def _match(key: str, value: str | int) -> qe.FieldCondition:
    return qe.FieldCondition(key=key, match=qe.MatchValue(value=value))


def edge_config(
    dim: int,
    *,
    float16: bool = True,
    build_kb: int | None = None,
    m: int = HNSW_M,
    ef_construct: int = HNSW_EF_CONSTRUCT,
) -> qe.EdgeConfig:
    """The shard's config; with `build_kb`, `optimize()` gives segments of at least that many
    KB of vectors an HNSW graph of `m` links per node and int8 copies of their vectors."""
    datatype = qe.VectorStorageDatatype.Float16 if float16 else None
    # Built segments keep everything in mmap files (`Memory.Cold`): the server opens them at
    # the swap while holding the GIL, and reading them in took 2-3x as long (0.5-0.8 s against
    # 0.2-0.3 s at 100k); searches read the same pages from the page cache once warm.
    cold = _COLD if build_kb is not None else None
    hnsw = qe.HnswIndexConfig(
        m=m, ef_construct=ef_construct, full_scan_threshold=8_000, memory=cold
    )
    # The graph is walked on int8 vectors (a quarter of float32's bytes per distance); the
    # candidates are then rescored on the stored vectors (`_RESCORE`), which keeps recall.
    int8 = qe.ScalarQuantizationConfig(type=qe.ScalarType.Int8, quantile=0.99)
    return qe.EdgeConfig(
        vectors={
            DENSE: qe.EdgeVectorParams(
                size=dim,
                distance=qe.Distance.Cosine,
                datatype=datatype,
                hnsw_config=hnsw,
                quantization_config=int8 if build_kb is not None else None,
                memory=cold,
            )
        },
        sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf, memory=cold)},
        # Any deleted point makes a segment worth vacuuming when `vacuum()` runs: deleted
        # points count in IDF until then (there is no background optimiser).
        optimizers=qe.EdgeOptimizersConfig(
            indexing_threshold=_NO_HNSW_THRESHOLD_KB if build_kb is None else build_kb,
            deleted_threshold=1e-9,
            vacuum_min_vector_number=1,
        ),
        id_tracker_memory=cold,
        # Each search runs in the calling thread (a worker already, two at most at once):
        # the engine's own pool (one thread per core) cost a hand-off per query, and its
        # sparse search held the GIL while waiting for that thread, stalling the event loop
        # on a busy machine. Process CPU per query on the sample KB: dense 0.08 -> 0.05 ms,
        # sparse 0.10-0.12 -> 0.03-0.04 ms (docs/decisions.md).
        max_search_threads=1,
    )


def _replaced(path: Path) -> Path:
    return path.with_name(path.name + ".replaced")


def _building(path: Path) -> Path:
    return path.with_name(path.name + ".hnsw-build")


class EdgeIndex:
    def __init__(
        self, shard: qe.EdgeShard, path: Path, dim: int, *, float16: bool = True, hnsw_ef: int
    ) -> None:
        self._shard = shard
        self.path = path
        self.dim = dim
        self.float16 = float16
        self.hnsw_ef = hnsw_ef
        self.name = f"qdrant-edge:{path}"
        # Every shard call holds `_shard_lock` (they hold the GIL anyway, so nothing is lost);
        # writes also hold `_write_lock`, which `build_hnsw` keeps from copy to swap.
        self._shard_lock = threading.Lock()
        self._write_lock = threading.Lock()
        # Every collection that has points (a superset: deletions never shrink it), so that a
        # search in the only collection skips the payload filter (~18% of an HNSW query).
        self._collections = _collections(shard)
        self._extra = _read_extra(path)

    @classmethod
    def open(
        cls, path: Path, dim: int, *, float16: bool = True, hnsw_ef: int = DEFAULT_HNSW_EF
    ) -> EdgeIndex:
        """Open or create the shard at `path`. Dense vectors are stored as float16 by default:
        exact search reads half the memory (see docs/decisions.md)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() and _replaced(path).exists():
            os.rename(_replaced(path), path)  # a crash between the two renames of a swap
        try:
            shard = _load(path, edge_config(dim, float16=float16))
        except Exception as exc:
            if "WouldBlock" in str(exc):
                raise IndexUnavailableError(
                    f"the index at {path} is in use by another process (is `stream-rag serve` "
                    "running on this data directory? upload through its API, or use "
                    "`stream-rag ingest --url`)"
                ) from None
            raise IndexUnavailableError(f"cannot open the index at {path}: {exc}") from None
        existing = set(shard.info().payload_schema)
        for name, schema in _FIELDS:
            if name not in existing:
                shard.update(qe.UpdateOperation.create_field_index(name, schema))
        return cls(shard, path, dim, float16=float16, hnsw_ef=hnsw_ef)

    def upsert(self, points: Sequence[IndexPoint]) -> None:
        for start in range(0, len(points), UPSERT_BATCH):
            batch = [self._point(p) for p in points[start : start + UPSERT_BATCH]]
            with self._write_lock, self._shard_lock:
                self._shard.update(qe.UpdateOperation.upsert_points(batch))
                if self._collections is not None:
                    self._collections.update(
                        p.collection for p in points[start : start + UPSERT_BATCH]
                    )

    def _point(self, point: IndexPoint) -> qe.Point:
        vectors: dict[str, Any] = {}
        if point.dense is not None:
            if point.dense.shape != (self.dim,):
                raise IndexUnavailableError(
                    f"vector of {point.dense.shape} for an index of {self.dim}"
                )
            vectors[DENSE] = np.asarray(point.dense, dtype=np.float32)
        if point.sparse:
            vectors[SPARSE] = qe.SparseVector(
                indices=list(point.sparse.indices), values=list(point.sparse.values)
            )
        return qe.Point(id=point.point_id, vector=vectors, payload=point.payload())

    def delete_versions(
        self, doc_id: str, keep: int | None = None, *, below: int | None = None
    ) -> None:
        must_not: list[Any] | None = [_match("version", keep)] if keep is not None else None
        must: list[Any] = [_match("doc_id", doc_id)]
        if below is not None:
            must.append(qe.FieldCondition(key="version", range=qe.RangeFloat(lt=below)))
        selector = qe.Filter(must=must, must_not=must_not)
        with self._write_lock, self._shard_lock:
            self._shard.update(qe.UpdateOperation.delete_points_by_filter(selector))

    def search_dense(
        self, vector: npt.NDArray[np.float32], collection: str, limit: int, *, exact: bool = False
    ) -> list[IndexHit]:
        """Nearest by cosine; segments with an HNSW graph are searched approximately (with
        `hnsw_ef`) unless `exact`."""
        query = qe.Query.Nearest(vector.tolist(), using=DENSE)
        params = qe.SearchParams(hnsw_ef=self.hnsw_ef, quantization=_RESCORE)
        if exact:  # exact is the reference: the stored vectors only, never their int8 copies
            params = qe.SearchParams(exact=True, quantization=_EXACT)
        return self._query(query, collection, limit, params)

    def search_sparse(self, vector: SparseVector, collection: str, limit: int) -> list[IndexHit]:
        if not vector:
            return []
        sparse = qe.SparseVector(indices=list(vector.indices), values=list(vector.values))
        return self._query(qe.Query.Nearest(sparse, using=SPARSE), collection, limit)

    def _query(
        self, query: qe.Query, collection: str, limit: int, params: qe.SearchParams | None = None
    ) -> list[IndexHit]:
        with self._shard_lock:
            # Without a filter when every point is in `collection` (the usual single-collection
            # deployment): the same hits, BM25's IDF being shard-wide either way. Decided under
            # the lock, so a write to another collection cannot slip in between.
            only = self._collections == {collection}
            request = qe.QueryRequest(
                limit=limit,
                query=query,
                filter=None if only else qe.Filter(must=[_match("collection", collection)]),
                with_payload=_PAYLOAD,
                params=params,
            )
            found = self._shard.query(request)
        return [hit_from_payload(p.payload, p.score) for p in found]

    def count(self) -> int:
        with self._shard_lock:
            return int(self._shard.count(qe.CountRequest(exact=True)))

    def hnsw_segments(self) -> int:
        """Segments whose dense vectors have an HNSW graph (the engine's info does not say)."""
        return sum(1 for _ in self.path.glob(f"segments/*/vector_index-{DENSE}/graph.bin"))

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
            with self._write_lock, self._shard_lock:
                self._shard.update(qe.UpdateOperation.delete_points(batch))

    def stale_points(self) -> int:
        # The engine's indexed vectors include deleted points until a vacuum rewrites their
        # segment. They also count each live point's sparse vector and, in a segment with a
        # graph, its dense one: `_extra` (saved when nothing was stale) takes those out.
        with self._shard_lock:
            info = self._shard.info()
        return max(0, int(info.indexed_vectors_count) - int(info.points_count) - self._extra)

    def vacuum(self) -> None:
        # A vacuumed segment is rewritten without its HNSW graph: run `build_hnsw` again.
        with self._write_lock, self._shard_lock:
            self._shard.optimize()
            self._extra = _save_extra(self._shard, self.path)

    def optimize(self) -> bool:
        """Vacuum deleted points (refreshing IDF statistics) and merge segments."""
        with self._write_lock, self._shard_lock:
            changed = bool(self._shard.optimize())
            self._extra = _save_extra(self._shard, self.path)
            return changed

    def build_hnsw(
        self,
        threshold_kb: int = HNSW_THRESHOLD_KB,
        *,
        m: int = HNSW_M,
        ef_construct: int = HNSW_EF_CONSTRUCT,
    ) -> dict[str, float]:
        """Give large segments an HNSW graph without stopping search: copy the shard, build on
        the copy in a child process, swap it in by renaming. Writes wait meanwhile. Blocking."""
        timings: dict[str, float] = {}
        work, old = _building(self.path), _replaced(self.path)
        with self._write_lock:
            t0 = time.perf_counter()
            with self._shard_lock:
                self._shard.flush()
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(self.path, work)
            timings["copy_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            kind = "f16" if self.float16 else "f32"
            args = [str(work), str(self.dim), kind, str(threshold_kb), str(m), str(ef_construct)]
            done = subprocess.run(
                [sys.executable, "-c", _BUILD, *args], capture_output=True, text=True
            )
            if done.returncode != 0:
                shutil.rmtree(work, ignore_errors=True)
                raise IndexUnavailableError(f"HNSW build failed: {done.stderr.strip()[-500:]}")
            timings["build_s"] = time.perf_counter() - t0
            shutil.rmtree(old, ignore_errors=True)
            # Each engine call below holds the GIL, so the event loop stands still for it: they
            # are timed apart (`/healthz` under a build is the figure to watch).
            with self._shard_lock:
                t0 = time.perf_counter()
                self._shard.close()
                timings["close_s"] = time.perf_counter() - t0
                os.rename(self.path, old)
                os.rename(work, self.path)
                t0 = time.perf_counter()
                self._shard = _load(self.path, edge_config(self.dim, float16=self.float16))
                timings["open_s"] = time.perf_counter() - t0
                self._collections = _collections(self._shard)
                self._extra = _read_extra(self.path)
        shutil.rmtree(old, ignore_errors=True)
        timings["hnsw_segments"] = self.hnsw_segments()
        return timings

    def close(self) -> None:
        with self._shard_lock:
            self._shard.flush()
            self._shard.close()


def _save_extra(shard: qe.EdgeShard, path: Path) -> int:
    """Right after a vacuum (nothing stale): record how many more vectors the engine counts
    as indexed than there are points, in the shard's directory so it moves with a swap."""
    info = shard.info()
    extra = int(info.indexed_vectors_count) - int(info.points_count)
    (path / _EXTRA_FILE).write_text(json.dumps({"indexed_minus_points": extra}))
    return extra


def _read_extra(path: Path) -> int:
    try:
        return int(json.loads((path / _EXTRA_FILE).read_text())["indexed_minus_points"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0  # a shard without graphs, as before: every indexed vector is a sparse one


def _collections(shard: qe.EdgeShard) -> set[str] | None:
    """The collections that have points; None (always filter) past a thousand of them."""
    request = qe.FacetRequest(key="collection", limit=_MAX_TRACKED, exact=True)
    values = {str(hit.value) for hit in shard.facet(request).hits}
    return values if len(values) < _MAX_TRACKED else None


def _load(path: Path, config: qe.EdgeConfig) -> qe.EdgeShard:
    if (path / "edge_config.json").exists():
        return qe.EdgeShard.load(os.fspath(path), config)
    return qe.EdgeShard.create(os.fspath(path), config)


def build_main() -> int:
    """The child process of `build_hnsw`: argv is the shard copy, the dimension, f16|f32, the
    threshold in KB, m and ef_construct."""
    path, dim, kind = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    kb, m, ef_construct = (int(a) for a in sys.argv[4:7])
    # The lowest priority: on a small machine the build would otherwise take a core from the
    # server that answers meanwhile.
    os.nice(19)
    config = edge_config(dim, float16=kind == "f16", build_kb=kb, m=m, ef_construct=ef_construct)
    shard = _load(path, config)
    schema = shard.info().payload_schema
    for name, params in _FIELDS:
        # Indexes made before the mmap placement are rebuilt with it (here, not in the server).
        if name in schema and getattr(schema[name].params, "memory", None) != params.memory:
            shard.update(qe.UpdateOperation.create_field_index(name, params))
    if "chunk_id" in schema:
        shard.update(qe.UpdateOperation.delete_field_index("chunk_id"))
    shard.optimize()
    shard.flush()
    _save_extra(shard, path)
    shard.close()
    return 0
