"""Magnitudes written in words ("thousands", "tens of thousands", "hundreds of millions"): a
clause that states one its aligned span states with another multiplier ("thousands" of "tens of
thousands") changes the number as surely as a changed digit (gate-real-model-errors.md).
"""

from __future__ import annotations

import re

__all__ = ["magnitude_mismatch"]

_MAGNITUDE = re.compile(
    r"\b(?:(tens|dozens|hundreds|thousands)\s+of\s+)?(hundreds|thousands|millions|billions)\b"
)


def _magnitudes(lowered: str) -> set[tuple[str, str]]:
    return {(m.group(1) or "", m.group(2)) for m in _MAGNITUDE.finditer(lowered)}


def magnitude_mismatch(lowered: str, span_lowered: str) -> str:
    """Why the clause (`lowered`, casefolded) states a magnitude in words otherwise than its
    span does ("" if it does not, or if the span states none in words)."""
    mine = _magnitudes(lowered)
    if not mine:
        return ""
    theirs = _magnitudes(span_lowered)
    if not theirs:
        return ""
    for times, scale in sorted(mine - theirs):
        # The same scale with another multiplier, else another scale.
        other = sorted(t for t in theirs if t[1] == scale) or sorted(theirs)
        wrote, said = _written(times, scale), _written(*other[0])
        return f"{wrote!r} stands where the span says {said!r}"
    return ""


def _written(times: str, scale: str) -> str:
    return f"{times} of {scale}" if times else scale
