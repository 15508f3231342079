"""What a question asks for, so that a conflict is only reported about that.

Two statements can differ in a number the question never asked about: "Is there a restocking
fee?" over two return policies that say 45 and 60 days. A value (or negation) counts for the
question only when the clause it stands in shares a term with the question, and when its kind
fits the question's slot: "how long" asks for a duration, "how much does it cost" for money,
"when" for a date or time, "how many" for a count, "where" for a place (a house number, a
floor, never a duration, a date or a price: "Where can I get spare parts?" over two documents
that keep them seven and ten years is no conflict).
"""

from __future__ import annotations

import re
from typing import Literal

SlotKind = Literal["duration", "money", "date", "count", "place"]

_TIME_UNITS = frozenset(
    "second minute hour day week month year business night sec min hr h d wk mo yr".split()
)
_MONEY_UNITS = frozenset("$ € £ ¥ % dollar euro pound cent".split())
_SIZE = r"(?:storage|space|data|water|memory|room|capacity)"
_SLOTS: tuple[tuple[SlotKind, re.Pattern[str]], ...] = (
    # Unless it also asks another slot's own question ("Where can I park, and for how long?"):
    # a fee or a window it only names ("Where do I pay the fee?") it does not ask the size of.
    (
        "place",
        re.compile(
            r"^\W*where\b(?!.*\b(?:how (?:long|soon|fast|quickly|much|many)|when|what time"
            r"|which (?:day|date))\b)"
        ),
    ),
    ("date", re.compile(r"^\W*when\b|\bwhat time\b|\bwhich (?:day|date)\b|\bopening hours\b")),
    ("count", re.compile(rf"\bhow much {_SIZE}\b")),
    (
        "duration",
        re.compile(
            r"\bhow (?:long|soon|fast|quickly)\b|\bhow many (?:seconds|minutes|hours|days|"
            r"business days|weeks|months|years)\b|\b(?:window|period|deadline)\b"
        ),
    ),
    (
        "money",
        re.compile(r"\bhow much\b|\b(?:cost|costs|price|prices|priced|fee|fees|charge|charged)\b"),
    ),
    ("count", re.compile(r"\bhow many\b")),
)
# Clauses: a value belongs to the part of its sentence between these.
_WORDS = re.compile(r"[^\W\d_]{3,}")
_JOINS = r"(?:and|but|while|whereas|although)"
_CLAUSE_BREAK = re.compile(rf"\s*[,;]\s*(?:{_JOINS}\s+)?|\s+{_JOINS}\s+")


def slot_kind(question: str) -> SlotKind | None:
    """The kind of value the question asks for, or None (a yes/no or open question)."""
    text = " ".join(question.casefold().split())
    for kind, pattern in _SLOTS:
        if pattern.search(text):
            return kind
    return None


def fits(kind: SlotKind | None, value_kind: str, unit: str) -> bool:
    """Whether a value of `value_kind` ("number"/"date") with `unit` can answer the slot. A
    unit read from the word before the number ("@...") is unknown and fits any slot."""
    if kind is None or unit.startswith("@"):
        return True
    if kind == "count":  # "how many notebooks", "how much storage": not a delay or a price
        return value_kind == "number" and unit not in _TIME_UNITS and unit not in _MONEY_UNITS
    if kind == "duration":
        return value_kind == "date" or unit in _TIME_UNITS
    if kind == "money":
        return value_kind == "number" and unit in _MONEY_UNITS
    if kind == "place":  # "12 Harbour Street", "the 2nd floor"
        return value_kind == "number" and unit not in _TIME_UNITS and unit not in _MONEY_UNITS
    return value_kind == "date" or unit in _TIME_UNITS  # date: a date, a time or a delay


def clause_spans(text: str) -> list[tuple[int, int]]:
    """Spans of the clauses of one sentence. A piece with fewer than two words of letters
    ("9:00 to 18:00 CET", "or $80 per year") belongs to the clause before it."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _CLAUSE_BREAK.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    merged: list[tuple[int, int]] = []
    for span in spans:
        if merged and len(_WORDS.findall(text, *span)) < 2:
            merged[-1] = (merged[-1][0], span[1])
        else:
            merged.append(span)
    return merged


def clause_at(spans: list[tuple[int, int]], position: int) -> tuple[int, int]:
    for start, end in spans:
        if start <= position < end:
            return start, end
    return spans[-1]
