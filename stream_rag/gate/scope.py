"""Words that widen a claim's scope ("any", "all", "always", "only", "permanently"): a sentence
using one that none of its cited blocks uses, nor a word of the same sense ("each" for "every"),
says more than they do, however close its other words are; the gate drops it as no claim they
support (docs/decisions/gate-verifier-operating-point.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .reading import reading

__all__ = ["SCOPE_WORDS", "widened"]

# Universal quantifiers, frequency and exclusivity: the words by which a restatement
# over-generalises ("covers any damage" of "covers faults in materials"). Each group's first
# words are flagged; any word of a group vouches for the others.
_GROUPS: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (frozenset(flagged.split()), frozenset((flagged + " " + vouching).split()))
    for flagged, vouching in (
        ("all every everything everyone", "each entire whole per"),
        ("any anything anyone anywhere", "anytime whatever whichever whoever whenever wherever"),
        ("always", "forever permanently whenever each every"),
        ("never", "none"),
        ("only", "sole solely lone exclusively alone"),
        ("entirely completely", "fully totally wholly"),
        ("unlimited", "unlimitedly limitless"),
        ("forever permanently", "always"),
    )
)
SCOPE_WORDS = frozenset().union(*(flagged for flagged, _ in _GROUPS))
_WORD = re.compile(r"[^\W\d_]+")


def widened(sentence: str, evidence: Iterable[str]) -> list[str]:
    """The scope words of `sentence` that no text of `evidence` vouches for, in order."""
    tokens = _WORD.findall(sentence.casefold())
    # "not only A but also B" adds B to A: it widens nothing.
    found = [
        w
        for i, w in enumerate(tokens)
        if w in SCOPE_WORDS and (w, tokens[i - 1 : i]) != ("only", ["not"])
    ]
    if not found:
        return []
    used = frozenset().union(*(reading(text).folded_words for text in evidence))
    vouched = set().union(*(flagged for flagged, words in _GROUPS if words & used))
    return list(dict.fromkeys(w for w in found if w not in vouched))
