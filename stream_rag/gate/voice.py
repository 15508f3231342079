"""The writer's own voice: a sentence that speaks in the first person singular ("I", "me",
"my") says something about its writer, which blocks that never speak so cannot support; a
question asserts nothing a block can vouch for; a judgement ("funny", "important", "famous")
no cited block makes is the writer's. The gate drops each after its overlap check
(`not_a_claim`; docs/decisions/gate-verifier-operating-point.md, gate-real-model-errors.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = ["asks", "first_person", "judges", "not_a_claim", "speaks_for_itself"]

# "i", "me", "my", "myself" and the contractions ("I'm", "I 've" as BEGIN tokenises it), in
# lower or sentence case. "mine" is left out (a coal mine).
_FIRST_PERSON = re.compile(r"(?<![\w.(-])(?:[Ii]|[Mm]e|[Mm]y|[Mm]yself)(?![\w)-])")
# A question mark closing a word (BEGIN writes "games ?"), at the end of the text or before
# another sentence of it ("Have you tried it? It is..."); not a "?" in quotes or code.
_QUESTION = re.compile(r"\w(?: |[\"')\u201d\u2019]{1,2})?\?(?=[\"')\u201d\u2019]*(?:\s|$))")
# "I" after a capitalised word is a regnal or ordinal numeral ("Elizabeth I", "World War I").
_NUMERAL_BEFORE = re.compile(r"[A-Z][\w.'-]*\s+$")
# Words of judgement: what the writer thinks of a thing, not what a block says of it. Stems
# are matched by their first letters so "importance" vouches for "important".
_JUDGEMENTS = (
    "funny interesting fascinating amazing awesome wonderful beautiful lovely "
    "terrible horrible awful boring exciting impressive incredible remarkable weird strange "
    "crazy sad glad unfortunate unfortunately fortunately luckily sadly surprisingly "
    "important significant notable famous renowned iconic legendary popular favourite favorite "
    "best worst excellent perfect"
).split()
_JUDGED = re.compile(r"\b(?:" + "|".join(_JUDGEMENTS) + r")\b")
_STEM = 6  # letters a word of the evidence must share with the judgement to vouch for it


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


def asks(text: str) -> bool:
    """Whether `text` asks a question (ends one of its sentences with one)."""
    return _QUESTION.search(text) is not None


def judges(sentence: str, evidence: Iterable[str]) -> list[str]:
    """The words of judgement in `sentence` that no text of `evidence` uses (nor a word of the
    same stem: "importance" for "important"), in order."""
    found = _JUDGED.findall(sentence.casefold())
    if not found:
        return []
    said = " ".join(evidence).casefold()
    return [w for w in dict.fromkeys(found) if not re.search(r"\b" + w[:_STEM], said)]


def not_a_claim(sentence: str, evidence: Sequence[str]) -> str | None:
    """Why `sentence` is no claim its cited `evidence` can support (a question none of it asks
    word for word, a first-person sentence where none of it speaks so, a judgement none of it
    makes), or None."""
    if asks(sentence):
        wanted = _fold(sentence)
        if not any(wanted in _fold(text) for text in evidence):
            return "a question asserts nothing its cited blocks can vouch for"
    if speaks_for_itself(sentence, evidence):
        return "speaks in the first person, which its cited blocks never do"
    judged = judges(sentence, evidence)
    if judged:
        return f"judges ({', '.join(map(repr, judged))}) where its cited blocks do not"
    return None


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())
