"""Server memory with a loaded index.

    python -m loadtests.bench_server_rss --chunks 10000

Writes synthetic documents (about four 1,000-character chunks each), ingests them with
`stream-rag ingest` (local embedder, embedded index), starts `stream-rag serve` on that data
directory, runs searches, and prints the server's resident memory (VmRSS, and VmHWM, its
peak) next to an empty server's as the baseline.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

WORDS = (
    "refund plan annual monthly billing invoice sync device offline note notebook export "
    "import markdown security password key account team seat admin storage limit upload "
    "attachment support email chat response time region data centre backup restore trash "
    "version history share link permission folder tag search filter calendar reminder"
).split()


def write_corpus(root: Path, chunks: int, seed: int = 1) -> int:
    rng = random.Random(seed)
    documents = max(1, chunks // 4)
    for d in range(documents):
        paragraphs = []
        for _ in range(4):
            sentences = [
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 18))).capitalize()
                + f" {rng.randint(1, 90)} days."
                for _ in range(9)
            ]
            paragraphs.append(" ".join(sentences))
        (root / f"doc{d:05d}.txt").write_text("\n\n".join(paragraphs))
    return documents


def rss(pid: int) -> tuple[float, float]:
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(value.split()[0]) / 1024
    return values["VmRSS"], values["VmHWM"]


def measure(data_dir: Path, port: int, queries: int) -> tuple[float, float, int]:
    env = {**os.environ, "STREAM_RAG_DATA_DIR": str(data_dir), "STREAM_RAG_LOG_LEVEL": "warning"}
    server = subprocess.Popen(
        [sys.executable, "-m", "stream_rag.cli", "serve", "--port", str(port)], env=env
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                documents = httpx.get(f"{base}/readyz").json()["checks"]["store"]["value"]
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        for i in range(queries):
            httpx.post(f"{base}/v1/search", json={"query": f"{WORDS[i % 40]} refund"}, timeout=60)
        now, peak = rss(server.pid)
        return now, peak, documents
    finally:
        server.terminate()
        server.wait(timeout=120)


def main() -> None:
    parser = argparse.ArgumentParser(description="Server RSS with a loaded index")
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty"
        now, peak, _ = measure(empty, args.port, args.queries)
        print(f"empty server:        RSS {now:7.1f} MB  peak {peak:7.1f} MB")
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        documents = write_corpus(corpus, args.chunks)
        data = Path(tmp) / "data"
        start = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "stream_rag.cli",
                "--data-dir",
                str(data),
                "ingest",
                str(corpus),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        elapsed = time.perf_counter() - start
        chunk_count = _chunks(data)
        print(
            f"ingested {documents} documents, {chunk_count} chunks in {elapsed:.0f} s "
            f"({chunk_count / elapsed:.0f} chunks/s, local embedder)"
        )
        now, peak, _ = measure(data, args.port, args.queries)
        print(f"with {chunk_count} chunks: RSS {now:7.1f} MB  peak {peak:7.1f} MB")


def _chunks(data_dir: Path) -> int:
    import sqlite3

    with sqlite3.connect(data_dir / "stream_rag.sqlite3") as db:
        return int(db.execute("SELECT count(*) FROM chunks").fetchone()[0])


if __name__ == "__main__":
    main()
