"""Numbers paired anew across two coordinated parts (gate/traded.py): "a 60-minute lesson for 5
euros" of "a 30-minute lesson for 5 euros or a 60-minute lesson for 9 euros" states only the
span's numbers, each with its unit, but one part's length at the other's price. Each part
restated, both in either order, and the two parts listed apart still pass. Blocks of a domain
no fixture or benchmark uses."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from .gating import verdict


def _block(short: int, long: int, cheap: int, dear: int) -> str:
    return (
        f"Swimming lessons\nLearners can book a {short}-minute lesson for {cheap} euros or a "
        f"{long}-minute lesson for {dear} euros. Lessons are held in the small pool."
    )


_NUMBERS = {
    "short": st.integers(min_value=15, max_value=40),
    "long": st.integers(min_value=45, max_value=90),
    "cheap": st.integers(min_value=4, max_value=12),
    "dear": st.integers(min_value=13, max_value=30),
}


@settings(max_examples=30, deadline=None)
@given(**_NUMBERS)
def test_a_length_said_at_the_other_parts_price_fails(
    short: int, long: int, cheap: int, dear: int
) -> None:
    assume(len({short, long, cheap, dear}) == 4)
    block = _block(short, long, cheap, dear)
    for sentence in (
        f"Learners can book a {long}-minute lesson for {cheap} euros or a {short}-minute "
        f"lesson for {dear} euros.",
        f"Learners can book a {short}-minute lesson for {dear} euros or a {long}-minute "
        f"lesson for {cheap} euros.",
        f"Learners can book a {long}-minute lesson for {cheap} euros.",
    ):
        ok, why = verdict([block], sentence, 1)
        assert not ok, (sentence, why)


@settings(max_examples=30, deadline=None)
@given(**_NUMBERS)
def test_each_part_restated_passes(short: int, long: int, cheap: int, dear: int) -> None:
    assume(len({short, long, cheap, dear}) == 4)
    block = _block(short, long, cheap, dear)
    for sentence in (
        f"Learners can book a {short}-minute lesson for {cheap} euros or a {long}-minute "
        f"lesson for {dear} euros.",
        f"Learners can book a {long}-minute lesson for {dear} euros or a {short}-minute "
        f"lesson for {cheap} euros.",
        f"Learners can book a {long}-minute lesson for {dear} euros.",
        f"Learners can book a {short}-minute lesson for {cheap} euros.",
    ):
        ok, why = verdict([block], sentence, 1)
        assert ok, (sentence, why)
