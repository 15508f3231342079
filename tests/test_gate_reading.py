"""A block read once (gate/reading.py) gives the rules what they computed from its text for every
sentence before: the same statements, words and per-block findings, on generated blocks."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from stream_rag.gate import conditions, daykinds, exclusive, links
from stream_rag.gate.reading import reading

# How each rule cut a block into statements before reading it once; since the unseen lane the
# cut is made before the whitespace is collapsed, so a line (a heading) is a statement of its own.
_STATEMENT = re.compile(r"(?<=[.!?])\s+|\n+")


def _cut(text: str) -> list[str]:
    """The statements the rules hold a sentence to: a line break that runs on (the line before
    ends with a comma or a hyphen, or the next line starts in lower case) is a space."""
    runs_on = [
        i
        for i, c in enumerate(text)
        if c == "\n"
        and ((i > 0 and text[i - 1] in ",-") or re.match(r"[ \t]*[a-z]", text[i + 1 :]))
    ]
    chars = list(text)
    for i in runs_on:
        chars[i] = " "
    joined = "".join(chars)
    return [" ".join(piece.split()) for piece in _STATEMENT.split(joined.lower())]


_PIECES = [
    " ",
    "  ",
    "\n",
    "\n\n",
    "\t",
    ".",
    ". ",
    "! ",
    "? ",
    ",",
    "Refunds",
    "are",
    "only",
    "Only",
    "unless",
    "if",
    "If",
    "including",
    "except",
    "other than",
    "because",
    "so that",
    "instead of",
    "rather than",
    "must",
    "should",
    "3",
    "three",
    "working",
    "calendar",
    "days",
    "hours",
    "faster",
    "Ünïcode",
    "ß",
    "İ",
    "don't",
    "e-mail",
    "x_y",
]
_BLOCK = st.lists(st.sampled_from(_PIECES), max_size=60).map("".join)


@given(_BLOCK)
def test_a_blocks_reading_is_what_each_rule_read(text: str) -> None:
    block = reading(text)
    flat = " ".join(text.lower().split())
    assert block.flat == flat
    assert list(block.statements) == _cut(text)
    assert [set(words) for _, words in block.worded()] == [
        set(re.findall(r"[a-z0-9]+", s)) for s in _cut(text)
    ]
    assert list(block.raw_statements) == _STATEMENT.split(text)
    assert block.folded_words == set(re.findall(r"[^\W\d_]+", text.casefold()))
    assert reading(text) is block  # read once


@given(_BLOCK)
def test_the_rules_findings_of_a_block_are_as_they_were(text: str) -> None:
    block = reading(text)
    assert conditions._excepts(block) == any(
        re.search(rf"\b{w}\b", block.flat) for _, w in conditions._REVERSED
    )
    statements = [s for s in _cut(text) if s]
    assert [s for s, _ in exclusive._statements(block)] == statements
    assert [set(t) for _, t in exclusive._statements(block)] == [
        set(exclusive._TOKEN.findall(s)) for s in statements
    ]
    assert daykinds._all_counts(block) == set().union(*map(daykinds._counts, statements))
    raw = [s for s in _STATEMENT.split(text) if s.strip()]
    said = links._said(block)
    assert [s.content for s in said] == [links._content(s) for s in raw]
    assert [s.causal for s in said] == [links._CAUSAL.search(s) is not None for s in raw]
    for one, s in zip(said, raw, strict=True):
        swap = links._SWAP.search(s)
        assert (one.swapped is None) == (swap is None)
        if swap is not None and one.swapped is not None:
            assert one.swapped == (
                frozenset(links._content(s[: swap.start()])),
                frozenset(links._content(s[swap.end() :])),
            )
