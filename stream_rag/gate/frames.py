"""A frame around a claim that adds nothing to it (issue 27): a discourse marker ("Note that",
"Keep in mind that", "In short,") says the claim is worth noticing, not what it is; and "It is
not true that" before a clause that one plain "not" negates states that clause without the
"not" (and before a plain positive clause, the clause with one). The gate judges the claim the
frame holds; the reader is shown the sentence as written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .clauses import Clause

__all__ = ["unframed"]

# English discourse markers that only point at what follows. Each needs its "that", colon or
# comma, so a phrase that is part of the claim ("In short supply", "Note the fee") is left.
_MARKER = re.compile(
    r"\s*(?:"
    r"(?:please\s+)?(?:note|remember|be\s+aware|(?:keep|bear)\s+in\s+mind)\s*(?:that\b|:|,)"
    r"|(?:in\s+(?:short|brief|summary|other\s+words|a\s+nutshell)|to\s+sum\s+up"
    r"|to\s+summari[sz]e|simply\s+put|put\s+simply|as\s+a\s+reminder|for\s+your\s+information"
    r"|just\s+so\s+you\s+know|well|of\s+course|actually)\s*[,:]"
    r")\s*",
    re.IGNORECASE,
)
_NOT_TRUE = re.compile(
    r"\s*(?:it\s+is\s+not|it's\s+not|it\s+isn't)\s+(?:true|the\s+case)\s+that\s+", re.IGNORECASE
)
# One plain negation the frame cancels: "is not" -> "is", "cannot" -> "can", "doesn't" -> "does".
_PLAIN_NOT = re.compile(r"\b(?:(can)not|(\w+)n['’]t|not)\b", re.IGNORECASE)
_AUXILIARY = re.compile(
    r"\b(is|are|was|were|can|may|must|will|would|should|could|might|has|have|had)\b(?!\s+not\b)",
    re.IGNORECASE,
)
# Where a negation's scope is not the whole clause, or more than one negation could be the one
# the frame cancels, nothing is rewritten: "not (A and B)" is no "A and not B", "not never" is
# "sometimes", "not all" is no "all ... not", and a relative clause may hold the auxiliary
# ("customers who have paid are refunded").
_SCOPED = re.compile(
    r"[;()]|[,:](?!\d)|\b(?:and|or|but|nor|if|unless|when|whenever|while|whereas|because|except|only"
    r"|all|every|each|any|always|some|most|many|few|never|no|none|neither|nobody|nothing"
    r"|nowhere|who|whom|whose|which|where)\b",
    re.IGNORECASE,
)
_IRREGULAR = {"wo": "will", "ca": "can", "sha": "shall", "ai": "is"}


def unframed(sentence: str, units: Sequence[Clause] | None) -> tuple[str, Sequence[Clause] | None]:
    """`sentence` and its clauses with a frame that adds nothing taken off the front, the claim
    inside it as the gate judges it; unchanged when there is none."""
    claim = _claim(sentence, single=units is None or len(units) == 1)
    if claim is None:
        return sentence, units
    if not units:
        return claim, units
    first = _claim(units[0].text, single=len(units) == 1)
    if first is None:
        return sentence, units
    head = Clause(first, units[0].cited, units[0].head, units[0].ranged)
    return claim, (head, *units[1:])


def _claim(text: str, single: bool) -> str | None:
    marker = _MARKER.match(text)
    if marker is not None and marker.end() < len(text):
        rest = text[marker.end() :]
        return _claim(rest, single) or _upper_first(rest)
    frame = _NOT_TRUE.match(text)
    if frame is None or not single:
        return None
    inner = text[frame.end() :]
    if _SCOPED.search(inner.rstrip(".!")):
        return None
    negations = list(_PLAIN_NOT.finditer(inner))
    if len(negations) > 1:
        return None
    if negations:
        found = negations[0]
        kept = found.group(1) or ""
        if found.group(2):
            kept = _IRREGULAR.get(found.group(2).lower(), found.group(2))
        plain = f"{inner[: found.start()]}{kept}{inner[found.end() :]}"
    else:
        auxiliary = _AUXILIARY.search(inner)
        if auxiliary is None:
            return None
        verb = auxiliary.group(1)
        negated = f"{verb}not" if verb.lower() == "can" else f"{verb} not"
        plain = f"{inner[: auxiliary.start()]}{negated}{inner[auxiliary.end() :]}"
    return _upper_first(" ".join(plain.split()))


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]
