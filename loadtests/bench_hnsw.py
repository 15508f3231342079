"""HNSW in the embedded index: recall@10 against exact search, query latency, and the server's
`/healthz` while a 100k-point index gets its graphs.

    python -m loadtests.bench_hnsw --data ../shared/data --real 11000 --synthetic 100000

- real: Cranfield abstracts cut into sentences (plus BEGIN knowledge passages when there are
  too few) embedded with the local MiniLM; queries: the 225 Cranfield questions.
- synthetic: vectors drawn from a Gaussian with the real embeddings' mean and covariance (the
  spectrum of real embeddings, not the uniform sphere no real text fills), BM25 vectors from
  Zipf-drawn terms as in bench_index; hybrid = dense + BM25 + fusion, as served.
- synthetic and healthz: `stream-rag serve` on a data directory whose store holds documents
  with 100k chunks (one point each, the synthetic vectors), polled every 20 ms while `POST
  /v1/index/optimize` builds the graphs in its child process (default threshold); recall and
  latency are then measured on the index the server built, at each `--ef`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import numpy.typing as npt

from stream_rag.index.base import IndexPoint
from stream_rag.index.bm25 import document_vector, query_vector
from stream_rag.index.edge import EdgeIndex
from stream_rag.retrieve.fusion import fuse
from stream_rag.retrieve.metrics import percentile
from tests.helpers import free_port

F32 = npt.NDArray[np.float32]


def real_texts(data: Path, n: int) -> tuple[list[str], list[str]]:
    corpus = [json.loads(line) for line in (data / "cranfield" / "corpus.jsonl").open()]
    texts = [s.strip() for d in corpus for s in re.split(r" \. ", d["text"]) if len(s) > 40]
    if len(texts) < n:
        begin = data / "attribution" / "begin_dev_wow.tsv"
        texts += [line.split("\t")[0] for line in begin.open(encoding="utf-8")][1:]
    queries = [json.loads(line)["text"] for line in (data / "cranfield" / "queries.jsonl").open()]
    return list(dict.fromkeys(texts))[:n], queries


def embed(texts: list[str], cache: Path) -> F32:
    if cache.exists():
        loaded: F32 = np.load(cache)
        if len(loaded) == len(texts):
            return loaded
    from stream_rag.embed.minilm import MiniLMEmbedder

    vectors = MiniLMEmbedder().embed(texts)
    np.save(cache, vectors)
    return vectors


def points(vectors: F32, rng: np.random.Generator, prefix: str = "c") -> list[IndexPoint]:
    return [
        IndexPoint(
            chunk_id=f"{prefix}{i}",
            doc_id=f"d{i // 100}",
            version=1,
            collection="default",
            sparse=document_vector([f"t{t % 50_000}" for t in rng.zipf(1.3, 60)], 60.0),
            dense=vectors[i],
        )
        for i in range(len(vectors))
    ]


def measure(index: EdgeIndex, queries: F32, rng: np.random.Generator) -> dict[str, float]:
    recalls, exact_ms, approx_ms, hybrid_ms = [], [], [], []
    for q in queries:
        t0 = time.perf_counter()
        exact = index.search_dense(q, "default", 10, exact=True)
        t1 = time.perf_counter()
        approx = index.search_dense(q, "default", 10)
        t2 = time.perf_counter()
        dense = index.search_dense(q, "default", 50)
        sparse = index.search_sparse(
            query_vector([f"t{t % 50_000}" for t in rng.zipf(1.3, 6)]), "default", 50
        )
        fuse(
            {
                "dense": [(h.chunk_id, h.score) for h in dense],
                "bm25": [(h.chunk_id, h.score) for h in sparse],
            },
            {"dense": 0.5, "bm25": 0.5},
        )
        t3 = time.perf_counter()
        recalls.append(len({h.chunk_id for h in exact} & {h.chunk_id for h in approx}) / 10)
        exact_ms.append((t1 - t0) * 1000)
        approx_ms.append((t2 - t1) * 1000)
        hybrid_ms.append((t3 - t2) * 1000)
    return {
        "recall@10": float(np.mean(recalls)),
        "exact_p50": percentile(exact_ms, 0.5),
        "hnsw_p50": percentile(approx_ms, 0.5),
        "hybrid_p50": percentile(hybrid_ms, 0.5),
    }


def report(label: str, n: int, before: dict[str, float], after: dict[str, float]) -> None:
    print(
        f"{label:>10} {n:>7} exact dense p50 {after['exact_p50']:.2f} ms | hybrid p50 exact-only "
        f"{before['hybrid_p50']:.2f} ms -> with HNSW {after['hybrid_p50']:.2f} ms | HNSW dense "
        f"p50 {after['hnsw_p50']:.2f} ms | recall@10 {after['recall@10']:.4f}",
        flush=True,
    )


def recall_run(label: str, vectors: F32, queries: F32, efs: list[int], threshold_kb: int) -> None:
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as tmp:
        index = EdgeIndex.open(Path(tmp) / "edge", vectors.shape[1])
        index.upsert(points(vectors, rng))
        before = measure(index, queries, rng)
        timings = index.build_hnsw(threshold_kb=threshold_kb)
        print(f"{label:>10} build: {timings}", flush=True)
        for ef in efs:
            index.hnsw_ef = ef
            report(f"{label} ef={ef}", len(vectors), before, measure(index, queries, rng))
        index.close()


def gaussian_like(real: F32, n: int, rng: np.random.Generator) -> F32:
    mean = real.mean(axis=0)
    cov = np.cov(real, rowvar=False)
    out = rng.multivariate_normal(mean, cov, size=n).astype(np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def healthz_during_build(vectors: F32, probes: F32, efs: list[int]) -> None:
    """Store documents whose chunks match the points, start the server, optimise, poll; then
    measure recall and latency on the index the server built."""
    from stream_rag.embed.minilm import MiniLMEmbedder
    from stream_rag.index.indexing import Indexer
    from stream_rag.store.documents import DocumentStore

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        store = DocumentStore(data, chunk_chars=100, chunk_overlap_chars=0)
        per_doc = 1000
        ids: list[str] = []
        for d in range(len(vectors) // per_doc):
            body = " ".join(
                f"Doc {d} line {i} states value {i * 7 % 1000} units." for i in range(per_doc * 2)
            )
            stager = store.blobs.stager(10**9)
            stager.write(body.encode())
            added = store.add(stager.finish(), filename=f"doc{d}.txt")
            ids.append(added.document.id)
        index = EdgeIndex.open(data / "index" / "edge-384-f16", 384)
        row = 0
        zipf = np.random.default_rng(1)
        for doc_id in ids:
            chunks = store.chunks(doc_id, 1)[: len(vectors) - row]
            batch = [
                IndexPoint(
                    c.id,
                    doc_id,
                    1,
                    "default",
                    # BM25 side as in `points` (Zipf terms), so hybrid queries find hits.
                    document_vector([f"t{t % 50_000}" for t in zipf.zipf(1.3, 60)], 60.0),
                    vectors[row + i],
                )
                for i, c in enumerate(chunks)
            ]
            row += len(batch)
            index.upsert(batch)
            store.set_ready(doc_id, 1, sum(len(c.text.split()) for c in chunks), len(chunks))
        embedder = MiniLMEmbedder()
        store.set_meta("index_fingerprint", Indexer(store, index, embedder).fingerprint)
        points_total = index.count()
        before = measure(index, probes, np.random.default_rng(1))
        index.close()
        store.close()
        port = free_port()
        env = {**os.environ, "STREAM_RAG_DATA_DIR": str(data), "STREAM_RAG_ACCESS_LOG": "false"}
        code = "import sys; from stream_rag.cli import main; sys.exit(main())"
        server = subprocess.Popen(
            [sys.executable, "-c", code, "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            while True:
                try:
                    if httpx.get(f"{base}/healthz", timeout=5).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.5)
            result: dict[str, object] = {}

            def optimise() -> None:
                response = httpx.post(f"{base}/v1/index/optimize", timeout=None)
                result.update(response.json())

            worker = threading.Thread(target=optimise)
            worker.start()
            latencies: list[float] = []
            with httpx.Client(base_url=base) as client:
                while worker.is_alive():
                    t0 = time.perf_counter()
                    client.get("/healthz")
                    latencies.append((time.perf_counter() - t0) * 1000)
                    time.sleep(0.02)
            worker.join()
            print(
                f"healthz during the build of {points_total} points: {len(latencies)} polls, "
                f"p50 {percentile(latencies, 0.5):.1f} ms, p99 {percentile(latencies, 0.99):.1f} "
                f"ms, max {max(latencies):.1f} ms; optimize said {result}",
                flush=True,
            )
        finally:
            server.terminate()
            server.wait(timeout=30)
        index = EdgeIndex.open(data / "index" / "edge-384-f16", 384)
        print(f"synthetic: {index.hnsw_segments()} HNSW segments", flush=True)
        for ef in efs:
            index.hnsw_ef = ef
            after = measure(index, probes, np.random.default_rng(1))
            report(f"synthetic ef={ef}", points_total, before, after)
        index.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"), help="shared data")
    parser.add_argument("--real", type=int, default=11_000)
    parser.add_argument("--synthetic", type=int, default=100_000)
    parser.add_argument("--ef", type=int, nargs="+", default=[128, 256, 512])
    parser.add_argument(
        "--threshold-kb",
        type=int,
        default=1,
        help="segments that get a graph (1: all, so recall is HNSW's; the served default is 8000)",
    )
    parser.add_argument("--skip", nargs="*", default=[], choices=["real", "synthetic"])
    args = parser.parse_args()
    texts, questions = real_texts(args.data, args.real)
    cache = Path(tempfile.gettempdir()) / f"stream_rag_bench_hnsw_{len(texts)}.npy"
    t0 = time.perf_counter()
    real = embed(texts, cache)
    queries = embed(questions, cache.with_name(cache.stem + "_queries.npy"))
    took = time.perf_counter() - t0
    print(f"embedded {len(texts)} texts and {len(queries)} queries in {took:.0f} s")
    if "real" not in args.skip:
        recall_run("real", real, queries, args.ef, args.threshold_kb)
    if "synthetic" not in args.skip:
        synthetic = gaussian_like(real, args.synthetic, np.random.default_rng(0))
        probes = gaussian_like(real, 200, np.random.default_rng(9))
        healthz_during_build(synthetic, probes, args.ef)


if __name__ == "__main__":
    main()
