"""How a sentence links its clauses (gate/links.py) and the limits and shares it writes
(gate/binding.py), with the red team's knobs that write them (model/redteam_links.py): on
blocks of another domain than the fixtures, each edit fails and a faithful one passes."""

from __future__ import annotations

import random

import pytest

from stream_rag.gate.links import unlinked
from stream_rag.model.passages import block_sentences
from stream_rag.model.redteam import Scene
from stream_rag.model.redteam_links import LINKS

from .gating import verdict

POOL = (
    "The outdoor pool opens at 7 am. Lanes can be booked up to 2 days ahead. Children swim "
    "at 50% of the adult price. Late bookings get a voucher instead of a refund. Lockers "
    "cost 1 euro. The old slide was removed in 2019."
)
STUDIO = (
    "The studio is closed on Sundays because the cleaners come then. Mats are free. "
    "Bring your member card to book a lane."
)
BLOCKS = (POOL, STUDIO)


def judge(sentence: str, block: int) -> tuple[bool, str]:
    return verdict(BLOCKS, sentence, block)


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("The outdoor pool opens at 7 am, so lockers cost 1 euro.", 1),  # a cause not given
        ("Lockers cost 1 euro because the outdoor pool opens at 7 am.", 1),
        ("Late bookings get a refund instead of a voucher.", 1),  # the sides traded
        ("If lockers cost 1 euro, the outdoor pool opens at 7 am.", 1),  # a condition added
        ("The outdoor pool opens at 7 am, if lockers cost 1 euro.", 1),
        ("Lanes can be booked 2 days ahead.", 1),  # the limit dropped
        ("Children swim at a third of the adult price.", 1),  # another share
        ("Lockers cost 1 euro so that the outdoor pool opens at 7 am.", 1),  # a purpose not given
        ("Mats are free in order to book a lane.", 2),
        # ", so on <a time>" gives a consequence; only "and so on" ends a list
        ("Lockers cost 1 euro, so on weekdays the outdoor pool opens at 7 am.", 1),
    ],
)
def test_a_link_or_limit_the_block_does_not_write_fails(sentence: str, block: int) -> None:
    ok, detail = judge(sentence, block)
    assert not ok, detail


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("The studio is closed on Sundays because the cleaners come then.", 2),
        ("The outdoor pool opens at 7 am, and lockers cost 1 euro.", 1),
        ("Late bookings get a voucher instead of a refund.", 1),
        ("Lanes can be booked at most 2 days ahead.", 1),
        ("Children swim at half the adult price.", 1),
        ("Bring your member card in order to book a lane.", 2),  # the block's "to", spelt out
        ("Bring your member card so that you can book a lane.", 2),
        ("Lockers cost 1 euro, lanes can be booked up to 2 days ahead, and so on.", 1),
    ],
)
def test_a_faithful_link_passes(sentence: str, block: int) -> None:
    ok, detail = judge(sentence, block)
    assert ok, detail


@pytest.mark.parametrize("family", sorted(LINKS))
def test_each_family_writes_false_edits_and_its_controls_are_true(family: str) -> None:
    own = block_sentences(POOL)
    made = [
        o
        for s in own
        for o in LINKS[family](Scene(1, s, own, {1: POOL, 2: STUDIO}, random.Random(0)))
    ]
    assert any(o.false for o in made), family
    for option in made:
        ok, detail = judge(option.text, 1)
        assert ok != option.false, (option, detail)


FERRY = (
    "The ferry stopped running in 2021. Its engine failed in 2020. The harbour café shut in "
    "May. Launch delays hit the yard in April. The new quay is due to open in June. The "
    "museum has hosted 40 exhibitions. It opened in 1998."
)


@pytest.mark.parametrize(
    "sentence",
    [
        # "since" before a clause, "due to" before a noun: a cause no statement gives.
        "The ferry stopped running in 2021 since its engine failed in 2020.",
        "Since its engine failed in 2020, the ferry stopped running in 2021.",
        "The harbour café shut in May due to launch delays.",
        "The harbour café shut in May due to the new quay.",
    ],
)
def test_since_a_clause_or_due_to_a_noun_is_a_cause(sentence: str) -> None:
    ok, detail = verdict((FERRY,), sentence, 1)
    assert not ok, detail


@pytest.mark.parametrize(
    "sentence",
    [
        "The museum has hosted 40 exhibitions since its opening in 1998.",
        "The new quay is due to open in June.",
    ],
)
def test_since_a_possessive_noun_or_is_due_to_open_is_time(sentence: str) -> None:
    ok, detail = verdict((FERRY,), sentence, 1)
    assert ok, detail


@pytest.mark.parametrize(
    "since",
    ["since the mid-1950s", "since the early 1950s", "since the 1950s", "since mid-1954"],
)
def test_since_a_decade_is_time(since: str) -> None:
    # A decade or year after "since" tells time, as real answers write it (BEGIN).
    assert unlinked(f"Ferries have crossed the strait {since}.", [FERRY]) is None
    assert unlinked("Ferries have crossed the strait since the quay opened.", [FERRY])


GRANTS = (
    "The council met on 4 March. It will pay the grants to 12 schools in May. The grants "
    "total 2 million euros. The hall shut in April. Its roof leaked in March."
)


@pytest.mark.parametrize(
    ("sentence", "cause"),
    [
        # "due to be" schedules, whatever stands before it; "being" and a noun give a cause.
        ("The grants, due to be paid to 12 schools in May, total 2 million euros.", False),
        ("The grants due to be paid in May total 2 million euros.", False),
        ("The hall shut in April due to being unsafe.", True),
        ("The hall shut in April due to the roof.", True),
    ],
)
def test_due_to_be_is_a_schedule(sentence: str, cause: bool) -> None:
    assert (unlinked(sentence, [GRANTS]) is not None) == cause


CAUSED = [
    "The bonus fees are due to be distributed to the 55 teams. The match was cancelled due to rain."
]


@pytest.mark.parametrize(
    "sentence",
    [
        "The bonus fees are distributed to the 55 teams due to rain.",  # another statement's cause
        "The match was cancelled due to the bonus fees.",  # the cause replaced
        "The match was cancelled because of the bonus fees.",
    ],
)
def test_a_cause_the_blocks_give_of_something_else_is_refused(sentence: str) -> None:
    assert unlinked(sentence, CAUSED) is not None


@pytest.mark.parametrize(
    "sentence",
    [
        "The match was cancelled due to rain.",
        "Because of rain, the match was cancelled.",
        # A cause put first after an answer's opening: its sides are the two after the link.
        "Yes, and due to rain, the match was cancelled.",
        "Well, because of rain, the match was cancelled.",
    ],
)
def test_the_blocks_own_cause_passes(sentence: str) -> None:
    assert unlinked(sentence, CAUSED) is None


@pytest.mark.parametrize(
    "sentence",
    [
        "Yes, due to the bonus fees, the match was cancelled.",  # the cause replaced
        "Because of rain, the bonus fees are distributed to the 55 teams.",  # another's cause
        "Yes, due to rain, the 55 teams were paid.",
    ],
)
def test_a_cause_put_first_is_held_to_both_its_sides(sentence: str) -> None:
    assert unlinked(sentence, CAUSED) is not None


SEASON = (
    "The derby was postponed due to snow. The cup final is scheduled for 12 May. "
    "The new stand will be opened in August. The coach was sacked in March."
)


@pytest.mark.parametrize(
    "sentence",
    [
        "The derby was due to be postponed.",  # what happened, said as a plan
        "The coach was due to be sacked in March.",
        "The derby is due to be postponed due to snow.",
    ],
)
def test_what_happened_said_as_a_plan_fails(sentence: str) -> None:
    assert unlinked(sentence, [SEASON]) is not None
    ok, detail = verdict((SEASON,), sentence, 1)
    assert not ok, detail


@pytest.mark.parametrize(
    "sentence",
    [
        "The new stand is due to be opened in August.",  # "will": a plan
        "The cup final is due to be played on 12 May.",  # "scheduled"
        "The derby was postponed due to snow.",  # a cause the block gives
    ],
)
def test_a_plan_the_block_states_passes(sentence: str) -> None:
    assert unlinked(sentence, [SEASON]) is None
