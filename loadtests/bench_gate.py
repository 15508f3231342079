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

`--against DIR --rounds N` measures this tree's gate and the one in DIR (a checkout of the
baseline) side by side: N rounds, each running both in child processes in alternating order,
then every figure's median over the rounds and the median ratio (this tree / DIR).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
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


FIGURES = {
    "check_p50": "check p50",
    "check_p99": "check p99",
    "sentence_p50": "check_sentence p50",
    "sentence_p99": "check_sentence p99",
    "cpu_p50": "check_sentence CPU p50",
    "cpu_p99": "check_sentence CPU p99",
    "best_p50": "check best/5 p50",
    "best_p99": "check best/5 p99",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="BEIR corpus.jsonl (default: synthetic)")
    parser.add_argument("--kb", type=Path, help="a folder of documents (default: synthetic)")
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--sentences", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--against", type=Path, help="a baseline checkout, measured side by side")
    parser.add_argument("--rounds", type=int, default=3, help="side-by-side rounds (--against)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON only")
    args = parser.parse_args(argv)
    if args.against is not None:
        if not (args.against / "stream_rag" / "gate" / "lexical.py").is_file():
            parser.error(f"--against {args.against}: no stream_rag checkout there")
        return side_by_side(args, argv if argv is not None else sys.argv[1:])
    figures = measure(args)
    if args.json:
        print(json.dumps(figures))
    return 0


def measure(args: argparse.Namespace) -> dict[str, float]:
    """One measurement in this process (printed unless `--json`); its figures in us."""
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
    figures: dict[str, float] = {}
    for name, samples in (("check", check_ns), ("sentence", full_ns), ("cpu", cpu_ns)):
        figures[f"{name}_p50"], figures[f"{name}_p99"] = percentiles(samples)
    figures["best_p50"], figures["best_p99"] = percentiles(best_ns)
    if args.json:
        return figures
    words = sum(len(b.split()) for b in blocks)
    kind = "corpus" if args.corpus else f"kb {args.kb}" if args.kb else "synthetic"
    print(f"{len(blocks)} blocks, {words} words ({kind})")
    print(f"GateContext build: {build_us / 1000:.2f} ms (once per request)")
    print(f"{len(check_ns)} sentences, {passed} passed")
    print(f"check          p50 {figures['check_p50']:7.1f} us   p99 {figures['check_p99']:7.1f} us")
    print(
        f"check_sentence p50 {figures['sentence_p50']:7.1f} us   "
        f"p99 {figures['sentence_p99']:7.1f} us   (with marker parsing)"
    )
    print(
        f"  its CPU time p50 {figures['cpu_p50']:7.1f} us   "
        f"p99 {figures['cpu_p99']:7.1f} us   (the thread's own)"
    )
    print(
        f"check, best/5  p50 {figures['best_p50']:7.1f} us   "
        f"p99 {figures['best_p99']:7.1f} us   (same sentence, 5 runs)"
    )
    return figures


def side_by_side(args: argparse.Namespace, argv: list[str]) -> int:
    """Both trees' figures over `--rounds` rounds (children in alternating order), then each
    figure's median and the median of the rounds' ratios (this tree / the baseline)."""
    own: list[str] = []
    skip = False
    for item in argv:  # the same measurement, without the side-by-side options
        if skip:
            skip = False
            continue
        if item in ("--against", "--rounds"):
            skip = True
            continue
        if not item.startswith(("--against=", "--rounds=")):
            own.append(item)
    trees = {"baseline": args.against.resolve(), "this tree": Path(__file__).resolve().parents[1]}
    found: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for round_ in range(args.rounds):
        order = list(trees) if round_ % 2 == 0 else list(trees)[::-1]
        for name in order:
            # The script by path, its imports from the tree named first on the path.
            env = {**os.environ, "PYTHONPATH": str(trees[name])}
            out = subprocess.run(
                [sys.executable, __file__, *own, "--json"],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            found[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"round {round_ + 1} of {args.rounds} done; load average {load}", flush=True)
    print(f"{'figure (us)':26} {'baseline':>10} {'this tree':>10} {'ratio':>7}")
    for key, label in FIGURES.items():
        before = [f[key] for f in found["baseline"]]
        after = [f[key] for f in found["this tree"]]
        ratio = statistics.median(a / b for a, b in zip(after, before, strict=True))
        print(
            f"{label:26} {statistics.median(before):10.1f} {statistics.median(after):10.1f} "
            f"{ratio:6.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
