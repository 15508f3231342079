"""A number moved between two parallel parts of one statement is refused; each part's own
claim, and a coordination of bare names, still stand (gate/parallel.py)."""

from __future__ import annotations

import pytest

from tests.gating import verdict

SHIPPING = "Online orders ship in 2 days; phone orders ship in 5 days."
FARES = "Adults pay 10 euros and children pay 5 euros."
PLANS = "The Pro plan costs $8 per month, the Team plan costs $12 per user per month."
DELIVERY = "Standard delivery takes 3 to 5 working days, and express delivery takes 1 working day."


@pytest.mark.parametrize(
    ("block", "sentence"),
    [
        (SHIPPING, "Online orders ship in 5 days."),
        (FARES, "Adults pay 5 euros."),
        ("Adults pay 10 euros and children 5 euros.", "Adults pay 5 euros."),
        (PLANS, "The Team plan costs $8 per month."),
        (DELIVERY, "Express delivery takes 3 to 5 working days."),
    ],
)
def test_a_number_said_of_the_parallel_part_is_refused(block: str, sentence: str) -> None:
    ok, why = verdict([block, "Our office is in Leeds."], sentence, 1)
    assert not ok
    assert "is said of" in why


@pytest.mark.parametrize(
    ("block", "sentence"),
    [
        (SHIPPING, "Phone orders ship in 5 days."),
        (SHIPPING, "Online orders ship in 2 days."),
        (FARES, "Children pay 5 euros."),
        (PLANS, "The Team plan costs $12 per user per month."),
        (DELIVERY, "Express delivery takes 1 working day."),
        (DELIVERY, "Standard delivery takes 3 to 5 working days."),
        ("We are open Monday and Tuesday from 9 am.", "We are open on Monday from 9 am."),
        ("Adults and children pay 5 euros.", "Children pay 5 euros."),
    ],
)
def test_each_part_still_says_its_own(block: str, sentence: str) -> None:
    ok, why = verdict([block, "Our office is in Leeds."], sentence, 1)
    assert ok, why
