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
