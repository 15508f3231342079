"""Benchmark the gate's semantic stage: cost per grey-zone sentence, and what storing
sentence vectors at ingest costs.

    python -m loadtests.bench_semantic --data begin.jsonl [--corpus corpus.jsonl]

`--data`: gate-eval JSONL (`stream-rag eval gate` format). Every sentence the lexical stage
leaves in the grey zone is judged by `SemanticStage.judge` with its blocks' vectors and
features already stored (as after ingest, by another model instance; the process's word caches
emptied after that), three times: the first run (it also pays for the request's own
block-side work: a fresh context per sentence) in wall and thread CPU time, best of the three,
and the thread's CPU time over all runs; the embedding of the sentence is included. Each data
set gets a stage on a freshly loaded model, as in a new server process, warmed up as the
server's start-up does (its cost printed; `--no-warm-up`: judged stone cold).
`--no-stored-features`: the blocks' features computed on first use instead (chunks indexed
before they were stored). `--save FILE`: the per-sentence samples as JSON (to compare runs).
`--corpus` (BEIR corpus.jsonl): index the first `--docs` documents into throwaway stores,
without and with sentence vectors (at each `--precision`, default int8), alternating, and
print chunks/s and CPU per chunk of each (same run, same load) and the bytes stored per
chunk (sentence vectors, word-piece states).
"""

from __future__ import annotations

import argparse
import gc
import json
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.embed.sentences import SentenceVectors, embed_sentences, warm_up
from stream_rag.gate.citations import Citation
from stream_rag.gate.evaluate import load
from stream_rag.gate.lexical import GateContext
from stream_rag.gate.semantic import SENTENCE_PRECISION, SemanticStage
from stream_rag.gate.signals import content_keys
from stream_rag.index.features import compute
from stream_rag.index.folders import ingest_paths
from stream_rag.language.terms import lemma_keys, stem, term_of
from stream_rag.services import open_services


def percentile(samples: list[float], q: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1]


def bench_stage(
    path: Path, embedder: MiniLMEmbedder, stored_features: bool = True, warm: bool = True
) -> dict[str, list[float]]:
    """Print the stage's cost per grey-zone sentence; return the samples (ms, per sentence in
    order; "cpu": three runs each)."""
    examples = load(path)
    # As ingest stores them, on another instance of the model: the stage's own model starts
    # as cold as in a server process that did not ingest them.
    blocks = embedder.with_precision(SENTENCE_PRECISION)
    cases = []
    for ex in examples:
        features = [compute(b, semantic=True) for b in ex.blocks] if stored_features else None
        ctx = GateContext(ex.blocks, features=features)
        verdict = ctx.check(ex.sentence, [Citation(n) for n in ex.cited])
        if verdict.grey:
            stored: dict[int, SentenceVectors] = {
                n: embed_sentences([ex.blocks[n - 1]], blocks)[0] for n in set(ex.cited)
            }
            cases.append((ex.sentence, verdict, ctx, stored))
    print(f"{path.name}: {len(cases)} of {len(examples)} sentences reach the semantic stage")
    # A server's process-wide word caches start empty (ingest may have run elsewhere or
    # before a restart): the first sentences pay for their words' lemmas and vectors.
    for cache in (lemma_keys, term_of, stem):
        cache.cache_clear()
    # Start-up as the server's (services.build_stages): a fresh model (its int8 session made
    # by the stage), the lemma tables, then the warm-up, timed on its own.
    stage = SemanticStage(MiniLMEmbedder())
    start, cpu = time.perf_counter(), time.process_time()
    if warm:
        warm_up(stage.sentence_encoder)
        print(
            f"  start-up warm-up: {(time.perf_counter() - start) * 1000:.0f} ms wall, "
            f"{(time.process_time() - cpu) * 1000:.0f} ms CPU"
        )
    # As the server does once started (STREAM_RAG_GC_FREEZE): what exists now is out of the
    # cyclic GC, whose full collections over this process's cases (100-280 ms each) would
    # otherwise land on whichever sentence is being timed.
    gc.collect()
    gc.freeze()
    times_ms: list[float] = []
    best_ms: list[float] = []  # best of 3: the cost without scheduler noise on a shared CPU
    # CPU time of this thread (the stage runs on one thread, BLAS held at one): what it costs
    # with a core to itself, whatever else the machine is doing.
    cpu_ms: list[float] = []
    first_cpu_ms: list[float] = []
    lexical_ms: list[float] = []  # the lexical check of the same sentence, for scale
    embedded = 0
    for sentence, verdict, ctx, stored in cases:
        runs = []
        judged = verdict
        for _ in range(3):
            content_keys.cache_clear()  # the sentence's own terms: a server sees it once
            start, cpu = time.perf_counter(), time.thread_time()
            judged = stage.judge(sentence, verdict, ctx, stored.__getitem__)
            runs.append((time.perf_counter() - start) * 1000)
            cpu_ms.append((time.thread_time() - cpu) * 1000)
        embedded += "cosine" in judged.scores  # decided without the embedding otherwise
        times_ms.append(runs[0])  # the first run pays for the request's block-side work
        first_cpu_ms.append(cpu_ms[-3])
        best_ms.append(min(runs))
        start = time.perf_counter()
        ctx.check(sentence, [Citation(n) for n in verdict.cited])
        lexical_ms.append((time.perf_counter() - start) * 1000)
    print(f"  {embedded} of {len(cases)} needed the sentence's embedding")
    for label, samples in (
        ("semantic, first run", times_ms),
        ("semantic, first run CPU", first_cpu_ms),
        ("semantic, best of 3", best_ms),
        ("semantic, CPU, all runs", cpu_ms),
        ("lexical (same sentences)", lexical_ms),
    ):
        print(
            f"{label:<26} p50 {percentile(samples, 50):8.3f} ms   "
            f"p99 {percentile(samples, 99):8.3f} ms   max {max(samples):8.3f} ms"
        )
    gc.unfreeze()
    return {"first": times_ms, "first_cpu": first_cpu_ms, "cpu": cpu_ms}


def corpus_texts(corpus: Path) -> Iterator[str]:
    """Documents of a BEIR corpus.jsonl (title and text), or the distinct blocks of a
    gate-eval JSONL (WiCE's are web articles: prose of many sentences a chunk, where
    Cranfield's lower-case abstracts read as one sentence a chunk to the splitter)."""
    seen: set[str] = set()
    with corpus.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if "blocks" not in record:
                yield f"{record.get('title', '')}\n\n{record['text']}"
                continue
            for block in record["blocks"]:
                if block not in seen:
                    seen.add(block)
                    yield block


def bench_ingest(
    corpus: Path,
    docs: int,
    rounds: int,
    embedder: MiniLMEmbedder,
    llm: bool = False,
    precisions: Sequence[str] = ("int8",),
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        for i, text in zip(range(docs), corpus_texts(corpus), strict=False):
            (folder / f"doc{i:05d}.txt").write_text(text, encoding="utf-8")
        # "without": no semantic stage; "with fp32" / "with int8": its block side stored at
        # that precision (STREAM_RAG_EMBED_GATE_PRECISION).
        labels = ["without", *(f"with {p}" for p in precisions)]
        rates: dict[str, list[float]] = {label: [] for label in labels}
        # Process CPU time per chunk: the cost itself, steadier than wall time when other
        # processes share the cores.
        cpu_ms: dict[str, list[float]] = {label: [] for label in labels}
        stored: dict[str, tuple[float, float, int]] = {}
        for r in range(rounds):
            for label in labels if r % 2 == 0 else labels[::-1]:
                settings = Settings(
                    data_dir=Path(tmp) / f"{label.replace(' ', '_')}{r}",
                    gate_semantic=label != "without",
                    embed_gate_precision=label.removeprefix("with ")
                    if label != "without"
                    else "int8",
                    # Never called while indexing: it only turns the extractive model's
                    # sentence warm-up off, as in a deployment with a chat model.
                    llm_base_url="http://127.0.0.1:9/v1" if llm else None,
                )
                services = open_services(settings, embedder=embedder)
                try:
                    ingest_paths(services.store, [folder], settings, quiet=True)
                    work = services.store.pending()
                    chunks = sum(len(services.store.chunks(d, v)) for d, v in work)
                    start, cpu = time.perf_counter(), time.process_time()
                    for doc_id, version in work:
                        services.indexer.index_version(doc_id, version)
                    rates[label].append(chunks / (time.perf_counter() - start))
                    cpu_ms[label].append((time.process_time() - cpu) * 1000 / chunks)
                    if label != "without":
                        stored[label] = stored_bytes(settings.data_dir / "stream_rag.sqlite3")
                finally:
                    services.close()
        best = {k: max(v) for k, v in rates.items()}
        least = {k: min(v) for k, v in cpu_ms.items()}
        model = "a chat model configured (no extractive warm-up)" if llm else "extractive model"
        print(f"ingest (indexing) of {docs} documents, {rounds} rounds alternating, {model}:")
        for label, values in rates.items():
            shown = ", ".join(f"{v:.1f}" for v in values)
            print(f"  {label:<9} {shown} chunks/s (best {best[label]:.1f})")
        for label, values in cpu_ms.items():
            shown = ", ".join(f"{v:.1f}" for v in values)
            print(f"  {label:<9} {shown} ms CPU per chunk")
        for label in labels[1:]:
            print(
                f"  {label}: slowdown (best / best) {best['without'] / best[label]:.2f}x, "
                f"CPU cost ratio (least / least) {least[label] / least['without']:.2f}x"
            )
            size = stored[label]
            print(
                f"    stored per chunk: {size[0]:.0f} B sentence vectors (float16), "
                f"{size[1]:.0f} B word-piece states (int8) over {size[2]} chunks"
            )


def stored_bytes(database: Path) -> tuple[float, float, int]:
    """Mean bytes per chunk of the gate's sentence vectors and word-piece states."""
    db = sqlite3.connect(database)
    try:
        row = db.execute(
            "SELECT avg(length(vectors)), avg(length(tokens)), count(*) FROM chunk_sentence_vectors"
        ).fetchone()
    finally:
        db.close()
    return float(row[0] or 0), float(row[1] or 0), int(row[2])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, action="append", default=[])
    parser.add_argument(
        "--corpus", type=Path, help="BEIR corpus.jsonl (or gate-eval JSONL) for the ingest figure"
    )
    parser.add_argument(
        "--no-stored-features",
        action="store_true",
        help="the blocks' features computed per request (chunks stored before they were)",
    )
    parser.add_argument(
        "--no-warm-up",
        action="store_true",
        help="judge without the start-up warm-up (the stage's model stone cold)",
    )
    parser.add_argument(
        "--save", type=Path, help="write each data set's per-sentence samples here (JSON)"
    )
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--precision",
        action="append",
        choices=("fp32", "int8"),
        help="the block side's precision(s) to index with, side by side (default int8)",
    )
    parser.add_argument(
        "--llm-configured",
        action="store_true",
        help="ingest as with STREAM_RAG_LLM_BASE_URL set (the extractive warm-up off)",
    )
    args = parser.parse_args(argv)
    embedder = MiniLMEmbedder()
    samples = {
        path.name: bench_stage(path, embedder, not args.no_stored_features, not args.no_warm_up)
        for path in args.data
    }
    if args.save:
        args.save.write_text(json.dumps(samples), encoding="utf-8")
    if args.corpus:
        bench_ingest(
            args.corpus,
            args.docs,
            args.rounds,
            embedder,
            args.llm_configured,
            args.precision or ("int8",),
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
