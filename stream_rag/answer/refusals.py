"""Refusal messages that stand alone as text: a CLI, an OpenAI-style client or a plain chat
front-end shows only the message, so it names what it refers to instead of pointing at
structured `details` below it."""

from __future__ import annotations

from collections.abc import Sequence

from .conflicts import Conflict

CONFLICT_LEAD = "The sources disagree on this, so I am not choosing between them."
_MAX_QUOTE = 240


def conflict_message(conflicts: Sequence[Conflict]) -> str:
    """The lead sentence, then each side of the first conflict: its document, the value it
    gives and the sentence it gives it in; a count of any further conflicts."""
    if not conflicts:
        return CONFLICT_LEAD
    first = conflicts[0]
    sides = [
        _side(first.a.name, first.values_a, first.sentence_a),
        _side(first.b.name, first.values_b, first.sentence_b),
    ]
    more = len(conflicts) - 1
    tail = f" ({more} more disagreement{'s' if more > 1 else ''} in the details.)" if more else ""
    return f"{CONFLICT_LEAD} {sides[0]} {sides[1]}{tail}"


def _side(name: str, values: Sequence[str], sentence: str) -> str:
    quote = " ".join(sentence.split())
    if len(quote) > _MAX_QUOTE:
        quote = quote[: _MAX_QUOTE - 1].rstrip() + "…"
    said = f" {' and '.join(f'“{v}”' for v in values)}" if values else ""
    return f"“{name}” says{said}: “{quote}”"
