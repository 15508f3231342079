"""A false sentence made by swapping numbers: two of the sentence's own, or one for another
sentence's of the same kind (a price for a price, a date for a date). Numbers come from the
gate's own scanner (language/quantities.py)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ..language.quantities import Quantity, scan
from .edits import Edit


@dataclass(frozen=True, slots=True)
class _Number:
    start: int
    end: int
    shown: str
    key: tuple[object, ...]  # what it says: two numbers with the same key are the same claim
    kind: str  # currency or unit, "date", "time", or the word after a bare number


def _numbers(text: str) -> list[_Number]:
    lowered = text.lower()
    found, _ = scan(lowered if len(lowered) == len(text) else text)
    out = []
    for quantity in found:
        start, end = quantity.span
        shown = text[start:end]
        start += len(shown) - len(shown.lstrip())
        end -= len(shown) - len(shown.rstrip())
        if end > start:
            out.append(_Number(start, end, text[start:end], _key(quantity), _kind(quantity)))
    return out


def _key(quantity: Quantity) -> tuple[object, ...]:
    return (quantity.values, quantity.dates, quantity.times)


def _kind(quantity: Quantity) -> str:
    if quantity.dates:
        return "date"
    if quantity.times:
        return "time"
    unit = quantity.values[0][1] if quantity.values else None
    return unit or " ".join(quantity.text.split()[1:2]) or "number"


def _broad(kind: str) -> str:
    return kind if kind in ("date", "time") else "value"


def swap_numbers(sentence: str, others: Sequence[str], rng: random.Random) -> Edit | None:
    """Two numbers of the sentence swapped ("$8 a month or $80 a year" -> "$80 a month or $8
    a year"), else one of its numbers swapped for another sentence's of the same kind."""
    numbers = _numbers(sentence)
    pairs = [
        (a, b)
        for i, a in enumerate(numbers)
        for b in numbers[i + 1 :]
        if a.key != b.key and _broad(a.kind) == _broad(b.kind) and a.shown != b.shown
    ]
    if pairs:
        same = [(a, b) for a, b in pairs if a.kind == b.kind]
        a, b = rng.choice(same or pairs)
        text = (
            sentence[: a.start] + b.shown + sentence[a.end : b.start] + a.shown + sentence[b.end :]
        )
        return Edit(text, "within", (a.start, a.start + len(b.shown)), a.shown)
    elsewhere = [n for other in others if other != sentence for n in _numbers(other)]
    options = [
        (mine, theirs)
        for mine in numbers
        for theirs in elsewhere
        if theirs.key != mine.key and theirs.kind == mine.kind and theirs.shown != mine.shown
    ]
    if not options:
        return None
    mine, theirs = rng.choice(options)
    text = sentence[: mine.start] + theirs.shown + sentence[mine.end :]
    return Edit(text, "across", (mine.start, mine.start + len(theirs.shown)), mine.shown)
