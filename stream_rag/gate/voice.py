"""The writer's own voice: a sentence that speaks in the first person singular ("I", "me",
"my") says something about its writer, which blocks that never speak so cannot support. The
semantic stage drops such a grey-zone sentence before its models (docs/decisions/, "The
writer's own voice"): its models were fitted on claims about the world, and the one for
several-sentence evidence had seen no first-person sentence at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["first_person", "speaks_for_itself"]

# "i", "me", "my", "myself" and the contractions ("I'm", "I 've" as BEGIN tokenises it), in
# lower or sentence case. "mine" is left out (a coal mine).
_FIRST_PERSON = re.compile(r"(?<![\w.(-])(?:[Ii]|[Mm]e|[Mm]y|[Mm]yself)(?![\w)-])")
# "I" after a capitalised word is a regnal or ordinal numeral ("Elizabeth I", "World War I").
_NUMERAL_BEFORE = re.compile(r"[A-Z][\w.'-]*\s+$")


def first_person(text: str) -> bool:
    """Whether `text` has a first-person singular pronoun."""
    for match in _FIRST_PERSON.finditer(text):
        if match.group() != "I" or not _NUMERAL_BEFORE.search(text, 0, match.start()):
            return True
    return False


def speaks_for_itself(sentence: str, evidence: Iterable[str]) -> bool:
    """Whether `sentence` speaks in the first person singular and none of `evidence` does
    (a block that quotes someone saying "I" may support a sentence that does too)."""
    return first_person(sentence) and not any(first_person(text) for text in evidence)
