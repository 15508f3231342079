"""Time `LexicalConflictDetector.find` on 8 blocks of ~300 words: Cranfield abstracts with
Cranfield queries, the sample knowledge base, and a worst case where every sentence is a
near-duplicate with a number. Cold: the per-text analysis cache emptied before each call;
stored: cold, with the readings the indexer stored (JSON) loaded instead, as the service does."""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from stream_rag.answer import statements
from stream_rag.answer.conflicts import LexicalConflictDetector
from stream_rag.answer.readings import from_json, to_json
from stream_rag.answer.statements import Analysed, analyse
from stream_rag.ingest.extract import extract_text, media_type_for
from stream_rag.retrieve.hybrid import Block

CRANFIELD = Path("/work/shared/data/cranfield")
SAMPLE_KB = Path("/work/main/stream_rag/sample_kb")


def block(n: int, doc_id: str, text: str) -> Block:
    return Block(n, f"{doc_id}-{n}", doc_id, 1, "0" * 64, doc_id, doc_id, 0, len(text), text, {})


def words(text: str, count: int = 300) -> str:
    return " ".join(text.split(" ")[:count])


def cranfield() -> list[tuple[str, list[Block]]]:
    docs = [json.loads(line) for line in (CRANFIELD / "corpus.jsonl").open()]
    queries = [json.loads(line)["text"] for line in (CRANFIELD / "queries.jsonl").open()][:50]
    cases = []
    for q, question in enumerate(queries):
        picked = docs[q * 24 : q * 24 + 24]
        blocks = [
            block(i + 1, picked[3 * i]["_id"], words(" ".join(d["text"] for d in picked[3 * i :])))
            for i in range(8)
        ]
        cases.append((question, blocks))
    return cases


def sample_kb() -> list[tuple[str, list[Block]]]:
    paths = sorted(SAMPLE_KB.iterdir())
    texts = {p.stem: extract_text(p, media_type_for(p.name))[0] for p in paths}
    # Two more documents restate refunds and support hours with other numbers: real conflicts,
    # ranked in the top 4 next to the documents they contradict.
    order = ["refund-policy", "refund-policy-old", "contact-support", "contact-support-old"]
    for name in order[::2]:
        texts[f"{name}-old"] = texts[name].replace("30 days", "14 days").replace("18:00", "17:00")
    names = order + [name for name in texts if name not in order]
    blocks = [block(i + 1, name, words((texts[name] + "\n\n") * 4)) for i, name in enumerate(names)]
    questions = [
        "How long is the refund window for annual plans?",
        "How much does the Pro plan cost per month?",
        "When is support available?",
        "How long do deleted notes stay in the Trash?",
    ]
    return [(q, blocks) for q in questions]


def worst_case() -> list[tuple[str, list[Block]]]:
    sentence = "Annual plans can be refunded within {} days of purchase, minus {} percent fees."
    blocks = [
        block(i + 1, f"doc-{i}", " ".join(sentence.format(i + k, k) for k in range(20)))
        for i in range(8)
    ]
    return [("How long is the refund window for annual plans?", blocks)]


def timed(
    run: Callable[[], object],
    cold: bool,
    repeat: int,
    loaded: LexicalConflictDetector | None = None,
) -> list[tuple[float, float]]:
    """(wall, cpu) milliseconds per call; cpu time is less inflated on a busy machine."""
    out = []
    for _ in range(repeat):
        if cold:
            statements.analyse.cache_clear()
        if loaded is not None:
            loaded.forget()
        wall, cpu = time.perf_counter(), time.thread_time()
        run()
        out.append(((time.perf_counter() - wall) * 1000, (time.thread_time() - cpu) * 1000))
    return out


def _load(stored: dict[str, str], chunk_ids: Sequence[str]) -> dict[str, Analysed]:
    return {c: a for c in chunk_ids if (a := from_json(stored[c])) is not None}


def summary(times: list[float]) -> str:
    times = sorted(times)
    p95 = times[int(0.95 * (len(times) - 1))]
    return f"{statistics.median(times):6.2f} / {p95:6.2f}"


def main() -> None:
    scenarios = {"cranfield": cranfield(), "sample_kb": sample_kb(), "worst_case": worst_case()}
    print(f"python {sys.version.split()[0]}; ms per find() call, median / p95, wall and cpu")
    for top_n in (4, 8):
        detector = LexicalConflictDetector(top_n=top_n)
        for name, cases in scenarios.items():
            sizes = [len(b.text.split()) for _, blocks in cases for b in blocks]
            found = sum(len(detector.find(q, blocks)) for q, blocks in cases)
            stored = {b.chunk_id: to_json(analyse(b.text)) for _, bs in cases for b in bs}
            loaded = LexicalConflictDetector(top_n=top_n, load=partial(_load, stored))
            for mode in ("cold", "stored", "warm"):
                times = [
                    t
                    for q, blocks in cases
                    for t in timed(
                        partial((loaded if mode == "stored" else detector).find, q, blocks),
                        mode != "warm",
                        20,
                        loaded if mode == "stored" else None,
                    )
                ]
                print(
                    f"top_n={top_n} {name:<10} {mode:<6}"
                    f"  wall {summary([w for w, _ in times])}"
                    f"  cpu {summary([c for _, c in times])}"
                    f"  ({len(cases)} q, ~{statistics.mean(sizes):.0f} words/block, {found} found)"
                )


if __name__ == "__main__":
    main()
