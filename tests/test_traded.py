"""Two numbers of a statement traded (gate/traded.py): each is a number the span states, so
no count of them tells; the clause fails, a faithful restatement and one of the statement's
parts in another order pass. Blocks of a domain no fixture or benchmark uses."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from .gating import verdict

TEMPLATES = (
    # (the statement, its numbers traded, its parts in another order)
    (
        "The {a}:15 ferry arrives at {b}:40.",
        "The {b}:40 ferry arrives at {a}:15.",
        "The {a}:15 ferry arrives at {b}:40.",
    ),
    (
        "A {a}-minute lesson costs {b} euros.",
        "A {b}-minute lesson costs {a} euros.",
        "A {a}-minute lesson costs {b} euros.",
    ),
    (
        "A {a}-night stay costs {b} euros and a week costs 400 euros.",
        "A {b}-night stay costs {a} euros and a week costs 400 euros.",
        "A week costs 400 euros and a {a}-night stay costs {b} euros.",
    ),
)


@settings(max_examples=40, deadline=None)
@given(
    template=st.sampled_from(TEMPLATES),
    a=st.integers(min_value=2, max_value=9),
    b=st.integers(min_value=11, max_value=23),
)
def test_two_numbers_traded_fail_and_the_statement_reordered_passes(
    template: tuple[str, str, str], a: int, b: int
) -> None:
    assume(a != b)
    statement, traded, reordered = (t.format(a=a, b=b) for t in template)
    block = f"Harbour guide\nThe harbour office opens at 8:00. {statement}"
    ok, why = verdict([block], traded, 1)
    assert not ok, (traded, why)
    for faithful in (statement, reordered):
        ok, why = verdict([block], faithful, 1)
        assert ok, (faithful, why)


@settings(max_examples=30, deadline=None)
@given(
    early=st.integers(min_value=40, max_value=90),
    late=st.integers(min_value=5, max_value=30),
    fee=st.integers(min_value=3, max_value=9),
    desk=st.integers(min_value=12, max_value=40),
)
def test_a_number_in_the_place_of_another_with_the_same_words_after_fails(
    early: int, late: int, fee: int, desk: int
) -> None:
    # The words after both numbers are alike ("minutes before the show"): only the words on
    # either side taken together say which place a number stands in.
    block = (
        f"Theatre visits\nThe doors open {early} minutes before the show and close {late} "
        f"minutes before the show. Booked online, each ticket costs {fee} pounds less; bought "
        f"at the desk, a ticket costs {desk} pounds."
    )
    for false in (
        f"The doors open {late} minutes before the show and close {early} minutes before the show.",
        f"Booked online, each ticket costs {desk} pounds less.",
    ):
        ok, why = verdict([block], false, 1)
        assert not ok, (false, why)
    for faithful in (
        f"The doors close {late} minutes before the show and open {early} minutes before the show.",
        f"The doors open {early} minutes before the show.",
        f"The doors close {late} minutes before the show.",
        f"Bought at the desk, a ticket costs {desk} pounds; booked online, each ticket costs "
        f"{fee} pounds less.",
    ):
        ok, why = verdict([block], faithful, 1)
        assert ok, (faithful, why)
