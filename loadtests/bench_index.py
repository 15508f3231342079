"""Embedded index benchmark: ingest rate, query latency and memory at 10k and 100k chunks.

    python -m loadtests.bench_index --sizes 10000 100000

Synthetic chunks: random unit 384-dim vectors (the worst case for any approximate index; this
one searches exactly) and BM25 sparse vectors built by `bm25.document_vector` from Zipf-drawn
terms. Queries go through the production adapter (`EdgeIndex`) and the production fusion.
Latency excludes the query embedding. Float16 storage (the default) runs side by side with a
float32 baseline. HNSW graphs (`stream-rag optimize`), their recall and latency at 100k on
realistic vectors, and `/healthz` during their build: `loadtests/bench_hnsw.py`.
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from stream_rag.index.base import IndexPoint
from stream_rag.index.bm25 import document_vector, query_vector
from stream_rag.index.edge import EdgeIndex
from stream_rag.retrieve.fusion import fuse
from stream_rag.retrieve.metrics import percentile

DIM = 384
VOCAB = 50_000
QUERIES = 200


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def synthetic_points(n: int, rng: np.random.Generator) -> list[IndexPoint]:
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    points = []
    for i in range(n):
        terms = [f"t{t % VOCAB}" for t in rng.zipf(1.3, 60)]
        points.append(
            IndexPoint(
                chunk_id=f"doc{i // 4}:v1:{i % 4}",
                doc_id=f"doc{i // 4}",
                version=1,
                collection="default",
                sparse=document_vector(terms, 60.0),
                dense=vectors[i],
            )
        )
    return points


def run(n: int, float16: bool, points: list[IndexPoint], seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as tmp:
        index = EdgeIndex.open(Path(tmp) / "index", DIM, float16=float16)
        t0 = time.perf_counter()
        index.upsert(points)
        ingest = n / (time.perf_counter() - t0)
        dense_ms, sparse_ms, hybrid_ms = [], [], []
        for _ in range(QUERIES):
            vector = rng.standard_normal(DIM).astype(np.float32)
            vector /= np.linalg.norm(vector)
            sparse = query_vector([f"t{t % VOCAB}" for t in rng.zipf(1.3, 6)])
            t0 = time.perf_counter()
            dense_hits = index.search_dense(vector, "default", 50)
            t1 = time.perf_counter()
            sparse_hits = index.search_sparse(sparse, "default", 50)
            t2 = time.perf_counter()
            fuse(
                {
                    "dense": [(h.chunk_id, h.score) for h in dense_hits],
                    "bm25": [(h.chunk_id, h.score) for h in sparse_hits],
                },
                {"dense": 0.5, "bm25": 0.5},
            )
            t3 = time.perf_counter()
            dense_ms.append((t1 - t0) * 1000)
            sparse_ms.append((t2 - t1) * 1000)
            hybrid_ms.append((t3 - t0) * 1000)
        memory = rss_mb()
        index.close()
    return {
        "ingest": ingest,
        "dense_p50": statistics.median(dense_ms),
        "sparse_p50": statistics.median(sparse_ms),
        "hybrid_p50": statistics.median(hybrid_ms),
        "hybrid_p95": percentile(hybrid_ms, 0.95),
        "rss": memory,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Embedded index benchmark")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    print(
        f"{'chunks':>8} {'storage':>8} {'ingest/s':>9} {'dense p50':>10} {'bm25 p50':>9} "
        f"{'hybrid p50':>11} {'hybrid p95':>11} {'RSS MB':>7}"
    )
    for n in args.sizes:
        points = synthetic_points(n, np.random.default_rng(n))
        results = {}
        for float16 in (False, True):
            gc.collect()
            results[float16] = r = run(n, float16, points, seed=7)
            label = "float16" if float16 else "float32"
            print(
                f"{n:>8} {label:>8} {r['ingest']:>9.0f} {r['dense_p50']:>10.2f} "
                f"{r['sparse_p50']:>9.2f} {r['hybrid_p50']:>11.2f} {r['hybrid_p95']:>11.2f} "
                f"{r['rss']:>7.0f}"
            )
        ratio = results[True]["hybrid_p50"] / results[False]["hybrid_p50"]
        print(f"{n:>8} float16/float32 hybrid p50 ratio {ratio:.2f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process {peak:.0f} MB (includes the synthetic points)")


if __name__ == "__main__":
    main()
