"""Citation markers: finding, parsing and stripping them.

Accepted forms: `[1]`, `[1][2]`, `[1, 2]`, `[1-3]`, `【1】`, `[^1]`, and
`(source#1: name, ID: 'x')` (the id, when present, must be block 1's document id).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BRACKETED = r"(?:\[\^?|【)\s*\d{1,3}(?:\s*(?:[,，;、]|-|–|and)\s*\d{1,3})*\s*(?:\]|】)"
_SOURCE = r"\(\s*source\s*#\s*\d+\s*(?::[^()]*?)?\)"
# One marker; runs like `[1][2]` are several matches next to each other.
MARKER_RE = re.compile(f"{_BRACKETED}|{_SOURCE}", re.IGNORECASE)
# A run of markers with the blanks between them.
MARKER_RUN_RE = re.compile(f"(?:{_BRACKETED}|{_SOURCE})(?:\\s*(?:{_BRACKETED}|{_SOURCE}))*", re.I)
# An opening that may still grow into a marker while tokens stream in (`[`, `[1`, `(source#`).
PARTIAL_MARKER_RE = re.compile(
    r"(?:\[\^?|【)\s*(?:\d+(?:\s*(?:[,，;、]|-|–|and)\s*\d*)*)?\s*$"
    r"|\(\s*s?o?u?r?c?e?\s*#?\s*\d*\s*(?::[^()]*)?$",
    re.IGNORECASE,
)
_ID = re.compile(r"ID\s*:\s*['\"]?([^'\",)\s]+)", re.IGNORECASE)
_NUMBER = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class Citation:
    """Block number `n` (1-based); `claimed_id` is the document id the model wrote, if any."""

    n: int
    claimed_id: str | None = None


def parse_marker(marker: str) -> list[Citation]:
    """The citations in one marker (`[1-3]` expands to 1, 2, 3)."""
    if marker.lstrip("( ").lower().startswith("source"):
        numbers = _NUMBER.findall(marker.split(":", 1)[0])
        found = _ID.search(marker)
        return [Citation(int(numbers[0]), found.group(1) if found else None)] if numbers else []
    out: list[Citation] = []
    for part in re.split(r"\s*(?:[,，;、]|and)\s*", marker.strip("[]【】^ ")):
        bounds = re.split(r"\s*[-–]\s*", part)
        if len(bounds) == 2 and bounds[0].isdigit() and bounds[1].isdigit():
            low, high = int(bounds[0]), int(bounds[1])
            if 0 < high - low < 50:
                out.extend(Citation(n) for n in range(low, high + 1))
                continue
        out.extend(Citation(int(n)) for n in _NUMBER.findall(part))
    return out


def extract(text: str) -> tuple[str, list[Citation]]:
    """`text` with every marker removed (and spacing tidied), and the citations, in order,
    without duplicates."""
    citations: list[Citation] = []
    for match in MARKER_RE.finditer(text):
        for citation in parse_marker(match.group()):
            if citation not in citations:
                citations.append(citation)
    return strip_markers(text), citations


def strip_markers(text: str) -> str:
    """Remove markers; no blank is left before punctuation or doubled between words."""
    stripped = MARKER_RUN_RE.sub(" ", text)
    stripped = re.sub(r"[ \t]+([.,;:!?。，；：！？)])", r"\1", stripped)
    stripped = re.sub(r"[ \t]{2,}", " ", stripped)
    return stripped.strip()
