"""`/v1/search` over HTTP at ~10k real chunks: hybrid against BM25 alone, at 1 and 8 clients.

    python -m loadtests.bench_search --beir ../shared/data/cranfield --chunk-chars 160

`stream-rag serve` runs as a subprocess on a data directory holding the Cranfield abstracts,
chunked small enough to make ~10k chunks (each embedded by the local MiniLM at ingest).
Queries are the Cranfield questions, numbered so that none is answered from the query
embedding cache (`--cached` asks them unnumbered, twice, to show the cached case; `--plain`
asks them unnumbered, with the server's query cache off: the numbers cost the hybrid
mode's model ~6 word pieces a question, docs/decisions/). Hybrid and
BM25-only (`weights: {"dense": 0, "bm25": 1}`) alternate query by query, so both see the same
machine load; the ratio of their medians is the figure. With `--phases` each mode runs alone
(over halves of the queries, hybrid-bm25 then bm25-hybrid): at 8 clients a BM25 search then
never waits behind a hybrid one's embedding in the server's worker threads.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx

from stream_rag.loadtest.command import cpu_seconds, free_port, server_process
from stream_rag.retrieve.metrics import percentile

_MAIN = "import sys; from stream_rag.cli import main; sys.exit(main())"
BM25_ONLY = {"dense": 0.0, "bm25": 1.0}
MODES = ("hybrid", "bm25")


Timings = dict[str, dict[str, list[float]]]


async def run(
    base: str, queries: list[str], clients: int, modes: tuple[str, ...] = ("hybrid", "bm25")
) -> tuple[dict[str, list[float]], Timings]:
    """Client-side latency by mode, and the server's `timings_ms` by mode and branch; each
    query is asked in each of `modes`, their order alternating query by query."""
    times: dict[str, list[float]] = {"hybrid": [], "bm25": []}
    branches: Timings = {"hybrid": {}, "bm25": {}}
    todo = list(enumerate(queries))

    async def client(http: httpx.AsyncClient) -> None:
        while todo:
            i, query = todo.pop()
            for mode in modes if i % 2 else modes[::-1]:
                body: dict[str, object] = {"query": query, "top_k": 8}
                if mode == "bm25":
                    body["weights"] = BM25_ONLY
                t0 = time.perf_counter()
                response = await http.post("/v1/search", json=body)
                response.raise_for_status()
                times[mode].append((time.perf_counter() - t0) * 1000)
                for branch, ms in response.json()["timings_ms"].items():
                    branches[mode].setdefault(branch, []).append(ms)

    async with httpx.AsyncClient(base_url=base, timeout=60) as http, anyio.create_task_group() as g:
        for _ in range(clients):
            g.start_soon(client, http)
    return times, branches


def gauge(base: str, name: str) -> int:
    """A gauge of the server's /metrics (`name` with its labels as printed), 0 if absent."""
    for line in httpx.get(f"{base}/metrics", timeout=60).text.splitlines():
        if line.startswith(name + " "):
            return int(float(line.split()[1]))
    return 0


def exact_points(base: str) -> int:
    """The server's `stream_rag_index_exact_points` gauge."""
    return gauge(base, "stream_rag_index_exact_points")


def cache_hits(base: str) -> int:
    """Questions the server answered from its query embedding cache since it started."""
    return gauge(base, 'stream_rag_query_embed_cache{result="hit"}')


def wait_for_graphs(base: str, limit_s: float = 900) -> bool:
    """Wait (up to `limit_s`) while the server has a background HNSW build due or running
    (`STREAM_RAG_HNSW_AUTO_POINTS` points or more searched exactly); whether it waited."""
    auto = int(os.environ.get("STREAM_RAG_HNSW_AUTO_POINTS", "10000"))
    deadline = time.perf_counter() + limit_s
    waited = False
    while auto and exact_points(base) >= auto and time.perf_counter() < deadline:
        waited = True
        time.sleep(1)
    return waited


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--beir", type=Path, default=Path("../shared/data/cranfield"))
    parser.add_argument("--chunk-chars", type=int, default=160)
    parser.add_argument("--cached", action="store_true")
    parser.add_argument("--docs", type=int, default=0, help="only the first N documents")
    parser.add_argument(
        "--plain",
        action="store_true",
        help="ask the questions as the data set has them, with the server's query embedding"
        " cache off (STREAM_RAG_QUERY_CACHE_SIZE=0) instead of numbering them: the numbers"
        " add ~6 word pieces to a Cranfield question's 22, which only the hybrid mode's model"
        " pays for",
    )
    parser.add_argument(
        "--phases",
        action="store_true",
        help="each mode alone in its own phases (hybrid, bm25, bm25, hybrid over two halves of"
        " the queries) instead of alternating query by query: at c=8 a BM25 search then never"
        " queues behind a hybrid one",
    )
    parser.add_argument(
        "--data",
        type=Path,
        help="keep the ingested data directory here, and reuse it when it is already there",
    )
    args = parser.parse_args()
    corpus = [json.loads(line) for line in (args.beir / "corpus.jsonl").open(encoding="utf-8")]
    corpus = corpus[: args.docs] if args.docs else corpus
    questions = [
        json.loads(line)["text"] for line in (args.beir / "queries.jsonl").open(encoding="utf-8")
    ]
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        docs = work / "docs"
        docs.mkdir()
        for doc in corpus:
            (docs / f"cranfield-{doc['_id']}.txt").write_text(
                f"{doc['title']}\n\n{doc['text']}", encoding="utf-8"
            )
        data = args.data or work / "data"
        env = {
            "STREAM_RAG_DATA_DIR": str(data),
            "STREAM_RAG_CHUNK_CHARS": str(args.chunk_chars),
            "STREAM_RAG_CHUNK_OVERLAP_CHARS": "0",
            "STREAM_RAG_ACCESS_LOG": "false",
        }
        if args.plain:
            env["STREAM_RAG_QUERY_CACHE_SIZE"] = "0"
        t0 = time.perf_counter()
        if not (data / "stream_rag.sqlite3").exists():
            subprocess.run(
                [sys.executable, "-c", _MAIN, "ingest", str(docs)],
                env={**os.environ, **env},
                check=False,  # a file that fails to ingest (an empty abstract) is left out
                stdout=subprocess.DEVNULL,
            )
        port = free_port()
        pid = stack.enter_context(
            server_process(
                "serve", [_MAIN, "serve", "--port", str(port)], env, port, "/healthz", work
            )
        )
        base = f"http://127.0.0.1:{port}"
        # A data directory indexed by another version of the code is indexed again at start
        # (its fingerprint changed): measuring while that runs would measure the indexer.
        waited = time.perf_counter()
        while httpx.get(f"{base}/readyz", timeout=60).status_code != 200:
            time.sleep(1)
        print(f"ready after {time.perf_counter() - waited:.0f} s of start-up indexing", flush=True)
        waited = time.perf_counter()
        if wait_for_graphs(base):
            print(f"waited {time.perf_counter() - waited:.0f} s for the background HNSW build")
        chunks = sum(
            v["chunk_count"]
            for d in httpx.get(f"{base}/v1/documents", timeout=60).json()["documents"]
            for v in d["versions"][-1:]
        )
        took = time.perf_counter() - t0
        print(f"{len(corpus)} documents, {chunks} chunks, ingested (or reused) in {took:.0f} s")
        for clients in (1, 8):
            if args.cached:
                anyio.run(run, base, questions, clients)  # fills the cache
                asked = questions
            elif args.plain:
                asked = questions
            else:
                asked = [f"{q} (#{clients}-{i})" for i, q in enumerate(questions)]
            hits_before = cache_hits(base)
            times: dict[str, list[float]] = {"hybrid": [], "bm25": []}
            branches: Timings = {"hybrid": {}, "bm25": {}}
            cpu = {"hybrid": 0.0, "bm25": 0.0}  # server CPU seconds by mode (--phases)
            if args.phases:
                half = len(asked) // 2
                for part, order in ((asked[:half], MODES), (asked[half:], MODES[::-1])):
                    for mode in order:
                        before = cpu_seconds(pid) or 0.0
                        found, timings = anyio.run(run, base, part, clients, (mode,))
                        cpu[mode] += (cpu_seconds(pid) or 0.0) - before
                        times[mode] += found[mode]
                        for branch, ms in timings[mode].items():
                            branches[mode].setdefault(branch, []).extend(ms)
            else:
                times, branches = anyio.run(run, base, asked, clients)
            hybrid, bm25 = percentile(times["hybrid"], 0.5), percentile(times["bm25"], 0.5)
            h99, b99 = percentile(times["hybrid"], 0.99), percentile(times["bm25"], 0.99)
            print(
                f"c={clients}: hybrid p50 {hybrid:.1f} ms p99 {h99:.1f}"
                f" | bm25 p50 {bm25:.1f} ms p99 {b99:.1f} | "
                f"hybrid/bm25 p50 {hybrid / bm25:.2f}x ({'cached' if args.cached else 'uncached'}"
                f"{' plain' if args.plain else ''}"
                f" query embeddings, {len(asked)} queries each,"
                f" {cache_hits(base) - hits_before} cache hits"
                f"{', modes in separate phases' if args.phases else ''})",
                flush=True,
            )
            if args.phases:
                per = {mode: cpu[mode] * 1000 / max(len(times[mode]), 1) for mode in MODES}
                print(
                    f"  server CPU per search: hybrid {per['hybrid']:.2f} ms,"
                    f" bm25 {per['bm25']:.2f} ms ({per['hybrid'] / per['bm25']:.2f}x)",
                    flush=True,
                )
            for mode, found in branches.items():
                medians = " ".join(f"{k} {percentile(v, 0.5):.2f}" for k, v in found.items())
                print(f"  server timings_ms p50, {mode}: {medians}", flush=True)


if __name__ == "__main__":
    main()
