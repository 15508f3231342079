"""Words that widen a claim's scope ("any", "all", "always", "only", "permanently"): a grey-zone
sentence using one that none of its cited blocks uses says more than they do, however close its
meaning otherwise; the semantic stage drops it before its models, which weigh it as one word.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["SCOPE_WORDS", "widened"]

# Universal quantifiers, frequency and exclusivity: the words by which a restatement
# over-generalises ("covers any damage" of "covers faults in materials").
SCOPE_WORDS = frozenset(
    "any anything anyone anywhere all every everything everyone always never none only "
    "entirely completely unlimited forever permanently".split()
)
_WORD = re.compile(r"[^\W\d_]+")


def widened(sentence: str, evidence: Iterable[str]) -> list[str]:
    """The scope words of `sentence` that no text of `evidence` uses, in order."""
    found = [w for w in _WORD.findall(sentence.casefold()) if w in SCOPE_WORDS]
    if not found:
        return []
    used = {w for text in evidence for w in _WORD.findall(text.casefold()) if w in SCOPE_WORDS}
    return list(dict.fromkeys(w for w in found if w not in used))
