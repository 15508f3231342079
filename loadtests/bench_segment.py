"""Segmentation speed: split_segments, streaming feed() in 3-character tokens, blingfire alone,
and pySBD (run by another interpreter, since it is not a dependency) on the same text.

    python bench_segment.py ../shared/data/segmentation/golden_rules.jsonl \
        --repeat 20 --pysbd-python /work/venvs/sbd/bin/python

The text is the 48 English golden-rules texts, each a paragraph, joined by blank lines and
repeated; pySBD also gets each text as its own document, the way it is fastest.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import blingfire

from stream_rag.gate.segment import SentenceBuffer, split_segments  # stream_rag.segment in the repo

_PYSBD = """
import json, sys, time
import pysbd
texts, rounds = json.load(sys.stdin), int(sys.argv[1])
segmenter = pysbd.Segmenter(language="en", clean=False)
segmenter.segment(texts[0])  # warm up
result = {}
for mode, docs in (("joined", ["\\n\\n".join(texts)]), ("documents", texts)):
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        count = sum(len(segmenter.segment(doc)) for doc in docs)
        best = min(best, time.perf_counter() - started)
    result[mode] = [count, best]
print(json.dumps(result))
"""


def best_rate(run: Callable[[], int], rounds: int) -> tuple[int, float]:
    """Units per second over the best of `rounds` runs, and the unit count."""
    best, count = float("inf"), 0
    for _ in range(rounds):
        started = time.perf_counter()
        count = run()
        best = min(best, time.perf_counter() - started)
    return count, count / best


def streamed(text: str, size: int) -> int:
    tokens = [text[i : i + size] for i in range(0, len(text), size)]
    buffer = SentenceBuffer()
    count = 0
    for token in tokens:
        count += len(buffer.feed(token))
    return count + len(buffer.close())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("golden", type=Path, help="golden_rules.jsonl")
    parser.add_argument("--repeat", type=int, default=20, help="copies of the texts")
    parser.add_argument("--rounds", type=int, default=9, help="timed runs; the best counts")
    parser.add_argument("--pysbd-python", help="an interpreter that can import pysbd")
    parser.add_argument("--pysbd-rounds", type=int, default=2, help="timed pySBD runs")
    args = parser.parse_args()

    cases = [json.loads(line) for line in args.golden.read_text(encoding="utf-8").splitlines()]
    texts = [case["text"] for case in cases if case["lang"] == "en"] * args.repeat
    joined = "\n\n".join(texts)
    print(f"text: {len(texts)} paragraphs, {len(joined):,} characters")

    rates: dict[str, float] = {}
    runs: dict[str, Callable[[], int]] = {
        "split_segments": lambda: len(split_segments(joined)),
        "split_segments per document": lambda: sum(len(split_segments(t)) for t in texts),
        "feed(), 3-character tokens": lambda: streamed(joined, 3),
        "blingfire.text_to_sentences": lambda: len(blingfire.text_to_sentences(joined).split("\n")),
    }
    for name, run in runs.items():
        count, rates[name] = best_rate(run, args.rounds)
        print(f"{name:32} {count:6} units {rates[name]:12,.0f} /s")

    # A long unit fed in 3-character tokens: a buffer copied or re-scanned per token would make
    # 4x the text cost about 16x the time (this was a unit test; timing belongs here).
    def long_unit(size: int) -> int:
        text = "word (x) " * (size // 9) + "\n```\n" + "code line\n" * (size // 10) + "```\n"
        return streamed(text, 3)

    seconds = {}
    for size in (100_000, 400_000):
        count, rate = best_rate(partial(long_unit, size), 3)
        seconds[size] = count / rate
    ratio = seconds[400_000] / seconds[100_000]
    print(f"long unit, 4x the text: {ratio:.1f}x the time (linear ~4x, quadratic ~16x)")

    if not args.pysbd_python:
        print("pySBD: skipped (give --pysbd-python)")
        return
    done = subprocess.run(
        [args.pysbd_python, "-c", _PYSBD, str(args.pysbd_rounds)],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        check=True,
    )
    for mode, (count, seconds) in json.loads(done.stdout).items():
        rate = count / seconds
        print(f"{'pySBD ' + mode:32} {count:6} units {rate:12,.0f} /s")
        ours = "split_segments" if mode == "joined" else "split_segments per document"
        print(f"  ratio {ours}: {rates[ours] / rate:,.0f}x", end="")
        print(f"; feed(): {rates['feed(), 3-character tokens'] / rate:,.0f}x")


if __name__ == "__main__":
    main()
