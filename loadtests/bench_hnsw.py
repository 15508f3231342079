"""HNSW in the embedded index: recall@10 against exact search, hybrid latency by branch, and
the server's `/healthz` while `POST /v1/index/optimize` builds the graphs of 100k points.

    python -m loadtests.bench_hnsw --data ../shared/data

Vector sets (each searched by the production adapter, `EdgeIndex`, after `build_hnsw`):
- real: 11,429 texts (Vaswani's size): Cranfield abstract sentences, then sentences of the web
  articles WiCE cites, embedded with the local MiniLM; queries: the 225 Cranfield questions and
  the 349 WiCE claims (574, none of them in the set).
- mixture (100k, the realistic synthetic set): each vector a normalised blend of two real
  embeddings (weight 0.5-1 on the first) plus Gaussian noise (0.03 per dimension), so it has
  the topical clusters real chunks have; queries: the real queries. It is made from real
  embeddings, so it is not independent of them.
- uniform (100k): random unit vectors, the worst case: no real text fills the sphere evenly.
  Queries: random unit vectors.
- gaussian (100k, optional): a Gaussian with the real embeddings' mean and covariance.

BM25 side: 60 Zipf-drawn terms per point, 6 per query, as bench_index. hybrid = dense search
(limit 50, as served) + BM25 search (limit 50) + fusion; no embedding, no store. Each figure is
the median over `--repeat` passes of the per-pass p50. `--healthz`: `stream-rag serve` on a
data directory whose store holds 100k chunks (the mixture vectors) is polled every 20 ms while
`POST /v1/index/optimize` runs, while another client deletes a document (the first three of
1,000 chunks, then its previous upload) and uploads a small one every 2 s (the DELETE's
latency, and the upload's time until its version is `ready`, are the writes' figures); the
set's recall and latency are then measured on the index the server built. `--server-src DIR`
runs the server from another checkout (a baseline).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import httpx
import numpy as np

from loadtests.hnsw_vectors import F32, VASWANI, embed, gaussian, mixture, real_texts, uniform
from stream_rag.index.base import IndexPoint
from stream_rag.index.bm25 import document_vector, query_vector
from stream_rag.index.edge import EdgeIndex
from stream_rag.index.edge_config import DEFAULT_HNSW_EF, HNSW_EF_CONSTRUCT, HNSW_M
from stream_rag.retrieve.fusion import fuse
from stream_rag.retrieve.metrics import percentile
from tests.helpers import free_port


def terms(rng: np.random.Generator, k: int) -> list[str]:
    return [f"t{t % 50_000}" for t in rng.zipf(1.3, k)]


def points(vectors: F32, rng: np.random.Generator) -> list[IndexPoint]:
    return [
        IndexPoint(f"c{i}", f"d{i // 100}", 1, "default", document_vector(terms(rng, 60), 60.0), v)
        for i, v in enumerate(vectors)
    ]


def one_pass(index: EdgeIndex, queries: F32, exact: list[set[str]] | None) -> dict[str, float]:
    rng = np.random.default_rng(1)
    recalls: list[float] = []
    dense_ms, bm25_ms, fuse_ms, hybrid_ms = [], [], [], []
    for i, q in enumerate(queries):
        if exact is not None:
            approx = index.search_dense(q, "default", 10)
            recalls.append(len({h.chunk_id for h in approx} & exact[i]) / 10)
        sparse = query_vector(terms(rng, 6))
        t0 = time.perf_counter()
        dense = index.search_dense(q, "default", 50, exact=exact is None)
        t1 = time.perf_counter()
        bm25 = index.search_sparse(sparse, "default", 50)
        t2 = time.perf_counter()
        branches = {
            "dense": [(h.chunk_id, h.score) for h in dense],
            "bm25": [(h.chunk_id, h.score) for h in bm25],
        }
        fuse(branches, {"dense": 0.5, "bm25": 0.5})
        t3 = time.perf_counter()
        dense_ms.append((t1 - t0) * 1000)
        bm25_ms.append((t2 - t1) * 1000)
        fuse_ms.append((t3 - t2) * 1000)
        hybrid_ms.append((t3 - t0) * 1000)
    return {
        "recall@10": float(np.mean(recalls)) if recalls else 1.0,
        "dense": percentile(dense_ms, 0.5),
        "bm25": percentile(bm25_ms, 0.5),
        "fuse": percentile(fuse_ms, 0.5),
        "hybrid": percentile(hybrid_ms, 0.5),
        "hybrid_p95": percentile(hybrid_ms, 0.95),
    }


def repeated(run: Callable[[], dict[str, float]], repeat: int) -> dict[str, float]:
    passes = [run() for _ in range(repeat)]
    return {key: statistics.median(p[key] for p in passes) for key in passes[0]}


def line(label: str, r: dict[str, float], extra: str = "") -> None:
    print(
        f"{label:<28} recall@10 {r['recall@10']:.4f} | p50 ms: hybrid {r['hybrid']:6.2f} = dense "
        f"{r['dense']:6.2f} + bm25 {r['bm25']:5.2f} + fusion {r['fuse']:4.2f} | hybrid p95 "
        f"{r['hybrid_p95']:6.2f}{extra}",
        flush=True,
    )


def measure(label: str, index: EdgeIndex, queries: F32, efs: list[int], repeat: int) -> None:
    """Exact search first (the baseline, side by side), then HNSW at each ef."""
    exact = [
        {h.chunk_id for h in index.search_dense(q, "default", 10, exact=True)} for q in queries
    ]
    line(f"{label} exact", repeated(lambda: one_pass(index, queries, None), repeat))
    for ef in efs:
        index.hnsw_ef = ef
        line(f"{label} ef={ef}", repeated(lambda: one_pass(index, queries, exact), repeat))


def recall_run(
    label: str, vectors: F32, queries: F32, args: argparse.Namespace, root: Path
) -> None:
    index = EdgeIndex.open(root / label, vectors.shape[1])
    try:
        index.upsert(points(vectors, np.random.default_rng(1)))
        timings = index.build_hnsw(threshold_kb=1, m=args.m, ef_construct=args.ef_construct)
        print(f"{label}: {len(vectors)} points, build {fmt(timings)}", flush=True)
        measure(label, index, queries, args.ef, args.repeat)
    finally:
        index.close()


def fmt(timings: Mapping[str, object]) -> str:
    return " ".join(
        f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in timings.items()
    )


def serve_data(vectors: F32, data: Path, *, old_fingerprint: bool = False) -> None:
    """A store whose documents' chunks are the points (one each), indexed as the server would."""
    from stream_rag.embed.minilm import MiniLMEmbedder
    from stream_rag.index.indexing import Indexer
    from stream_rag.services import CHUNK_READERS
    from stream_rag.store.documents import DocumentStore

    store = DocumentStore(data, chunk_chars=100, chunk_overlap_chars=0)
    index = EdgeIndex.open(data / "index" / "edge-384-f16", 384)
    rng, row = np.random.default_rng(1), 0
    for d in range(len(vectors) // 1000):
        body = " ".join(f"Doc {d} line {i} states value {i * 7 % 1000} units." for i in range(2000))
        stager = store.blobs.stager(10**9)
        stager.write(body.encode())
        doc_id = store.add(stager.finish(), filename=f"doc{d}.txt").document.id
        chunks = store.chunks(doc_id, 1)[: len(vectors) - row]
        index.upsert(
            [
                IndexPoint(c.id, doc_id, 1, "default", document_vector(terms(rng, 60), 60.0), v)
                for c, v in zip(chunks, vectors[row : row + len(chunks)], strict=True)
            ]
        )
        row += len(chunks)
        store.set_ready(doc_id, 1, sum(len(c.text.split()) for c in chunks), len(chunks))
    indexer = Indexer(store, index, MiniLMEmbedder(), readers=CHUNK_READERS)
    fingerprint = indexer.fingerprint
    if old_fingerprint:  # as a server before the path left the fingerprint (a baseline's)
        fingerprint = fingerprint.replace(index.identity, index.name, 1)
    store.set_meta("index_fingerprint", fingerprint)
    index.close()
    store.close()


class Writer:
    """Every 2 s while the build runs: deletes a document (one of the first three stored ones,
    1,000 chunks each, then the previous upload, so that the graph keeps most of its points),
    then uploads one and waits for it to be indexed. How long writes take meanwhile."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.deletes: list[float] = []
        self.ready: list[float] = []
        self.uploaded: list[str] = []
        self.deleted: list[str] = []
        self.stop = threading.Event()

    def run(self) -> None:
        with httpx.Client(base_url=self.base, timeout=None) as client:
            stored = [d["id"] for d in client.get("/v1/documents").json()["documents"]][:3]
            while not self.stop.is_set():
                doc_id = stored.pop() if stored else self.uploaded[-1]
                t0 = time.perf_counter()
                client.delete(f"/v1/documents/{doc_id}").raise_for_status()
                self.deletes.append((time.perf_counter() - t0) * 1000)
                self.deleted.append(doc_id)
                n = len(self.uploaded)
                body = f"Upload {n} during the build says the flux is {n * 13} units.".encode()
                t0 = time.perf_counter()
                answer = client.post("/v1/documents", files={"file": (f"up{n}.txt", body)})
                new_id = answer.json()["document"]["id"]
                self.uploaded.append(new_id)
                while client.get(f"/v1/documents/{new_id}").json()["versions"][-1][
                    "status"
                ] not in ("ready", "failed"):
                    time.sleep(0.05)  # polling a benchmark's upload, not synchronising a test
                self.ready.append((time.perf_counter() - t0) * 1000)
                self.stop.wait(2.0)

    def report(self) -> str:
        if not self.deletes:
            return "no write was made during the build"
        return (
            f"{len(self.deletes)} DELETEs during the build: p50 "
            f"{percentile(self.deletes, 0.5):.0f} ms, max {max(self.deletes):.0f} ms; "
            f"{len(self.ready)} uploads ready in p50 {percentile(self.ready, 0.5):.0f} ms, "
            f"max {max(self.ready):.0f} ms"
            if self.ready
            else f"{len(self.deletes)} DELETEs, max {max(self.deletes):.0f} ms; no upload ready"
        )


def healthz_during_build(vectors: F32, queries: F32, args: argparse.Namespace, root: Path) -> None:
    data = root / "data"
    t0 = time.perf_counter()
    serve_data(vectors, data, old_fingerprint=args.server_src is not None)
    print(f"healthz: stored and indexed {len(vectors)} chunks in {time.perf_counter() - t0:.0f} s")
    port = free_port()
    env = {**os.environ, "STREAM_RAG_DATA_DIR": str(data), "STREAM_RAG_ACCESS_LOG": "false"}
    env["STREAM_RAG_HNSW_AUTO_POINTS"] = "0"  # the build measured is the one asked for below
    code = "import sys; from stream_rag.cli import main; sys.exit(main())"
    if args.server_src is not None:  # imports (the build child's too) from that checkout
        env["PYTHONPATH"] = str(args.server_src.resolve())
    server = subprocess.Popen(
        [sys.executable, "-c", code, "serve", "--port", str(port)],
        env=env,
        cwd=args.server_src,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        while True:
            if server.poll() is not None:
                raise SystemExit(f"the server exited with {server.returncode}")
            try:
                if httpx.get(f"{base}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        result: dict[str, object] = {}

        def optimise() -> None:
            result.update(httpx.post(f"{base}/v1/index/optimize", timeout=None).json())

        worker = threading.Thread(target=optimise)
        worker.start()
        writer = Writer(base)
        writes = threading.Thread(target=writer.run)
        writes.start()
        latencies: list[float] = []
        with httpx.Client(base_url=base) as client:
            while worker.is_alive():
                t0 = time.perf_counter()
                client.get("/healthz")
                latencies.append((time.perf_counter() - t0) * 1000)
                time.sleep(0.02)
        worker.join()
        writer.stop.set()
        writes.join()
        print(
            f"healthz during the build of {len(vectors)} points: {len(latencies)} polls, p50 "
            f"{percentile(latencies, 0.5):.1f} ms, p99 {percentile(latencies, 0.99):.1f} ms, max "
            f"{max(latencies):.1f} ms; optimize said {fmt(result)}",
            flush=True,
        )
        print(f"writes: {writer.report()}", flush=True)
        with httpx.Client(base_url=base, timeout=None) as client:
            listed = {d["id"] for d in client.get("/v1/documents").json()["documents"]}
        deleted, kept_uploads = set(writer.deleted), set(writer.uploaded) - set(writer.deleted)
        kept = kept_uploads <= listed and not deleted & listed
        print(f"after the swap: uploads listed and deletes gone: {kept}", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    index = EdgeIndex.open(data / "index" / "edge-384-f16", 384)
    try:
        # In the index too: no point of a deleted document, every uploaded one's.
        docs = {p.doc_id for p in index.points()}
        print(
            f"mixture (server-built): {index.hnsw_segments()} HNSW segments, {index.count()} "
            f"points; deleted documents' points left: {len(deleted & docs)}, uploads kept "
            f"and indexed: {len(kept_uploads & docs)}/{len(kept_uploads)}",
            flush=True,
        )
        measure("mixture", index, queries, args.ef, args.repeat)
    finally:
        index.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"), help="shared data")
    parser.add_argument("--real", type=int, default=VASWANI)
    parser.add_argument("--synthetic", type=int, default=100_000)
    parser.add_argument(
        "--sets",
        nargs="+",
        default=["real", "mixture", "uniform"],
        choices=["real", "mixture", "uniform", "gaussian"],
    )
    parser.add_argument(
        "--ef", type=int, nargs="+", default=sorted({64, 128, DEFAULT_HNSW_EF, 256})
    )
    parser.add_argument("--m", type=int, default=HNSW_M, help="graph links per node")
    parser.add_argument("--ef-construct", type=int, default=HNSW_EF_CONSTRUCT)
    parser.add_argument("--repeat", type=int, default=3, help="passes; figures are medians")
    parser.add_argument(
        "--healthz",
        action="store_true",
        help="build the mixture set's graphs in a running server, polling /healthz",
    )
    parser.add_argument(
        "--server-src", type=Path, help="run the --healthz server from this checkout (baseline)"
    )
    args = parser.parse_args()
    texts, questions = real_texts(args.data, args.real)
    cache = Path(tempfile.gettempdir()) / f"stream_rag_bench_hnsw_real_{len(texts)}.npy"
    t0 = time.perf_counter()
    real = embed(texts, cache)
    queries = embed(questions, cache.with_name(cache.stem + "_queries.npy"))
    print(
        f"{len(texts)} real texts, {len(queries)} queries (embedded or cached in "
        f"{time.perf_counter() - t0:.0f} s); m={args.m} ef_construct={args.ef_construct}, "
        f"{args.repeat} passes",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        n, dim = args.synthetic, real.shape[1]
        if "real" in args.sets:
            recall_run("real", real, queries, args, root)
        if "mixture" in args.sets:
            vectors = mixture(real, n, np.random.default_rng(0))
            if args.healthz:
                healthz_during_build(vectors, queries, args, root)
            else:
                recall_run("mixture", vectors, queries, args, root)
        if "uniform" in args.sets:
            probes = uniform(200, dim, np.random.default_rng(9))
            recall_run("uniform", uniform(n, dim, np.random.default_rng(0)), probes, args, root)
        if "gaussian" in args.sets:
            probes = gaussian(real, 200, np.random.default_rng(9))
            recall_run("gaussian", gaussian(real, n, np.random.default_rng(0)), probes, args, root)


if __name__ == "__main__":
    main()
