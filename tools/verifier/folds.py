"""`build_data`'s pairs as `train.py` and `probe.py` read them: the same arguments, folds
merged alike, the same out-of-fold splits and `oof.jsonl` rows. Standard library only: the
training venv has no stream_rag."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["FOLDS", "LONGFORM", "arguments", "held_out", "oof_line", "read", "splits"]

FOLDS = 4  # build_data's, grouped by source document and claim
LONGFORM = -2  # the fold of rows never trained on but by the model of all folds

Row = dict[str, Any]


def arguments(doc: str | None) -> argparse.ArgumentParser:
    """A parser with the pairs file, `--work` and `--merge`, which both tools take."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("pairs", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument(
        "--merge", type=int, default=FOLDS, help=f"folds to run (of build_data's {FOLDS})"
    )
    return parser


def read(path: Path, merge: int) -> list[Row]:
    """The pairs, their folds merged in `merge` groups (0-1, 2-3 for 2: each run takes minutes
    on 2 shared cores); rows outside the folds (negative) keep theirs."""
    rows: list[Row] = [json.loads(line) for line in path.read_text().splitlines()]
    for r in rows:
        if r["fold"] >= 0:
            r["fold"] = r["fold"] * merge // FOLDS
    return rows


def splits(rows: list[Row]) -> Iterator[tuple[int, list[int], list[int]]]:
    """Each fold, the rows trained on (every other fold) and its labelled rows tested."""
    for k in sorted({r["fold"] for r in rows if r["fold"] >= 0}):
        train = [i for i, r in enumerate(rows) if r["fold"] not in (k, LONGFORM)]
        test = [i for i, r in enumerate(rows) if r["fold"] == k and r["kind"] == "labelled"]
        yield k, train, test


def held_out(rows: list[Row]) -> tuple[list[int], list[int]]:
    """The rows of every fold (trained on) and the long-form rows (tested)."""
    train = [i for i, r in enumerate(rows) if r["fold"] != LONGFORM]
    return train, [i for i, r in enumerate(rows) if r["fold"] == LONGFORM]


def oof_line(row: Row, p: float) -> str:
    """An `oof.jsonl` line: the row, where it came from, and its probability."""
    keys = ("source", "row", "fold", "label")
    return json.dumps({**{k: row[k] for k in keys}, "p": round(p, 5)}) + "\n"
