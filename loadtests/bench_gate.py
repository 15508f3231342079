"""Benchmark the citation gate: cost per sentence with 8 issued blocks of about 300 words.

Blocks come from a BEIR-style corpus (`--corpus ../shared/data/cranfield/corpus.jsonl`,
consecutive abstracts joined to ~300 words), from a knowledge base's documents (`--kb
loadtests/answers/railway_faq`, its lines joined to ~300-word blocks) or, without either, from
seeded synthetic text. Sentences are spans of the blocks, half of them with words swapped for
unseen ones, and some with numbers, cited to one or two blocks; with `--kb`, each is instead
one of a block's statements, as written or reworded by the fake model's `paraphrase` (which
the claim checks read clause by clause). Prints p50/p99 of `check` (each sentence timed once,
as in production), of `check_sentence` (with marker parsing) in wall-clock time and in the
thread's CPU time (what the sentence costs the event loop, without the time the machine's
other work took the CPU from it), and of the best of 5 runs; the context's kept verdicts are
bypassed, so every figure is a sentence's real check.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path

from stream_rag.gate.citations import Citation
from stream_rag.gate.lexical import GateContext, check_sentence
from stream_rag.language.statements import statement_spans
from stream_rag.model.paraphrase import paraphrase

WORDS_PER_BLOCK = 300


def corpus_blocks(path: Path, count: int) -> list[str]:
    blocks: list[str] = []
    words: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            words += json.loads(line)["text"].split()
            if len(words) >= WORDS_PER_BLOCK:
                blocks.append(" ".join(words[:WORDS_PER_BLOCK]))
                words = []
                if len(blocks) == count:
                    break
    return blocks


def kb_blocks(folder: Path, count: int) -> list[str]:
    """A knowledge base's documents, line by line, joined into blocks of ~300 words."""
    blocks: list[str] = []
    lines: list[str] = []
    words = 0
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        for line in path.read_text(encoding="utf-8").splitlines():
            lines.append(line)
            words += len(line.split())
            if words >= WORDS_PER_BLOCK:
                blocks.append("\n".join(lines))
                lines, words = [], 0
    if lines:
        blocks.append("\n".join(lines))
    return blocks[:count]


def kb_sentences(rng: random.Random, blocks: list[str], count: int) -> list[tuple[str, list[int]]]:
    """Statements of the blocks, half as written, half reworded by the fake's `paraphrase`."""
    statements = [
        (blocks[n][s:e].strip().rstrip("."), n + 1)
        for n in range(len(blocks))
        for s, e in statement_spans(blocks[n])
        if len(blocks[n][s:e].split()) >= 4
    ]
    out = []
    for i in range(count):
        text, n = rng.choice(statements)
        out.append((paraphrase(text, rng).rstrip(".") if i % 2 else text, [n]))
    return out


def synthetic_blocks(rng: random.Random, count: int) -> list[str]:
    vocabulary = [
        "".join(rng.choice("abcdefghijklmnoprstuvwy") for _ in range(rng.randint(3, 10)))
        for _ in range(3000)
    ]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]  # Zipf-like
    blocks = []
    for _ in range(count):
        words = rng.choices(vocabulary, weights, k=WORDS_PER_BLOCK)
        for i in range(0, len(words), 15):
            words[i] += "."
        for i in range(7, len(words), 40):
            words[i] = f"{rng.randint(2, 500)} {words[i]}"
        blocks.append(" ".join(words))
    return blocks


def sentences(rng: random.Random, blocks: list[str], count: int) -> list[tuple[str, list[int]]]:
    out = []
    for i in range(count):
        n = rng.randrange(len(blocks))
        words = blocks[n].split()
        start = rng.randrange(len(words) - 30)
        span = words[start : start + rng.randint(12, 30)]
        if i % 2:  # a fabricated claim: a few words no block has
            for _ in range(rng.randint(1, 4)):
                span[rng.randrange(len(span))] = "".join(rng.choices("qxzjkv", k=8))
        if i % 5 == 0:
            span.append(f"{rng.randint(1, 99)} days")
        cited = [n + 1] if i % 3 else [n + 1, (n + 1) % len(blocks) + 1]
        out.append((" ".join(span), cited))
    return out


def percentiles(samples_ns: list[int]) -> tuple[float, float]:
    cuts = statistics.quantiles(samples_ns, n=100, method="inclusive")
    return cuts[49] / 1000, cuts[98] / 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="BEIR corpus.jsonl (default: synthetic)")
    parser.add_argument("--kb", type=Path, help="a folder of documents (default: synthetic)")
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--sentences", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    if args.corpus:
        blocks = corpus_blocks(args.corpus, args.blocks)
    elif args.kb:
        blocks = kb_blocks(args.kb, args.blocks)
    else:
        blocks = synthetic_blocks(rng, args.blocks)
    make = kb_sentences if args.kb else sentences
    start = time.perf_counter_ns()
    ctx = GateContext(blocks, [f"doc-{i}" for i in range(len(blocks))])
    build_us = (time.perf_counter_ns() - start) / 1000
    warmup = make(rng, blocks, 500)
    for text, cited in warmup:
        ctx.check(text, [Citation(n) for n in cited])
    check_ns: list[int] = []
    full_ns: list[int] = []
    cpu_ns: list[int] = []
    best_ns: list[int] = []  # best of 5: the cost without scheduler and GC noise
    passed = 0
    # A context remembers its verdicts (it may serve several requests over the same blocks),
    # so only a sentence's first check does the work: each sentence is checked first through
    # `check_sentence` (marker parsing included), then the uncached check is timed directly.
    for text, cited in make(rng, blocks, args.sentences):
        citations = [Citation(n) for n in cited]
        raw = text + "".join(f"[{n}]" for n in cited) + "."
        cpu = time.thread_time_ns()
        start = time.perf_counter_ns()
        check_sentence(raw, ctx)
        full_ns.append(time.perf_counter_ns() - start)
        cpu_ns.append(time.thread_time_ns() - cpu)
        runs = []
        for _ in range(6):
            start = time.perf_counter_ns()
            verdict = ctx._check(text, citations, None)
            runs.append(time.perf_counter_ns() - start)
        check_ns.append(runs[0])
        best_ns.append(min(runs[1:]))
        passed += verdict.ok
    words = sum(len(b.split()) for b in blocks)
    kind = "corpus" if args.corpus else f"kb {args.kb}" if args.kb else "synthetic"
    print(f"{len(blocks)} blocks, {words} words ({kind})")
    print(f"GateContext build: {build_us / 1000:.2f} ms (once per request)")
    print(f"{len(check_ns)} sentences, {passed} passed")
    p50, p99 = percentiles(check_ns)
    print(f"check          p50 {p50:7.1f} us   p99 {p99:7.1f} us")
    p50, p99 = percentiles(full_ns)
    print(f"check_sentence p50 {p50:7.1f} us   p99 {p99:7.1f} us   (with marker parsing)")
    p50, p99 = percentiles(cpu_ns)
    print(f"  its CPU time p50 {p50:7.1f} us   p99 {p99:7.1f} us   (the thread's own)")
    p50, p99 = percentiles(best_ns)
    print(f"check, best/5  p50 {p50:7.1f} us   p99 {p99:7.1f} us   (same sentence, 5 runs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
