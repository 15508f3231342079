"""A follow-up question resolved for retrieval: the subject words of the earlier questions it
leans on ("And how do I claim it?" after a question on the warranty), without a model. Read
alike by the answer pipeline and by the local models, which get the follow-up in the prompt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..prompt_format import PROMPT_TURNS
from ..text import tokenize
from ..types import Turn
from .terms import WORD

__all__ = ["carried", "leans_on_history", "resolve", "subject_words"]

# A question leaning on the one before: a pronoun or a "what about", or too few words of its
# own to be searched alone.
_LEANS = re.compile(
    r"^\W*(?:and|but|also|so|then|what about|how about|and what about)\b"
    r"|\b(?:it|its|it's|they|them|their|theirs|this|that|these|those|there|one|ones|same)\b",
    re.IGNORECASE,
)
# Words of how a question is asked rather than what it is about.
_ASKING = frozenset(
    "how what when where which who whom whose why can could would should may might will shall "
    "do does did is are was were am be been get got tell know please need want like way "
    "long much many often soon far use take make go".split()
)


_POINTS_BACK = re.compile(
    r"\b(?:it|its|it's|they|them|their|theirs|this|that|these|those|there|same)\b", re.IGNORECASE
)


def _names(question: str) -> set[str]:
    """Subject words written with a capital or a digit ("Pro", "X300"), the first word aside."""
    words = subject_words(question)
    first = WORD.search(question)
    return {
        w
        for w in words
        if (w[:1].isupper() or any(c.isdigit() for c in w)) and not (first and w == first[0])
    }


def subject_words(question: str) -> list[str]:
    """The question's content words, as written, in order: "Nimbus Blender warranty cover"."""
    words = WORD.findall(question)
    kept = {t for t in tokenize(question)}
    out: list[str] = []
    for word in words:
        lowered = word.casefold()
        # "Wi-Fi" and "pour-over" tokenise in parts: one content part keeps the word.
        parts = {lowered} if lowered in kept else set(tokenize(word)) & kept
        if parts and lowered not in _ASKING and word not in out:
            out.append(word)
    return out


def leans_on_history(question: str) -> bool:
    """Whether the question needs the turn before it to be understood."""
    own = [w for w in subject_words(question) if w.casefold() not in _ASKING]
    return bool(_LEANS.search(question)) or len(own) <= 1


def own_words(query: str) -> str | None:
    """What a follow-up `resolve`d into `query` asks in its own words (the subject carried
    from earlier questions left out); None for a query that carries nothing."""
    if not query.endswith(")") or " (" not in query:
        return None
    return query[: query.rindex(" (")]


def resolve(question: str, history: Sequence[Turn]) -> str:
    """A follow-up with the subject words of the earlier questions it leans on appended, for
    retrieval; a question that stands alone is returned unchanged."""
    recent = [t.question for t in history[-PROMPT_TURNS:]]
    if not recent or not leans_on_history(question):
        return question
    context = resolve(recent[-1], [Turn(q) for q in recent[:-1]])
    present = {w.casefold() for w in subject_words(question)}
    carried = [w for w in subject_words(context) if w.casefold() not in present]
    if _names(question) and not _POINTS_BACK.search(question):
        # "And the Pro plan?" after the Team plan's price: the same question of another thing,
        # so the name before is replaced, not carried (a pronoun would point back at it).
        before = _names(context)
        carried = [w for w in carried if w not in before]
    if not carried:
        return question
    # The question's own words twice: what it adds outweighs the subject carried over.
    own = " ".join(subject_words(question))
    return f"{question} {own} ({' '.join(carried)})" if own else f"{question} ({' '.join(carried)})"


_CARRIED = re.compile(r"\(([^()]*)\)\s*$")


def carried(question: str) -> list[str]:
    """The subject words `resolve` carried into `question` from earlier turns (its closing
    parenthesis), none for a question that stands alone."""
    match = _CARRIED.search(question)
    return subject_words(match.group(1)) if match else []
