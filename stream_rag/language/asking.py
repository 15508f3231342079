"""Which part of a question asks: its sentences that end in "?" (all of it when none does), and
of each, what follows the situation told before it ("My flight to Spain landed late, how much
can I claim?" asks "how much can I claim?"). One reading, with one list of the words a
question opens with, for every reader of the question (`question.py`, `focus.py`, the
pre-model checks, the conflict check).
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["asked", "asking", "asking_sentences"]

_OPENS = (
    r"(?:how|what|when|where|which|who|whom|whose|why|can|could|do|does|did|is|are|am|was|were"
    r"|will|would|should|shall|may|must|has|have)\b"
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# Where a sentence turns from the asker's situation to what they ask ("I use a wheelchair,
# is there a lift?"): the situation says who asks, the question what about.
_TURN = re.compile(rf"[,;:]\s*(?={_OPENS})", re.IGNORECASE)
_OPENS_ASKING = re.compile(rf"\W*{_OPENS}", re.IGNORECASE)


def asking_sentences(text: str) -> list[str]:
    """The sentences of `text` (its white space made single) that ask, ending in "?"; all of
    it when none does: "I returned it last week. When will I get my money back?" asks a time,
    whatever the situation told before."""
    said = " ".join(text.split())
    return [s for s in _SENTENCE_END.split(said) if s.endswith("?")] or [said]


def asking(text: str) -> str:
    """The sentences of `text` that ask, joined (`asking_sentences`)."""
    return " ".join(asking_sentences(text))


@lru_cache(maxsize=4096)
def asked(text: str) -> str:
    """What `text` asks: each asking sentence from where it turns from a situation to a
    question. Only a statement before the turn is a situation: "Does the Pro plan include SSO,
    can I try it?" asks both, "If I cancel, how much do I get back?" only the second."""
    return " ".join(_from_turn(sentence) for sentence in asking_sentences(text))


def _from_turn(sentence: str) -> str:
    turn = _TURN.search(sentence)
    if turn is None or _OPENS_ASKING.match(sentence[: turn.start()]):
        return sentence
    return sentence[turn.end() :]
