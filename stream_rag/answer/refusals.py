"""Refusal messages that stand alone as text: a CLI, an OpenAI-style client or a plain chat
front-end shows only the message, so it names what it refers to instead of pointing at
structured `details` below it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..events import Refusal
from .conflicts import Conflict
from .results import Judged

CONFLICT_LEAD = "The sources disagree on this, so I am not choosing between them."
OLDER_DOCUMENT = "“{name}” is the older document."
_MAX_QUOTE = 240
NOT_ANSWERED = (
    "The sources do not answer this question, so I am not answering. "
    "Read the sources listed, or ask about something they cover."
)
# What the prompt asks a model to write when the sources do not answer ("say so in one
# sentence without a citation"), in the ways models word it.
_SOURCES = (
    r"(?:sources?|documents?|context|passages?|texts?|knowledge base|information (?:provided|given)"
    r"|provided information|materials?)"
)
_NO_ANSWER = re.compile(
    rf"\b{_SOURCES}\b[^.!?]*?\b(?:do(?:es)?\s*n[o']?t|never|lacks?)\s+(?:\w+\s+)?"
    r"(?:answer|say|state|mention|contain|cover|include|provide|specify|address|explain|tell"
    r"|discuss|give|list|describe)"
    r"|\b(?:I|we)\s+(?:do not|don't|cannot|can't|could not|couldn't|was unable to|am unable to)\s+"
    r"(?:find|see|know|answer|tell|determine)\b"
    r"|\bthere (?:is|are)\s+no\s+(?:\w+\s+)?(?:information|mention|answer|details?)\b"
    r"|\bnot\s+(?:mentioned|covered|addressed|stated|specified|answered)\s+in\s+the\s+" + _SOURCES,
    re.IGNORECASE,
)


def says_no_answer(text: str) -> bool:
    """Whether a sentence says the sources do not answer the question."""
    return _NO_ANSWER.search(text) is not None


def not_answered(judged: Sequence[Judged]) -> Refusal | None:
    """The refusal for an answer in which the model said the sources do not answer: every unit
    uncited (none claims anything from a source) and one saying so. None otherwise."""
    if not judged or any(j.verdict.ok or j.verdict.reason != "uncited" for j in judged):
        return None
    if not any(says_no_answer(j.segment.text) for j in judged):
        return None
    return Refusal("no_supported_sentences", NOT_ANSWERED, [{"cause": "no_answer_in_sources"}])


def conflict_message(conflicts: Sequence[Conflict]) -> str:
    """The lead sentence, then each side of the first conflict: its document, the value it
    gives and the sentence it gives it in; a count of any further conflicts."""
    if not conflicts:
        return CONFLICT_LEAD
    first = conflicts[0]
    sides = [
        _side(first.a.name, first.values_a, first.sentence_a, first.a.dated),
        _side(first.b.name, first.values_b, first.sentence_b, first.b.dated),
    ]
    older = {"a": first.a.name, "b": first.b.name}.get(first.stale or "")
    stale = f" {OLDER_DOCUMENT.replace('{name}', older)}" if older else ""
    more = len(conflicts) - 1
    tail = f" ({more} more disagreement{'s' if more > 1 else ''} in the details.)" if more else ""
    return f"{CONFLICT_LEAD} {sides[0]} {sides[1]}{stale}{tail}"


def _side(name: str, values: Sequence[str], sentence: str, dated: str | None = None) -> str:
    quote = " ".join(sentence.split())
    if len(quote) > _MAX_QUOTE:
        quote = quote[: _MAX_QUOTE - 1].rstrip() + "…"
    said = f" {' and '.join(f'“{v}”' for v in values)}" if values else ""
    when = f" (updated {dated})" if dated else ""
    return f"“{name}”{when} says{said}: “{quote}”"
