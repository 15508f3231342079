"""How often, per what and by whom, held to the statement the sentence restates: "most days"
of "every day" (a universal made partial), "per visit" of "per day" (a rate of another thing),
"accompanied by a member" of "accompanied by an adult" (another agent). The overlap counts
those words as shared when the block writes them in another statement.

English closed classes (quantifiers, frequency adverbs, determiners); the nouns compared are the
sentence's and the statement's own, never a knowledge base's list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .reading import reading

__all__ = ["rated"]

_WORD = re.compile(r"[a-z0-9]+")
# A universal or a fixed frequency, and what says "not always" or "not all".
_UNIVERSAL = frozenset(
    "every each all always daily weekly monthly yearly annually nightly hourly never none".split()
)
_QUANTIFIERS = frozenset("every each all always never none".split())
_PARTIAL = frozenset(
    "most many some several few usually often sometimes rarely occasionally mostly generally "
    "typically frequently seldom normally partly".split()
)
_DETERMINER = r"(?:(?:a|an|the|your|their|his|her|its|our|one|another)\s+)?"
# A rate and the word before it ("10 per visit", "twice per month"): what it rates.
_PER = re.compile(r"(?<!\S)(?=(\S+)\s+per\s+([a-z]+))")  # overlapping: "per user per month"
# "per cent" is a share, "per se" no rate; Latin rates as their English nouns.
_NO_RATE = frozenset("cent cents centum se capita".split())
_LATIN = {"annum": "year", "diem": "day", "mensem": "month"}
_AGENT = re.compile(rf"\b([a-z]+(?:ed|en))\s+by\s+{_DETERMINER}([a-z]+)")


def rated(sentence: str, evidence: Iterable[str]) -> str:
    """Why `sentence` says how often, per what or by whom otherwise than the statement of
    `evidence` it restates ("" if it does not)."""
    lowered = " ".join(sentence.lower().split())
    mine = set(_WORD.findall(lowered))
    partial = mine & _PARTIAL
    per = _PER.findall(lowered)
    agents = _AGENT.findall(lowered)
    if not partial and not per and not agents:
        return ""
    pieces = [piece for text in evidence for piece in reading(text).worded()]
    if not pieces:
        return ""
    theirs, words = max(pieces, key=lambda piece: len(mine & piece[1]))
    # A partial word where a universal stood, not one written beside it ("of all ... some").
    for word in sorted(partial - words if not mine & _QUANTIFIERS else ()):
        universal = words & _UNIVERSAL
        if universal:
            return f"says {word!r} where {theirs[:60]!r} says {min(universal)!r}"
    their_per = _PER.findall(theirs)
    for before, noun in per:
        if not their_per or noun in _NO_RATE or _rated_as(noun, theirs):
            continue
        # Held to the rate after the same word where the statement has one, else to any.
        paired = [n for b, n in their_per if b.strip("€$£") == before.strip("€$£")]
        if not _same(noun, paired or [n for _, n in their_per]):
            said = (paired or [n for _, n in their_per])[0]
            return f"says 'per {noun}' where {theirs[:60]!r} says 'per {said}'"
    their_agents = dict(_AGENT.findall(theirs))
    for verb, agent in agents:
        said = their_agents.get(verb)
        if said is not None and not _same(agent, [said]):
            return f"says {verb!r} by {agent!r} where {theirs[:60]!r} says by {said!r}"
    return ""


def _same(noun: str, nouns: list[str]) -> bool:
    """Whether `noun` is one of `nouns`, singular or plural."""
    stem = _LATIN.get(noun, noun).removesuffix("s")
    return any(_LATIN.get(n, n).removesuffix("s") == stem for n in nouns)


def _rated_as(noun: str, statement: str) -> bool:
    """Whether `statement` rates by `noun` in another way ("each visit", "a visit")."""
    return (
        re.search(rf"\b(?:each|every|a|an)\s+{re.escape(noun.removesuffix('s'))}s?\b", statement)
        is not None
    )
