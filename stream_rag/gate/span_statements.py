"""Which statement of a span a word stands in: a span (one statement or two adjacent ones, gate/
support.py) cut at its statements' ends, for the checks of what a clause adds (gate/unsaid.py).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from functools import lru_cache

from ..language.statements import titled
from .support import Span, Word

__all__ = ["home_statement", "numbers_beside", "statements_of"]

_END = re.compile(r"[.!?](?:\s|$)|\n")
# A line followed by one going on in lower case was wrapped mid-sentence (a PDF's lines): its
# line break ends no statement.
_LOWER_NEXT = re.compile(r"[ \t]*[a-z]")


def statements_of(span: Span, theirs: Sequence[Word], semicolons: bool = False) -> list[list[Word]]:
    """`theirs`, words of `span`, by the statement of `span` each stands in (with `semicolons`,
    by the part of it between semicolons or before a "but")."""
    cuts = _ends(span.text)
    if semicolons:
        # A part after "but" is a predicate of its own too ("... within the mainland but not
        # abroad"): the clause checks split a sentence's clauses there.
        cuts = tuple(sorted({*cuts, *(m.end() for m in _PART_CUT.finditer(span.text))}))
    if len(cuts) < 2:
        return [list(theirs)]
    parts: list[list[Word]] = [[] for _ in cuts]
    for w in theirs:
        parts[min(sum(w.start >= c for c in cuts), len(parts) - 1)].append(w)
    return parts


_PART_CUT = re.compile(r";|,?\s+(?=but\b)")


@lru_cache(maxsize=4096)  # a span's, asked again for every clause aligned to it
def _ends(text: str) -> tuple[int, ...]:
    """Where each statement of `text` ends; a title's or a dotted abbreviation's full stop
    ends none ('who goes by "Dr. Drum,"'), a lone capital's may ("gate B. Cars ...")."""
    return tuple(
        m.end()
        for m in _END.finditer(text)
        if not (m.group()[0] == "." and titled(text, m.start()))
        and not (m.group() == "\n" and _wrapped(text, m.start()))
    )


def _wrapped(text: str, at: int) -> bool:
    """Whether the line break at `at` wraps a statement over two lines."""
    return _LOWER_NEXT.match(text, at + 1) is not None


def home_statement(span: Span, theirs: Sequence[Word], said: set[str]) -> list[Word]:
    """The words of the statement of `span` holding most of `said`."""
    return max(statements_of(span, theirs), key=lambda p: len({w.key for w in p} & said))


def numbers_beside(span: Span, word: Word) -> frozenset[str]:
    """The numbers of the statement of `span` that holds `word` (the list the clause extends;
    a statement joined to the one before by "It" has its own)."""
    cuts = [0, *_ends(span.text), len(span.text)]
    start, end = next(
        ((a, b) for a, b in itertools.pairwise(cuts) if a <= word.start < b), (0, len(span.text))
    )
    return frozenset(w.key for w in span.words if w.number and start <= w.start < end)
