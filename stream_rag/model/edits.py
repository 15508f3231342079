"""A sentence edited into a false one (`Edit`, what falsify.py's and number_swap.py's edits
return), and whether the edited sentence is new to its block (`novel`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Edit:
    """A sentence changed: `span` is where its new words are in `text` (empty for a deletion),
    `was` what stood there before."""

    text: str
    variant: str
    span: tuple[int, int]
    was: str


def novel(text: str, block: Sequence[str]) -> bool:
    """Whether `text` is no sentence of the block: an edit that lands on one says nothing new."""
    plain = " ".join(text.lower().split())
    return all(" ".join(s.lower().split()) != plain for s in block)
