"""Clause breaks led by spaces are read from a run's first space: the same cuts as trying every
space, which took time quadratic in a run's length (a model can stream 20k spaces)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from stream_rag.gate.clauses import _BREAK

# The pattern as it was: both space-led alternatives tried at every space of a run.
_EVERY_SPACE = re.compile(
    _BREAK.pattern.replace(r"(?:(?<!\s)\s*)?;\s*", r"\s*;\s*", 1).replace(
        r"|(?<!\s)\s+(?:but|whereas|although|though)\s+",
        r"|\s+(?:but|whereas|although|though)\s+",
        1,
    ),
    re.IGNORECASE,
)
_PIECES = [
    " ",
    "  ",
    "\t",
    "\n",
    ";",
    ",",
    ".",
    "a",
    "Fee",
    "but",
    " but ",
    " though ",
    "e.g.",
    ", and ",
]


def test_the_oracle_is_the_pattern_as_it_was() -> None:
    assert r"(?<!\s)" not in _EVERY_SPACE.pattern.split("|(?-i:")[0]
    assert _EVERY_SPACE.pattern.endswith(r"|\s+(?:but|whereas|although|though)\s+")


@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_breaks_fall_where_they_did(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert _BREAK.split(text) == _EVERY_SPACE.split(text)


def test_a_long_run_of_spaces_is_one_break() -> None:
    text = "Fees apply" + " " * 20_000 + "; refunds do not."
    assert _BREAK.split(text) == ["Fees apply", "refunds do not."]
    assert _BREAK.split("Open daily" + " " * 20_000 + "but closed in May.") == [
        "Open daily",
        "closed in May.",
    ]
