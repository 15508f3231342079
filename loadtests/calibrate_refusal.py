"""Calibrate the `low_evidence` threshold and time the pre-generation checks.

    python -m loadtests.calibrate_refusal --beir ../shared/data/cranfield

Answerable questions: the bundled sample knowledge base's (below) and, with `--beir`, a BEIR
set's judged queries against its own corpus. Unanswerable: `loadtests/offtopic_questions.txt`
(asked of both knowledge bases). Prints, per threshold, the false-refusal rate on answerable
questions and the refusal rate on off-topic ones, and the latency of the checks that run
before the model is called (evidence score and conflict detection).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from stream_rag.answer.conflicts import LexicalConflictDetector
from stream_rag.answer.evidence import entry_evidence, evidence_score
from stream_rag.config import Settings
from stream_rag.index.folders import ingest_paths, sample_kb_dir
from stream_rag.retrieve.metrics import load_beir, percentile
from stream_rag.services import Services, open_services

SAMPLE_QUESTIONS = [
    "Can I get a refund on an annual plan?",
    "How long do refunds take to reach my card?",
    "Are gift subscriptions refundable?",
    "What does the Pro plan cost?",
    "Is there a student discount?",
    "How much storage does the Free plan include?",
    "What does the Team plan add?",
    "Why do my notes not appear on my other device?",
    "What does a red cloud icon mean?",
    "What happens when I edit a note on two devices at once?",
    "Are large attachments synced?",
    "How are my notes encrypted?",
    "How do I enable two-factor authentication?",
    "Where are the data centres?",
    "Can support recover notes deleted from the trash?",
    "How do I export a notebook as PDF?",
    "How do I export all my data?",
    "Can I import notes from Evernote?",
    "When is support available?",
    "How fast does support answer Pro customers?",
]
THRESHOLDS = [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5]


def scores(services: Services, questions: list[str]) -> tuple[list[float], list[float]]:
    detector = LexicalConflictDetector()
    values: list[float] = []
    checks_ms: list[float] = []

    async def run() -> None:
        for question in questions:
            blocks = (await services.retriever.search(question)).blocks
            t0 = time.perf_counter()
            value = evidence_score(question, blocks)
            if services.answerer.entries is not None:  # what the refusal compares, any floor
                value = max(value, entry_evidence(question, blocks, services.answerer.entries))
            values.append(value)
            detector.find(question, blocks)
            checks_ms.append((time.perf_counter() - t0) * 1000)

    anyio.run(run)
    return values, checks_ms


def open_kb(data_dir: Path, sources: list[Path]) -> Services:
    settings = Settings(data_dir=data_dir)
    services = open_services(settings)
    ingest_paths(services.store, sources, settings, indexer=services.indexer, quiet=True)
    return services


def main() -> None:
    parser = argparse.ArgumentParser(description="low_evidence calibration")
    parser.add_argument("--beir", type=Path, help="a BEIR set whose queries are answerable")
    parser.add_argument(
        "--offtopic", type=Path, default=Path(__file__).with_name("offtopic_questions.txt")
    )
    args = parser.parse_args()
    offtopic = [q.strip() for q in args.offtopic.read_text().splitlines() if q.strip()]
    answerable: dict[str, list[float]] = {}
    unanswerable: list[float] = []
    timings: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        sample = open_kb(Path(tmp) / "sample", [sample_kb_dir()])
        try:
            answerable["sample KB"], t1 = scores(sample, SAMPLE_QUESTIONS)
            off, t2 = scores(sample, offtopic)
            unanswerable += off
            timings += t1 + t2
        finally:
            sample.close()
        if args.beir:
            data = load_beir(args.beir)
            corpus = Path(tmp) / "corpus"
            corpus.mkdir()
            for doc_id, text in data.corpus.items():
                (corpus / f"{doc_id}.txt").write_text(text)
            beir = open_kb(Path(tmp) / "beir", [corpus])
            try:
                answerable[args.beir.name], t3 = scores(beir, list(data.queries.values()))
                off, t4 = scores(beir, offtopic)
                unanswerable += off
                timings += t3 + t4
            finally:
                beir.close()
    print(f"off-topic questions: {len(offtopic)} (asked of each knowledge base)")
    header = "threshold  " + "  ".join(f"false-refusal {name:<12}" for name in answerable)
    print(header + "  off-topic refused")
    for threshold in THRESHOLDS:
        cells = "  ".join(
            f"{sum(v < threshold for v in values) / len(values):>26.3f}"
            for values in answerable.values()
        )
        refused = sum(v < threshold for v in unanswerable) / len(unanswerable)
        print(f"{threshold:9.2f}  {cells}  {refused:17.3f}")
    print(
        f"pre-generation checks: p50 {statistics.median(timings):.2f} ms, "
        f"p99 {percentile(timings, 0.99):.2f} ms over {len(timings)} questions"
    )


if __name__ == "__main__":
    main()
