"""The embedded index's shard configuration and the `build_hnsw` child process: what a
shard is opened with, and what the child runs on the copy it builds graphs in."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from .base import DENSE, SPARSE

# Serving: segments never grow an HNSW graph by themselves; optimize() only vacuums.
_NO_HNSW_THRESHOLD_KB = 1_000_000_000
# `build_hnsw`: segments with at least this much vector data (~10k float16 384-d vectors) get
# a graph; smaller ones stay exact, which is as fast at that size.
HNSW_THRESHOLD_KB = 8_000
# Graph parameters and search ef, chosen on bench_hnsw's recall and latency (docs/decisions/):
# a denser graph costs build time in the child, a large ef costs every query.
HNSW_M = 32
HNSW_EF_CONSTRUCT = 200
DEFAULT_HNSW_EF = 256
# Payload indexes: `collection` filters every search and stays in RAM; `doc_id` and `version`
# serve deletions only, so they live in mmap files, which a shard opens without reading (the
# 100k-point swap spent most of its GIL hold loading in-RAM maps). Shards made before this
# also index `chunk_id`, which nothing filters on; `build_hnsw` drops it.
COLD = qe.Memory.Cold
_EXTRA_FILE = "stream_rag_counts.json"
FIELDS: tuple[tuple[str, Any], ...] = (
    ("collection", qe.KeywordIndexParams(enable_hnsw=False)),
    ("doc_id", qe.KeywordIndexParams(memory=COLD)),
    ("version", qe.IntegerIndexParams(lookup=True, range=True, memory=COLD)),
)


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
    cold = COLD if build_kb is not None else None
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
        # sparse 0.10-0.12 -> 0.03-0.04 ms (docs/decisions/).
        max_search_threads=1,
    )


def save_extra(shard: qe.EdgeShard, path: Path) -> int:
    """Right after a vacuum (nothing stale): record how many more vectors the engine counts
    as indexed than there are points, in the shard's directory so it moves with a swap."""
    info = shard.info()
    extra = int(info.indexed_vectors_count) - int(info.points_count)
    (path / _EXTRA_FILE).write_text(json.dumps({"indexed_minus_points": extra}))
    return extra


def read_extra(path: Path) -> int:
    try:
        return int(json.loads((path / _EXTRA_FILE).read_text())["indexed_minus_points"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0  # a shard without graphs, as before: every indexed vector is a sparse one


def load(path: Path, config: qe.EdgeConfig) -> qe.EdgeShard:
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
    shard = load(path, config)
    schema = shard.info().payload_schema
    for name, params in FIELDS:
        # Indexes made before the mmap placement are rebuilt with it (here, not in the server).
        if name in schema and getattr(schema[name].params, "memory", None) != params.memory:
            shard.update(qe.UpdateOperation.create_field_index(name, params))
    if "chunk_id" in schema:
        shard.update(qe.UpdateOperation.delete_field_index("chunk_id"))
    shard.optimize()
    shard.flush()
    save_extra(shard, path)
    shard.close()
    return 0
