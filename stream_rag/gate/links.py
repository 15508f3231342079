"""How a sentence links what it says (issue 27, the red team's third round): two true clauses
joined by a cause no cited block gives ("costs $8, so it includes unlimited notebooks"), and
the two sides of "instead of" / "rather than" written the other way round. The clause checks
read each clause alone, after the link is cut away, so the link is read here, on the whole
sentence against the statements of its cited blocks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..text import STOP_WORDS
from .reading import Reading, reading

__all__ = ["unconditioned", "unlinked"]

# A cause or a consequence. "since" before a date or a possessive's one-word noun ("since
# 2020", "since the mid-1950s", "since its launch", "since our move to Berlin") tells time;
# before a clause ("since its roof leaked") it may give a cause, so it is checked. "due to"
# tells time before "be" ("fees due to be paid": "be" is never a cause's noun) and as "is due
# to" before a verb of schedule ("is due to open"); "closed due to launch delays" and "due to
# return fraud" give a cause.
_POSSESSED = (
    r"(?:its|his|her|their|our|your|my|early|late)\s+[^\W\d_][\w'-]*"
    r"(?=\s*(?:[.,;:!?)]|$)|\s+(?:in|on|at|of|from|by|with|for|to|and|or|until|till)\b)"
)
_MONTHS = r"january|february|march|april|may|june|july|august|september|october|november|december"
_SCHEDULED = (
    "".join(rf"(?<=\b{copula} due to)|" for copula in ("is", "are", "was", "were", "be", "been"))
    + r"(?<='s due to)|(?<=’s due to)|(?<='re due to)|(?<=’re due to)"
)
_CAUSAL = re.compile(
    r"\b(?:because|therefore|thus|hence|consequently|as a result|which means|that is why"
    rf"|this is why|due to(?!\s+be\b|(?:{_SCHEDULED})\s+(?:start|begin|open|close|arrive|end"
    r"|expire|launch|return|finish)\b)|owing to|thanks to|so that|in order to|since(?!\s+(?:"
    rf"(?:the\s+)?(?:(?:early|mid|late)(?:\s+|-))?\d|(?:early\s+|late\s+)?(?:{_MONTHS})\b"
    rf"|(?:last|then|yesterday)\b|{_POSSESSED})))\b"
    # "and so on" ends a list; ", so on the day ..." gives a consequence.
    r"|,\s*so\s+(?!far\b|on\s*(?:[.,;:!?)]|$)|much\b|many\b)",
    re.IGNORECASE,
)
# A purpose ("so that", "in order to") restates a block's "to" ("Bring your passport to check
# in."): it stands when one statement of the blocks holds every content word of both sides.
_PURPOSE = re.compile(r"so that|in order (?:to|that)", re.IGNORECASE)
# What may stand before a cause put first: nothing, or an answer's opening ("Yes, and").
_OPENING = re.compile(
    r"\W*(?:(?:yes|yeah|yea|yep|no|well|sure|oh|ok|okay|and|but|so|also)\b\W*)*", re.IGNORECASE
)
_SWAP = re.compile(r"\b(?:instead of|rather than|in place of)\b", re.IGNORECASE)
# "due to" of a schedule ("was due to be cancelled", "is due to open") says a plan: only a
# statement of one vouches for it ("was cancelled due to rain" says it happened, and why).
_DUE = re.compile(r"\bdue to\b", re.IGNORECASE)
_PLANNED = re.compile(
    r"\b(?:due (?:on|in|by|at|from|for)|scheduled|planned|expected|set to|will|shall|going to"
    r"|(?:is|are|was|were) to|plan to|plans to|intends? to)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W\d_][\w'-]*")


# A sentence opening with a condition, and what in a statement sets one.
_IF = re.compile(r"\W*(?:if|unless|provided|as long as|only if)\b", re.IGNORECASE)
_CONDITION = re.compile(
    r"\b(?:if|unless|provided|as long as|when|whenever|once|in case|only)\b", re.IGNORECASE
)
# The share of an opening condition's sentence one statement (or two, one setting a condition)
# must hold: its condition and what holds on it are said together there.
_TOGETHER = 2 / 3


def _content(text: str) -> set[str]:
    return {w[:5] for w in _WORD.findall(text.casefold()) if w not in STOP_WORDS}


def unlinked(sentence: str, evidence: Sequence[str]) -> str | None:
    """Why the way `sentence` links its clauses is not what `evidence` says, or None."""
    cause = _CAUSAL.search(sentence)
    swap = _SWAP.search(sentence)
    due = _scheduled(sentence)
    if cause is None and swap is None and not due:
        return None
    statements = [s for block in map(reading, evidence) for s in _said(block)]
    if due:
        # A statement of a plan sharing a word with the sentence (not "due") vouches.
        mine = _content(sentence) - {"due"}
        if not any(s.planned and s.content & mine for s in statements):
            return "'due to' says a plan no statement it cites states of this"
    if cause is not None:
        said = _content(sentence[: cause.start()] + " " + sentence[cause.end() :])
        if _PURPOSE.fullmatch(cause.group()) and any(said <= s.content for s in statements):
            cause = None
    if cause is not None:
        # The link's own words vouch for nothing ("due" of "due to rain"), and a statement
        # gives this cause only if it holds words of both sides the link joins.
        before = _content(sentence[: cause.start()])
        after = _content(sentence[cause.end() :])
        rest = sentence[cause.end() :].split(",", 1)
        if _OPENING.fullmatch(sentence[: cause.start()]) and len(rest) == 2:
            # A cause put first ("Yes, due to X, Y"): its sides are X and Y.
            before, after = _content(rest[0]), _content(rest[1])
        linked = (
            s
            for s in statements
            if s.causal
            and len(s.content & (before | after)) >= 2
            and all(side & s.content for side in (before, after) if side)
        )
        if next(linked, None) is None:
            return f"{cause.group().strip(' ,')!r} links by a cause its cited blocks do not give"
    if swap is not None:
        after = _content(sentence[swap.end() :])
        before = _content(sentence[: swap.start()])
        for s in statements:
            if s.swapped is None:
                continue
            first, then = s.swapped
            if after & first - then and before & then - first:
                return f"the two sides of {swap.group()!r} are the other way round in its block"
    return None


@dataclass(frozen=True, slots=True)
class _Said:
    """A statement of a block as the links are read in it: its content words, whether it
    gives a cause, and the content words before and after its "instead of", if it has one."""

    content: frozenset[str]
    causal: bool
    swapped: tuple[frozenset[str], frozenset[str]] | None
    planned: bool


@lru_cache(maxsize=256)
def _said(block: Reading) -> tuple[_Said, ...]:
    """The statements of `block` that have text, read once."""
    out = []
    for s in block.raw_statements:
        if not s.strip():
            continue
        theirs = _SWAP.search(s)
        swapped = None
        if theirs is not None:
            swapped = (
                frozenset(_content(s[: theirs.start()])),
                frozenset(_content(s[theirs.end() :])),
            )
        planned = _PLANNED.search(s) is not None or _scheduled(s)
        out.append(_Said(frozenset(_content(s)), _CAUSAL.search(s) is not None, swapped, planned))
    return tuple(out)


def _scheduled(text: str) -> bool:
    """Whether `text` writes "due to" of a schedule (one `_CAUSAL` does not read as a cause)."""
    return any(_CAUSAL.match(text, m.start()) is None for m in _DUE.finditer(text))


def unconditioned(sentence: str, evidence: Sequence[str]) -> str | None:
    """Why `sentence`, opening with a condition, joins statements of `evidence` that set none
    (the clause cuts read "If X." and "Y" apart: "If Pro customers get live chat. ...,
    support is ..."), or None."""
    if _IF.match(sentence) and not _together(_content(sentence), evidence):
        return "its condition and what holds on it are said together by no statement it cites"
    return None


def _together(words: set[str], evidence: Sequence[str]) -> bool:
    """Whether one statement of `evidence`, or two adjacent ones of which one sets a condition,
    holds `_TOGETHER` of `words`."""
    if not words:
        return True
    for text in evidence:
        statements = [s for s in reading(text).raw_statements if s.strip()]
        for i, one in enumerate(statements):
            if len(words & _content(one)) >= _TOGETHER * len(words):
                return True
            pair = " ".join(statements[i : i + 2])
            conditional = i + 1 < len(statements) and _CONDITION.search(pair) is not None
            if conditional and len(words & _content(pair)) >= _TOGETHER * len(words):
                return True
    return False
