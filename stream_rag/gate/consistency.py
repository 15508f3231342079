"""Whether a sentence's numbers and polarity agree with the statements of its cited blocks.

The gate aligns a sentence to the statements (language/statements.py) of its cited blocks that
share most of its weighted terms; numbers and polarity are then checked against those
statements only, so a number found elsewhere in the block ("14 days" of another policy)
vouches for nothing, and "X is covered" does not pass against "X is not covered".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from ..language.quantities import Quantity, Stated
from ..language.statements import Statement, negated_terms
from ..language.terms import term_of
from ..text import word_tokens

__all__ = [
    "ALIGN_SHARE",
    "aligned",
    "clause_around",
    "polarity",
    "unvouched_quantity",
]

# A statement is aligned to the sentence when it shares at least this share of the weight the
# best statement shares. Chosen on the dev sets and the fake's changed-number run
# (docs/decisions/): a sentence built from two statements keeps both, a number from a
# statement that shares one word with the sentence is not vouched for.
ALIGN_SHARE = 0.5
# A number is changed when the clause it is stated in copies a statement (the best aligned,
# sharing at least this much of the clause's weight) that states another number of its kind
# instead: "refunds within 17 days" against "refunds within 14 days".
COPIED_SHARE = 0.6
# The statements whose negations a sentence must not contradict: those sharing this share of
# what the best aligned one shares (tighter than ALIGN_SHARE: a negation in a statement that
# merely shares a name with the sentence says nothing about it).
POLARITY_SHARE = 0.8

# Where a sentence's clause ends, for the words a number is stated with.
_CLAUSE = re.compile(
    r"[;:()\u2013\u2014]|[,.!?]\s|\s(?:and|but|while|whereas|which|who|although|though|because"
    r"|when|where|after|before|until|since)\s"
)


def clause_around(words: str, span: tuple[int, int]) -> str:
    """The clause of `words` holding `span` (a number: "married in 2012" of "They married in
    2012, and their son was born in 2013")."""
    start = 0
    for match in _CLAUSE.finditer(words, 0, span[0]):
        start = match.end()
    after = _CLAUSE.search(words, span[1])
    return words[start : after.start() if after else len(words)]


def _scores(
    terms: Iterable[str],
    statements: Sequence[Statement],
    weights: Mapping[str, float],
    unseen: float,
) -> tuple[list[float], float]:
    """The weight of `terms` each statement has, and the terms' total weight."""
    weight = [(t, weights.get(t, unseen)) for t in dict.fromkeys(terms) if t != "not"]
    scored = [sum([w for t, w in weight if t in s.terms]) for s in statements]
    return scored, sum(w for _, w in weight)


def aligned(
    terms: Iterable[str],
    statements: Sequence[Statement],
    weights: Mapping[str, float],
    unseen: float,
    share: float = ALIGN_SHARE,
) -> list[Statement]:
    """The statements sharing at least `share` of what the best one shares of `terms`'
    weight; every statement when none shares a term (a sentence of numbers only)."""
    scored, _ = _scores(terms, statements, weights, unseen)
    best = max(scored, default=0.0)
    if best <= 0.0:
        return list(statements)
    floor = share * best - 1e-9
    return [s for s, score in zip(statements, scored, strict=True) if score >= floor]


class Evidence(Protocol):
    """What the gate knows of a cited block: its quantities and statements."""

    @property
    def stated(self) -> Stated: ...
    @property
    def statements(self) -> tuple[Statement, ...]: ...


def unvouched_quantity(
    stated: Sequence[Quantity],
    words: str,
    blocks: Sequence[Evidence],
    weights: Mapping[str, float],
    unseen: float,
) -> Quantity | None:
    """The first of the sentence's quantities its cited blocks do not vouch for: one no
    cited block states, or one that changes a number of the statement its clause copies."""
    statements = [s for b in blocks for s in b.statements]
    sentence: Stated | None = None
    copies: dict[str, list[Statement]] = {}  # clause -> the statements it copies
    for q in stated:
        if not any(b.stated.vouches_for(q) for b in blocks):
            return q
        clause = clause_around(words, q.span)
        if clause not in copies:
            copies[clause] = _copied(_clause_terms(clause), statements, weights, unseen)
        copied = copies[clause]
        if not copied or any(s.stated.vouches_for(q) for s in copied):
            continue
        sentence = sentence or Stated.of(list(stated), words)
        if any(_displaced(q, s.stated, sentence) for s in copied):
            return q  # "$12 a month" against "the Pro plan costs $8 per month"
    return None


def _clause_terms(clause: str) -> set[str]:
    """The gate terms of a clause, split on spaces (blingfire's call costs more than the rest
    of the check; a clause only places a number)."""
    return {
        term
        for word in clause.split()
        for token in word_tokens(word)
        if (term := term_of(token)) is not None
    }


def _copied(
    local: set[str], statements: Sequence[Statement], weights: Mapping[str, float], unseen: float
) -> list[Statement]:
    """The statement(s) best covering a clause's terms, if they cover most of them."""
    scored, total = _scores(local, statements, weights, unseen)
    best = max(scored, default=0.0)
    if total <= 0.0 or best < COPIED_SHARE * total:
        return []
    return [s for score, s in zip(scored, statements, strict=True) if score >= best - 1e-9]


def _kind(value: float, unit: str | None) -> tuple[str | None, bool]:
    return unit, value.is_integer() and 1000 <= value <= 2100  # a year or not


def _displaced(q: Quantity, statement: Stated, sentence: Stated) -> bool:
    """Whether `statement` states a quantity of `q`'s kind that the sentence does not."""
    for value, unit in q.values:
        kind = _kind(value, unit)
        theirs = {v for v in statement.bare if _kind(v, unit) == kind}
        theirs |= {v for v, u in statement.with_unit if _kind(v, u) == kind}
        if theirs - sentence.values:
            return True
    if q.dates and any(not sentence.vouches_for(Quantity("", dates=(d,))) for d in statement.dates):
        return True
    return bool(q.times and statement.times - sentence.times)


def polarity(
    terms: Sequence[str],
    words: str,
    statements: Sequence[Statement],
    weights: Mapping[str, float],
    unseen: float,
) -> str:
    """Why the sentence's polarity differs from the statements it is aligned to ("" if it
    does not): it negates and none of them does (nor any statement negating the same word),
    or it states the word a closely aligned one negates ("X is covered", "X is not covered")."""
    if "not" in terms:
        mine = negated_terms(words)
        if not mine:
            return ""  # a cue governing no word ("however, no"): the block has a negation
        window = aligned(terms, statements, weights, unseen)
        if any("not" in s.terms for s in window):
            return ""
        if any(s.negated & mine for s in statements):
            return ""
        return "it negates, the statements it matches do not"
    have = set(terms)
    if all(s.negated.isdisjoint(have) for s in statements):
        return ""  # no statement negates a word of the sentence
    close = aligned(terms, statements, weights, unseen, POLARITY_SHARE)
    flipped = next((t for s in close for t in s.negated if t in have), None)
    if flipped is None:
        return ""
    return f"a statement it matches negates {flipped!r}, the sentence does not"
