"""Today's gate and the gate with the trained verifier, per data set, out of fold.

    python tools/verifier/combine.py OOF --set NAME VERDICTS ... [--floor 0.05]

OOF: `train.py`'s out-of-fold probabilities; VERDICTS: `stream-rag eval gate --verdicts` of the
same rows (one per data set and mode). The verifier may only change two verdicts: veto a
sentence the gate passed (p < veto), and pass a grey-zone sentence the gate dropped (p >=
rescue). The hard checks' drops stand. The two cutoffs for each fold are chosen on the other
folds' rows alone: the most supported kept with unsupported emitted <= floor on every set
fitted on; a set with no folds (long-form) gets the cutoffs chosen on all the folds' rows.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

Verdict = dict[str, Any]

GRID = [round(0.05 * i, 2) for i in range(0, 21)]


def decide(v: Verdict, p: float, veto: float, rescue: float) -> bool:
    if v["ok"]:
        return p >= veto
    return bool(v["grey"]) and p >= rescue


def rates(rows: list[tuple[Verdict, float]], veto: float, rescue: float) -> tuple[float, float]:
    pos = [decide(v, p, veto, rescue) for v, p in rows if v["label"]]
    neg = [decide(v, p, veto, rescue) for v, p in rows if not v["label"]]
    return sum(pos) / max(1, len(pos)), sum(neg) / max(1, len(neg))


def choose(sets: dict[str, list[tuple[Verdict, float]]], floor: float) -> tuple[float, float]:
    best = (-1.0, 0.0, 1.01)
    for veto in GRID:
        for rescue in GRID:
            if rescue < veto:
                continue
            figures = [rates(rows, veto, rescue) for rows in sets.values()]
            if all(emitted <= floor for _, emitted in figures):
                kept = sum(k for k, _ in figures) / len(figures)
                if kept > best[0]:
                    best = (kept, veto, rescue)
    return best[1], best[2]


def auc(pairs: list[tuple[float, bool]]) -> float:
    pos = [p for p, label in pairs if label]
    neg = [p for p, label in pairs if not label]
    if not pos or not neg:
        return float("nan")
    wins = sum((a > b) + 0.5 * (a == b) for a in pos for b in neg)
    return wins / (len(pos) * len(neg))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("oof", type=Path)
    parser.add_argument("--set", nargs=2, action="append", metavar=("NAME", "VERDICTS"))
    parser.add_argument("--floor", type=float, default=0.05)
    args = parser.parse_args()
    probs: dict[tuple[str, int], tuple[float, int]] = {}
    for line in args.oof.read_text().splitlines():
        r = json.loads(line)
        probs[(r["source"], r["row"])] = (r["p"], r["fold"])
    data: dict[str, list[tuple[Verdict, float, int]]] = {}
    for name, path in args.set:
        verdicts = [json.loads(line) for line in Path(path).read_text().splitlines()]
        data[name] = [(v, *probs[(name, i)]) for i, v in enumerate(verdicts)]
    folds = sorted({f for rows in data.values() for _, _, f in rows if f >= 0})
    chosen: dict[int, tuple[float, float]] = {}
    for k in [*folds, -2]:
        fit = {
            name: [(v, p) for v, p, f in rows if f >= 0 and f != k]
            for name, rows in data.items()
            if any(f >= 0 for _, _, f in rows)
        }
        chosen[k] = choose(fit, args.floor)
    print(f"cutoffs (veto, rescue) by held-out fold: {chosen}")
    print(f"{'set':10} {'gate kept':>9} {'emitted':>8} {'+verifier kept':>15} {'emitted':>8}")
    for name, rows in data.items():
        pos = [(v, p, f) for v, p, f in rows if v["label"]]
        neg = [(v, p, f) for v, p, f in rows if not v["label"]]
        after = defaultdict(list)
        for label, part in (("pos", pos), ("neg", neg)):
            for v, p, f in part:
                veto, rescue = chosen[f if f >= 0 else -2]
                after[label].append(decide(v, p, veto, rescue))
        print(
            f"{name:10} {sum(v['ok'] for v, _, _ in pos) / len(pos):9.3f} "
            f"{sum(v['ok'] for v, _, _ in neg) / len(neg):8.3f} "
            f"{sum(after['pos']) / len(pos):15.3f} {sum(after['neg']) / len(neg):8.3f}"
        )
    print("verifier AUC: all rows / rows the gate passed / grey-zone rows it dropped")
    for name, rows in data.items():
        parts = (
            [(p, bool(v["label"])) for v, p, _ in rows],
            [(p, bool(v["label"])) for v, p, _ in rows if v["ok"]],
            [(p, bool(v["label"])) for v, p, _ in rows if v["grey"] and not v["ok"]],
        )
        print(f"{name:10} " + "  ".join(f"{auc(part):.3f} ({len(part)})" for part in parts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
