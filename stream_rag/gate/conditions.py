"""A condition turned round: a sentence whose connective reverses or voids its block's
condition ("unless" or "even if" where the block says "if": "Unless your train is 15 minutes
late, you can claim 25%"), or writes "if" or "including" where the statement it restates says
"unless" or "except", says the opposite of when the claim holds. English closed class: the
connective must be one its cited blocks write, or a word of its sense.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from .reading import Reading, reading

__all__ = ["conditioned"]

# A connective a sentence may write -> the words any of which, in a cited block, vouch for it.
_VOUCHED_BY = {
    "unless": ("unless", "except", "otherwise", "if not", "if no", "if you do not"),
    "even if": ("even if", "even when", "even though", "regardless", "whether or not"),
    "even when": ("even if", "even when", "even though", "regardless", "whether or not"),
    "regardless of": ("regardless", "even if", "even when", "whether or not", "irrespective"),
    "whether or not": ("whether or not", "regardless", "even if", "irrespective"),
}
# (the sentence's word, the statement's word it stands for): an exception read as a condition.
_REVERSED = (
    ("if", "unless"),
    ("when", "unless"),
    ("including", "except"),
    ("including", "excluding"),
    ("including", "other than"),
)
_WORD = re.compile(r"[a-z0-9]+")
_CONNECTIVE = re.compile(
    r"\b(" + "|".join(sorted(map(re.escape, _VOUCHED_BY), key=len, reverse=True)) + r")\b"
)


def conditioned(sentence: str, evidence: Iterable[str]) -> str:
    """Why `sentence` conditions its claim otherwise than its cited `evidence` ("" if not)."""
    lowered = sentence.lower()
    found = _CONNECTIVE.findall(lowered)
    blocks = [reading(text) for text in evidence]
    if not found and not any(_excepts(block) for block in blocks):
        return ""
    # Held to the statement the sentence restates: a block's "unless" of another statement
    # vouches for nothing here.
    mine = set(_WORD.findall(lowered))
    statements = [pair for block in blocks for pair in block.worded()]
    best = max(statements, key=lambda pair: len(mine & pair[1]), default=("", frozenset()))[0]
    for connective in found:
        if not any(re.search(rf"\b{re.escape(w)}\b", best) for w in _VOUCHED_BY[connective]):
            return f"says {connective!r}: {best[:60]!r} does not condition it so"
    for said, theirs in _REVERSED:
        if (
            re.search(rf"\b{theirs}\b", best)
            and not re.search(rf"\b{theirs}\b", lowered)
            and re.search(rf"(?<!except )\b{said}\b", lowered)
            and not re.search(rf"\b{said}\b", best)
        ):
            return f"says {said!r} where {best[:60]!r} says {theirs!r}"
    return ""


@lru_cache(maxsize=256)
def _excepts(block: Reading) -> bool:
    """Whether `block` writes a word an exception read as a condition stands for ("unless")."""
    return any(re.search(rf"\b{w}\b", block.flat) for _, w in _REVERSED)
