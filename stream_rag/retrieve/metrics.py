"""Retrieval metrics (trec_eval conventions) and a BEIR-layout loader."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

Qrels = dict[str, dict[str, int]]


@dataclass(frozen=True, slots=True)
class BeirSet:
    corpus: dict[str, str]
    queries: dict[str, str]
    qrels: Qrels


def load_beir(root: Path, split: str = "test") -> BeirSet:
    """Read `corpus.jsonl`, `queries.jsonl` and `qrels/<split>.tsv`; text is title + body."""
    try:
        corpus = {}
        with (root / "corpus.jsonl").open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    row = json.loads(line)
                    title, body = row.get("title") or "", row.get("text") or ""
                    corpus[str(row["_id"])] = f"{title}\n\n{body}".strip() if title else body
        queries = {}
        with (root / "queries.jsonl").open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    row = json.loads(line)
                    queries[str(row["_id"])] = row["text"]
        qrels: Qrels = {}
        with (root / "qrels" / f"{split}.tsv").open(encoding="utf-8") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    except (OSError, KeyError, ValueError) as exc:
        raise InputError(f"not a BEIR data set at {root}: {exc}") from None
    return BeirSet(corpus, {q: t for q, t in queries.items() if q in qrels}, qrels)


def ndcg_at(ranked: Sequence[str], judged: Mapping[str, int], k: int) -> float:
    """nDCG@k with trec_eval's linear gain: sum(rel / log2(rank + 1))."""
    dcg = sum(judged.get(doc, 0) / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k]))
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(rank + 2) for rank, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def mrr_at(ranked: Sequence[str], judged: Mapping[str, int], k: int) -> float:
    for rank, doc in enumerate(ranked[:k], start=1):
        if judged.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def recall_at(ranked: Sequence[str], judged: Mapping[str, int], k: int) -> float:
    relevant = {doc for doc, grade in judged.items() if grade > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile, q in [0, 1]."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]
