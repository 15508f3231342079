"""The files `stream-rag eval answers` reads: a JSONL file of questions, each with what its
answer is expected to be (`Question`), and a JSON list of sets, each a knowledge base and its
questions (`AnswerSet`). A bad record is an `InputError` naming its file and line."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

EXPECTS = ("answer", "refuse", "conflict")


@dataclass(frozen=True, slots=True)
class Question:
    question: str
    expect: str
    gold: tuple[str, ...] | None
    history: tuple[tuple[str, str], ...] = ()  # (earlier question, its verified answer)
    # Whether the answer should name a part of the question no source covers (None: not said).
    left_out: bool | None = None
    # Content checks: each phrase (any of its alternatives) in the answer; none of `avoid`;
    # the first sentence holding `first` (any alternative) and citing a gold file.
    phrases: tuple[tuple[str, ...], ...] = ()
    avoid: tuple[str, ...] = ()
    first: tuple[str, ...] = ()
    # A conflict's older side: the file the refusal must name as stale (None: not checked).
    stale: str | None = None


def load_questions(path: Path) -> list[Question]:
    """Read and check the JSONL records; a bad line is an `InputError` naming it."""
    items: list[Question] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            items.append(_question(json.loads(line)))
        except (ValueError, TypeError, KeyError) as exc:
            raise InputError(f"{path}:{number}: {exc}") from None
    return items


def _question(row: object) -> Question:
    if not isinstance(row, dict) or not isinstance(row.get("question"), str):
        raise ValueError("each line must be an object with a string 'question'")
    expect = row.get("expect", "answer")
    if expect not in EXPECTS:
        raise ValueError(f"'expect' must be one of {list(EXPECTS)}")
    gold = row.get("gold")
    if gold is not None and not (isinstance(gold, list) and all(isinstance(g, str) for g in gold)):
        raise ValueError("'gold' must be a list of file names or null")
    history = row.get("history") or []
    turns = tuple((str(turn["question"]), str(turn.get("answer") or "")) for turn in history)
    left_out = row.get("left_out")
    if left_out is not None and not isinstance(left_out, bool):
        raise ValueError("'left_out' must be true, false or absent")
    phrases = tuple(_alternatives(p, "phrases") for p in _list(row, "phrases"))
    avoid = tuple(_alternatives(p, "avoid")[0] for p in _list(row, "avoid"))
    first = _alternatives(row["first"], "first") if row.get("first") is not None else ()
    stale = row.get("stale")
    if stale is not None and (expect != "conflict" or not isinstance(stale, str)):
        raise ValueError("'stale' names a file, and only for 'expect': 'conflict'")
    return Question(
        row["question"],
        expect,
        None if gold is None else tuple(gold),
        turns,
        left_out,
        phrases,
        avoid,
        first,
        stale,
    )


def _list(row: dict[str, object], key: str) -> list[object]:
    value = row.get(key) or []
    if not isinstance(value, list):
        raise ValueError(f"'{key}' must be a list")
    return value


def _alternatives(value: object, key: str) -> tuple[str, ...]:
    """A phrase, or a list of phrases any one of which will do."""
    if isinstance(value, str) and value.strip():
        return (value,)
    if isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        return tuple(value)
    raise ValueError(f"'{key}' holds phrases: a non-empty string or a list of them")


@dataclass(frozen=True, slots=True)
class AnswerSet:
    """One knowledge base and its questions, from a `--sets` file; a held-out set is reported,
    never tuned on."""

    name: str
    kb: Path
    questions: Path
    held_out: bool = False


def load_sets(path: Path) -> list[AnswerSet]:
    """The sets of a JSON file: a list of {"name", "kb", "questions", "held_out"?}, paths
    relative to the file."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise InputError(f"{path}: not JSON: {exc}") from None
    if not isinstance(rows, list) or not rows:
        raise InputError(f"{path}: expected a non-empty list of sets")
    sets: list[AnswerSet] = []
    for i, row in enumerate(rows, start=1):
        keys = ("name", "kb", "questions")
        if not isinstance(row, dict) or not all(isinstance(row.get(k), str) for k in keys):
            raise InputError(f"{path}: set {i} needs string 'name', 'kb' and 'questions'")
        held = row.get("held_out", False)
        if not isinstance(held, bool):
            raise InputError(f"{path}: set {i}: 'held_out' must be true or false")
        base = path.parent
        sets.append(AnswerSet(row["name"], base / row["kb"], base / row["questions"], held))
    return sets
