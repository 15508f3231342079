"""A sentence that quotes whole statements of a block, word for word: it says exactly what the
block says there (the lexical gate then has no clause to hold to a span)."""

from __future__ import annotations

import unicodedata

from ..language.statements import statement_spans

__all__ = ["folded", "statement_runs"]

# Whole statements of a block a sentence may quote at once (a sentence can join a heading-less
# line and the statement after it).
_MAX_RUN = 3


def folded(text: str) -> str:
    """`text` compared as words: NFKC, case folded, whitespace collapsed, closing punctuation
    and quotes off its end."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split()).rstrip(".!?\"'”’ ")


def statement_runs(text: str) -> frozenset[str]:
    """The runs of whole consecutive statements of `text` (up to `_MAX_RUN`), folded."""
    parts = [" ".join(text[s:e].split()) for s, e in statement_spans(text)]
    parts = [p for p in parts if p]
    return frozenset(
        folded(" ".join(parts[i:j]))
        for i in range(len(parts))
        for j in range(i + 1, min(i + _MAX_RUN, len(parts)) + 1)
    )
