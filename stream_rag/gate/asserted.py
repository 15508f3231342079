"""What a clause claims of its own beyond the span it restates (issue 27): a comparison of two
things ("costs more than the Team plan", "half the price") or a verb that denies ("refuses a
refund", "lacks sync") where the span makes none. Read by the binding checks (gate/binding.py).
"""

from __future__ import annotations

import re

from ..language.terms import NEGATION_CUE
from .support import Span

__all__ = ["asserted_mismatch"]


# A comparison of two things ("costs more than the Team plan", "half the price", "twice as
# much"): a claim of its own, which only a span making a comparison can vouch for. "more than
# 30 days" is a bound, read by the binding checks.
_COMPARES = re.compile(
    r"\b(?:[a-z]+er|more|less|fewer)\s+than\s+(?![$€£]?\d)|\bas\s+[a-z]+\s+as\b"
    r"|\b(?:twice|half|double|triple|thrice)\b|\b(?:two|three|four|\d+)\s+times\b"
    r"|\b(?:a|one|two|three)\s+(?:quarters?|thirds?|fifths?|tenths?)\b"
)
# Verbs that deny what follows them, as a "not" does ("refuses a refund", "lacks sync").
_DENIES = re.compile(
    r"\b(?:refus(?:e[sd]?|ing)|den(?:y|ies|ied|ying)|declin(?:e[sd]?|ing)|reject(?:s|ed|ing)?"
    r"|lack(?:s|ed|ing)?|fail(?:s|ed)? to|unable|prevent(?:s|ed)?|forb(?:id|ids|idden|ade)"
    r"|prohibit(?:s|ed)?|disallow(?:s|ed)?|withh(?:old|olds|eld)|ban(?:s|ned)?)\b"
)


# A share in words is the span's percentage written so ("half off" of "50% off").
_SHARE = {"half": "50", "a quarter": "25", "one quarter": "25", "a tenth": "10", "a fifth": "20"}


def _comparison(lowered: str, span: Span) -> str:
    mine = _COMPARES.search(lowered)
    share = _SHARE.get(mine.group().strip()) if mine is not None else None
    if share is not None and re.search(rf"\b{share}\s?(?:%|percent)", span.lowered):
        return ""
    if mine is not None and _COMPARES.search(span.lowered) is None:
        return f"{mine.group().strip()!r} compares what the span does not"
    return ""


def _denial(lowered: str, span: Span) -> str:
    mine = _DENIES.search(lowered)
    if mine is None or _DENIES.search(span.lowered) is not None:
        return ""
    if NEGATION_CUE.search(span.lowered) is not None:
        return ""  # "refuses" for the span's "does not give": the negation is there
    return f"{mine.group()!r} denies what the span does not"


def asserted_mismatch(lowered: str, span: Span) -> str:
    """Why the clause (`lowered`, casefolded) compares or denies what `span` does not ("" if
    it does not)."""
    return _comparison(lowered, span) or _denial(lowered, span)
