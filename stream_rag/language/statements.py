"""A block's statements: the terms, quantities and negated terms of each sentence or line.

Computed at ingest with the chunk's other features (index/features.py) and read by the gate,
which checks a sentence's numbers and polarity against the statements it aligns to
(gate/consistency.py); the conflict check cuts its statements at the same spans.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .quantities import Stated, canonical, scan
from .terms import NEGATION_CUE, content_terms

__all__ = [
    "Statement",
    "abbreviated",
    "negated_terms",
    "read_statements",
    "statement_spans",
    "titled",
]

_CLAUSE_END = re.compile(r"[,;:.!?()\n\u2013\u2014]|\s(?:but|and|or|while|whereas|although)\s")
# A negation governs the first content term after it ("is not covered", "no refunds").
_SCOPE_TERMS = 1
_SCOPE_CHARS = 60


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement of a block: its gate terms, the quantities it states, and the terms a
    negation cue in it governs (empty when it negates nothing)."""

    terms: frozenset[str]
    stated: Stated
    negated: frozenset[str]


def negated_terms(words: str) -> frozenset[str]:
    """The gate terms governed by each negation cue in `canonical` text: the first content
    term after the cue, in the same clause ("no refunds are issued" -> refund)."""
    if "n" not in words:  # every cue has an n
        return frozenset()
    out: set[str] = set()
    for match in NEGATION_CUE.finditer(words):
        after = words[match.end() : match.end() + _SCOPE_CHARS]
        clause = _CLAUSE_END.split(after, maxsplit=1)[0]
        scope = [t for t in content_terms(clause) if t != "not"]
        out.update(scope[:_SCOPE_TERMS])
    return frozenset(out)


def read_statements(text: str, spans: Sequence[tuple[int, int]]) -> tuple[Statement, ...]:
    """The statements of `text` at `spans` (its statement spans, see conflicts.py)."""
    out = []
    for start, end in spans:
        found, words = scan(canonical(text[start:end]))
        terms = frozenset(content_terms(words))
        out.append(Statement(terms, Stated.of(found, words), negated_terms(words)))
    return tuple(out)


_BREAK = re.compile(r"[.!?][\"'”’)\]]*\s+|[。！？]\s*|[ \t]*\n\s*")
_LAST_WORD = re.compile(r"\w+$")
_ABBREVIATIONS = frozenset("approx cf dr etc fig figs mr mrs ms no nos vs".split())


def statement_spans(text: str) -> list[tuple[int, int]]:
    """Sentences, and lines: a line break ends a statement unless the next line goes on in
    lower case (a hard wrap), so list items, headings and table rows stand alone. A regex, not
    blingfire: its offsets wrapper costs ~0.5 ms per 300 words, more than everything else."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _BREAK.finditer(text):
        cut, after = match.span()
        if after >= len(text):
            break
        mark = text[cut]
        if mark == "\n":
            if text[after].islower():
                continue
        elif mark in ".!?":
            if abbreviated(text, cut):
                continue
            cut = match.start() + len(match.group().rstrip())
        else:
            cut += 1  # a CJK full stop, exclamation or question mark
        spans.append((start, cut))
        start = after
    spans.append((start, len(text)))
    return [_trim(text, s, e) for s, e in spans if text[s:e].strip()]


def abbreviated(text: str, cut: int) -> bool:
    """Whether the full stop at `cut` closes an initial or an abbreviation ("e.g. the", "J.
    Smith", "Dr. Drum", "approx. 30"), which ends no statement."""
    word = _LAST_WORD.search(text, max(0, cut - 12), cut)
    return word is not None and (
        len(word.group()) == 1 or word.group().casefold() in _ABBREVIATIONS
    )


_TITLES = frozenset("dr mr mrs ms mx prof rev fr sgt capt lt col".split())


def titled(text: str, cut: int) -> bool:
    """Whether the full stop at `cut` closes a title or a dotted abbreviation ("Dr. Drum",
    "e.g.", "a.m."), which never ends a statement; a lone capital may ("gate B. Cars ...")."""
    word = _LAST_WORD.search(text, max(0, cut - 12), cut)
    if word is None:
        return False
    if len(word.group()) == 1:
        return word.start() > 0 and text[word.start() - 1] == "."
    return word.group().casefold() in _TITLES


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while text[start].isspace():
        start += 1
    while text[end - 1].isspace():
        end -= 1
    return start, end
