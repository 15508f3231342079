"""Single-text MiniLM cost: the numpy and onnxruntime forward passes side by side.

    python -m loadtests.bench_minilm --data /tmp/begin.jsonl [--data wice_dev.jsonl] [--repeat 3]

Texts: the sentences of the gate-eval JSONL files (`stream-rag eval gate` format), each
embedded alone, as the semantic stage and a query do. Per text and runtime (alternating, so
both see the same load): thread CPU time and wall time, best of `--repeat`; the figures are
percentiles over texts. The embedder holds BLAS and onnxruntime at one thread, so thread CPU
time is the whole cost.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.gate.evaluate import load

RUNTIMES = ("numpy", "onnxruntime")


def percentile(samples: Sequence[float], q: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, action="append", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=int, default=400, help="texts per file at most")
    args = parser.parse_args(argv)
    embedders = {name: MiniLMEmbedder(runtime=name) for name in RUNTIMES}
    for path in args.data:
        texts = list(dict.fromkeys(ex.sentence for ex in load(path)))[: args.limit]
        tokens = sorted(len(ids) for ids in embedders["numpy"].tokenize(texts))
        print(
            f"{path.name}: {len(texts)} texts, tokens p50 {percentile(tokens, 50):.0f} "
            f"p99 {percentile(tokens, 99):.0f} max {tokens[-1]}"
        )
        cpu: dict[str, list[float]] = {name: [] for name in RUNTIMES}
        wall: dict[str, list[float]] = {name: [] for name in RUNTIMES}
        for embedder in embedders.values():
            embedder.embed(texts[:2])  # warm up
        for i, text in enumerate(texts):
            order = RUNTIMES if i % 2 == 0 else RUNTIMES[::-1]
            for name in order:
                runs: list[tuple[float, float]] = []
                for _ in range(args.repeat):
                    start, start_cpu = time.perf_counter(), time.thread_time()
                    embedders[name].embed([text])
                    runs.append((time.thread_time() - start_cpu, time.perf_counter() - start))
                cpu[name].append(min(r[0] for r in runs) * 1000)
                wall[name].append(min(r[1] for r in runs) * 1000)
        for name in RUNTIMES:
            for label, samples in (("thread CPU", cpu[name]), ("wall", wall[name])):
                print(
                    f"  {name:<11} {label:<10} best of {args.repeat}: "
                    f"p50 {percentile(samples, 50):7.2f} ms  p99 {percentile(samples, 99):7.2f} ms"
                    f"  mean {statistics.fmean(samples):7.2f} ms"
                )
        ratio = statistics.fmean(cpu["onnxruntime"]) / statistics.fmean(cpu["numpy"])
        print(f"  onnxruntime / numpy, mean thread CPU: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
