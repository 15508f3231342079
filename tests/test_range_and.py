"""Two numbers joined by "and" are a range's ends only after "between" (gate/places.py): a
list's two statements ("... under 12 and 11 euros for adults") restated in the other order
pass; ends taken from two ranges still fail, with "to" or with "between ... and". Blocks of
a domain no fixture or benchmark uses."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from .gating import verdict


@settings(max_examples=30, deadline=None)
@given(
    age=st.integers(min_value=5, max_value=17),
    child=st.integers(min_value=2, max_value=9),
    adult=st.integers(min_value=10, max_value=30),
)
def test_a_list_of_two_prices_in_the_other_order_passes(age: int, child: int, adult: int) -> None:
    assume(adult != age)
    block = (
        f"Climbing wall\nA session costs {adult} pounds for adults and {child} pounds for "
        f"climbers under {age}. Shoes can be hired at the desk."
    )
    sentence = (
        f"A session costs {child} pounds for climbers under {age} and {adult} pounds for adults."
    )
    ok, why = verdict([block], sentence, 1)
    assert ok, (sentence, why)


@settings(max_examples=30, deadline=None)
@given(
    a=st.integers(min_value=2, max_value=6),
    b=st.integers(min_value=7, max_value=12),
    c=st.integers(min_value=14, max_value=20),
    d=st.integers(min_value=21, max_value=30),
)
def test_ends_of_two_ranges_still_fail(a: int, b: int, c: int, d: int) -> None:
    block = (
        f"Climbing wall\nBeginners' courses take {a} to {b} sessions. Advanced courses take "
        f"between {c} and {d} sessions."
    )
    for sentence in (
        f"Beginners' courses take {a} to {d} sessions.",
        f"Beginners' courses take between {a} and {d} sessions.",
    ):
        ok, why = verdict([block], sentence, 1)
        assert not ok, (sentence, why)
