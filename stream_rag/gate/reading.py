"""A block's text as the sentence rules read it (lower-cased, cut into statements, their words),
made once per block text and shared by every sentence citing it, in any request.

The rules (gate/conditions.py, exclusive.py, daykinds.py, obligation.py, links.py, scope.py,
compared.py) take the cited blocks as strings; each asks `reading(text)` instead of splitting
and tokenising the block again for every sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Reading", "reading"]

# The one place a block is cut into statements. `raw_statements`: after a sentence's end mark
# and at every line break.
_LINES = re.compile(r"(?<=[.!?])\s+|\n+")
# `statements`, the ones the rules hold a sentence to: the same, but a line that runs on in
# lower case (or after a comma or hyphen) continues its statement: a PDF's or a text file's
# wrapped line ("Bicycles must be packed in a box or / bag with ...") is one statement, while a
# heading's line, followed by a capitalised line, stays a statement of its own.
_STATED = re.compile(r"(?<=[.!?])\s+|(?<![,-])\n+(?![ \t]*[a-z])")
_WORD = re.compile(r"[a-z0-9]+")
_LETTERS = re.compile(r"[^\W\d_]+")
# Blocks kept (a 300-word block's reading is ~10 KB): requests over the same chunks share them.
_KEPT = 256


@dataclass(frozen=True, slots=True, eq=False)
class Reading:
    """One block's text read once: `flat` lower-cased with its whitespace collapsed, the text
    cut at `_STATED` and flattened the same way (empty pieces kept, as `re.split` gives them),
    each piece's words (`[a-z0-9]+`), the raw text cut at `_LINES`, and the letter words of
    its case fold."""

    text: str
    flat: str
    statements: tuple[str, ...]
    words: tuple[frozenset[str], ...]
    raw_statements: tuple[str, ...]
    folded_words: frozenset[str]

    def worded(self) -> Iterator[tuple[str, frozenset[str]]]:
        """Each piece of `statements` with its words."""
        return zip(self.statements, self.words, strict=True)


@lru_cache(maxsize=_KEPT)
def reading(text: str) -> Reading:
    """`text` read as the rules read it (kept for the `_KEPT` blocks read last)."""
    flat = " ".join(text.lower().split())
    # Cut before the whitespace is collapsed: a heading's line is a statement of its own, not
    # the start of the next one ("## If you are not at home" does not condition what follows);
    # a wrapped line is not.
    statements = tuple(" ".join(piece.lower().split()) for piece in _STATED.split(text))
    return Reading(
        text,
        flat,
        statements,
        tuple(frozenset(_WORD.findall(s)) for s in statements),
        tuple(_LINES.split(text)),
        frozenset(_LETTERS.findall(text.casefold())),
    )
