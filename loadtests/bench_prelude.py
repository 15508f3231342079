"""CPU per answer of the gated path's own steps, in process, on the bundled sample KB.

    python -m loadtests.bench_prelude --questions 300 [--distinct]

`stream-rag loadtest` says what an answer costs the server in all; this says where the gated
path's share goes, one step at a time and without the noise of a shared machine (CPU time,
not wall time): the question's embedding (as a search does it, in its worker call), retrieval
with the vector known, the pre-generation checks (evidence score and
conflict check), the gate context, and the gate on the fake model's answer (the default
`fake-llm`: three faithful sentences quoted from the blocks), each over a new context (the
service reuses one built for the same blocks, with its verdicts: not measured here). The
ungated baseline runs the embedding and retrieval only.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

from stream_rag.answer.contexts import build_context
from stream_rag.answer.pipeline import Answerer
from stream_rag.answer.prompt import build_messages
from stream_rag.answer.results import Options
from stream_rag.config import Settings
from stream_rag.gate.lexical import DEFAULT_THRESHOLD
from stream_rag.gate.segment import SentenceBuffer
from stream_rag.index.folders import ingest_paths, sample_kb_dir
from stream_rag.loadtest.users import QUESTIONS
from stream_rag.model.fake import FakeConfig, compose
from stream_rag.services import Services, open_services, open_store

STEPS = ("embed", "retrieve", "precheck", "context", "gate")


def open_sample(data_dir: Path) -> Services:
    """Services over the sample knowledge base, every version indexed."""
    settings = Settings(data_dir=data_dir)
    store = open_store(settings, processes=False)
    try:
        ingest_paths(store, [sample_kb_dir()], settings, quiet=True)
    finally:
        store.close()
    services = open_services(settings)
    for doc_id, version in services.indexer.reconcile():
        services.indexer.index_version(doc_id, version)
    return services


def cpu_ms(since: float) -> float:
    return (time.process_time() - since) * 1000


async def answer_once(answerer: Answerer, question: str, spent: dict[str, list[float]]) -> int:
    """One gated answer's steps after the embedding; returns the sentences judged."""
    options = Options()
    t0 = time.process_time()
    result = await answerer.retrieve(question, options)
    spent["retrieve"].append(cpu_ms(t0))
    blocks = result.blocks
    t0 = time.process_time()
    refusal = answerer.precheck(question, blocks, options)
    spent["precheck"].append(cpu_ms(t0))
    t0 = time.process_time()
    # A new context every time: what an answer over blocks not seen recently costs (the
    # service keeps contexts by their blocks, see answer/contexts.py).
    context = build_context(blocks, answerer.settings.gate_threshold or DEFAULT_THRESHOLD)
    spent["context"].append(cpu_ms(t0))
    if refusal is not None:
        spent["gate"].append(0.0)
        return 0
    messages = [m.to_json() for m in build_messages(question, blocks)]
    pieces, _ = compose(FakeConfig(), messages)
    t0 = time.process_time()
    judge = answerer.stages.judge(context, [b.chunk_id for b in blocks])
    buffer = SentenceBuffer()
    judged = 0
    for piece in pieces:
        for segment in buffer.feed(piece):
            await judge(segment.text)
            judged += 1
    for segment in buffer.close():
        await judge(segment.text)
        judged += 1
    spent["gate"].append(cpu_ms(t0))
    return judged


async def run(services: Services, questions: list[str]) -> dict[str, list[float]]:
    spent: dict[str, list[float]] = {step: [] for step in STEPS}
    queries = services.retriever.queries
    assert queries is not None, "the sample KB runs with the MiniLM embedder"
    sentences = 0
    for question in questions:
        t0 = time.process_time()
        queries.embed_here(question)
        spent["embed"].append(cpu_ms(t0))
        sentences += await answer_once(services.answerer, question, spent)
    print(f"{len(questions)} answers, {sentences / len(questions):.2f} sentences judged each")
    return spent


def show(name: str, values: list[float]) -> None:
    print(
        f"{name:<10} mean {statistics.fmean(values):6.2f} ms   "
        f"p50 {statistics.median(values):6.2f}   max {max(values):6.2f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--distinct", action="store_true", help="number every question")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-prelude-") as tmp:
        services = open_sample(Path(tmp))
        try:
            warm = list(QUESTIONS)
            anyio.run(run, services, warm)  # loads, caches, first calls
            questions = [
                f"{QUESTIONS[i % len(QUESTIONS)]}" + (f" (#{i})" if args.distinct else "")
                for i in range(args.questions)
            ]
            spent = anyio.run(run, services, questions)
        finally:
            services.close()
    for step in STEPS:
        show(step, spent[step])
    gated_only = [sum(spent[s][i] for s in STEPS[2:]) for i in range(len(questions))]
    show("gated-only", gated_only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
