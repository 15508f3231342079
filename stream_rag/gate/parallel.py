"""A number moved between two parallel parts of one statement (issue 27, found in review):
"Online orders ship in 2 days; phone orders ship in 5 days." does not say "Online orders ship in
5 days", though every word and number of it is in the statement. The parts of a statement
coordinated by ";", ",", "and", "but", "while", "whereas" are read apart; a number's own part
must not lose a word to the one its parallel part writes in its place.

Parallel: the two parts share a content word besides the ones traded ("orders", "ship"), and
the two traded words stand next to the same word ("online orders" / "phone orders"), so a
coordination of bare names ("Open Monday and Tuesday from 9 am") is no trade.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..language.quantities import Quantity
from .support import Span, Word

__all__ = ["moved_between_parts"]

# Where one coordinated part of a statement ends and the next begins.
_COORDINATED = re.compile(r";|,\s|\s(?:and|but|while|whereas|or)\s")


def _parts(span: Span) -> list[tuple[int, int]]:
    cuts = [0]
    for match in _COORDINATED.finditer(span.lowered):
        cuts += [match.start(), match.end()]
    cuts.append(len(span.lowered))
    return [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts), 2)]


def _keys(words: Sequence[Word], start: int, end: int) -> frozenset[str]:
    return frozenset(w.key for w in words if not w.number and w.start >= start and w.end <= end)


def moved_between_parts(
    near: Sequence[Word], q: Quantity, span: Span, same: Callable[[Quantity, Quantity], bool]
) -> tuple[str, str] | None:
    """(the word the clause brought in, the word of the number's own part it left out) when
    every part of `span` stating `q` lost a word to a parallel part's, else None."""
    parts = _parts(span)
    if len(parts) < 2:
        return None
    mine = frozenset(w.key for w in near if not w.number)
    owners = [
        (a, b) for a, b in parts if any(same(q, s) and a <= s.span[0] < b for s in span.quantities)
    ]
    found: tuple[str, str] | None = None
    for a, b in owners:
        own = _keys(span.words, a, b)
        missing = own - mine
        brought = mine - own
        if not missing or not brought:
            return None  # this part says what the clause says of the number
        trade = _trade(span, parts, (a, b), own, missing, brought)
        if trade is None:
            return None
        found = found or trade
    return found


def _trade(
    span: Span,
    parts: Sequence[tuple[int, int]],
    home: tuple[int, int],
    own: frozenset[str],
    missing: frozenset[str],
    brought: frozenset[str],
) -> tuple[str, str] | None:
    for a, b in parts:
        if (a, b) == home:
            continue
        theirs = _keys(span.words, a, b)
        # Parallel: a word in common that neither side traded.
        if not (own & theirs) - missing - brought:
            continue
        took = sorted((brought & theirs) - own)
        left = sorted(missing - theirs)
        for x in took:
            for y in left:
                # In the same place: next to the same word ("online orders" / "phone orders").
                if _beside(span.words, x, (a, b)) & _beside(span.words, y, home):
                    return x, y
    return None


def _beside(words: Sequence[Word], key: str, part: tuple[int, int]) -> set[tuple[int, str]]:
    """The words next to `key` in `part` of a span: (-1, before) and (1, after)."""
    inside = [w for w in words if w.start >= part[0] and w.end <= part[1]]
    out: set[tuple[int, str]] = set()
    for i, w in enumerate(inside):
        if w.key != key:
            continue
        if i > 0:
            out.add((-1, inside[i - 1].key))
        if i + 1 < len(inside):
            out.add((1, inside[i + 1].key))
    return out
