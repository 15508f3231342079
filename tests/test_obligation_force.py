"""A modal or a word of duty in the place of the statement's one of another force
(gate/obligation.py), where the statement writes both kinds ("may drop off ... and must
collect"), so no count of the kinds tells; a prohibition made advice ("not allowed" as "not
recommended"). Blocks of a domain no fixture or benchmark uses."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from .gating import verdict

FORCES = {
    "a duty": ("must", "shall"),
    "a permission": ("may", "can"),
    "advice": ("should",),
}
ACTIONS = (
    ("bring their own life jacket", "return the kayak by 18:00"),
    ("store bags in the boathouse", "sign the safety form at the desk"),
    ("launch from the north jetty", "wear a wetsuit in April"),
)


@settings(max_examples=40, deadline=None)
@given(
    actions=st.sampled_from(ACTIONS),
    forces=st.lists(st.sampled_from(sorted(FORCES)), min_size=2, max_size=2, unique=True),
    data=st.data(),
)
def test_a_modal_of_another_force_in_its_place_fails(
    actions: tuple[str, str], forces: list[str], data: st.DataObject
) -> None:
    first, second = (data.draw(st.sampled_from(FORCES[f])) for f in forces)
    statement = f"Paddlers {first} {actions[0]} and {second} {actions[1]}."
    block = f"Kayak hire\nKayaks are hired by the hour. {statement} The boathouse opens at 9:00."
    ok, why = verdict([block], statement, 1)
    assert ok, why
    other = data.draw(st.sampled_from([f for f in FORCES if f != forces[1]]))
    swapped = data.draw(st.sampled_from(FORCES[other]))
    edited = f"Paddlers {first} {actions[0]} and {swapped} {actions[1]}."
    ok, why = verdict([block], edited, 1)
    assert not ok, (edited, why)
    same = data.draw(st.sampled_from(FORCES[forces[1]]))
    ok, why = verdict([block], f"Paddlers {first} {actions[0]} and {same} {actions[1]}.", 1)
    assert ok, why


BLOCK = (
    "On the water\nGlass bottles are not allowed on the jetty. Swimming is prohibited near the "
    "slipway. Paddlers cannot take dogs on the boats."
)


def test_a_prohibition_made_advice_fails() -> None:
    for edited in (
        "Glass bottles are not recommended on the jetty.",
        "Swimming is not advised near the slipway.",
        "Paddlers should not take dogs on the boats.",
    ):
        ok, why = verdict([BLOCK], edited, 1)
        assert not ok, (edited, why)
    for faithful in (
        "Glass bottles are not permitted on the jetty.",
        "Swimming is prohibited near the slipway.",
        "Paddlers can't take dogs on the boats.",
    ):
        ok, why = verdict([BLOCK], faithful, 1)
        assert ok, (faithful, why)


def test_before_not_a_prohibition_and_a_duty_waived_are_told_apart() -> None:
    block = (
        "Kayak hire\nKayaks must not be taken past the weir. Paddlers need not book in "
        "advance. Children need to wear a helmet."
    )
    for edited in (
        "Kayaks need not be taken past the weir.",
        "Paddlers must not book in advance.",
        "Paddlers should not book in advance.",
    ):
        ok, why = verdict([block], edited, 1)
        assert not ok, (edited, why)
    for faithful in ("Paddlers do not need to book in advance.", "Children must wear a helmet."):
        ok, why = verdict([block], faithful, 1)
        assert ok, (faithful, why)


# "will" says it happens; "can" and "may" that it is possible; "will not" that it does not.
CERTAINTY = [
    "Gym and pool\nYour booking app stays open for 30 days after you cancel, so you can still "
    "sign in. Towels are free at the desk.",
    "Heating help\nIf the boiler is noisy or will not start, switch it off at the wall and call "
    "the landlord. Radiators are bled once a year.",
]


def test_will_in_the_place_of_a_possibility_and_back_fails() -> None:
    for sentence in (
        "Your booking app stays open for 30 days after you cancel, so you will still sign in.",
        "If the boiler is noisy or may not start, switch it off at the wall and call the landlord.",
    ):
        ok, why = verdict(CERTAINTY, sentence, 1 if "booking" in sentence else 2)
        assert not ok, (sentence, why)
    for sentence in (
        "Your booking app stays open for 30 days after you cancel, so you may still sign in.",
        "If the boiler is noisy or won't start, switch it off at the wall and call the landlord.",
    ):
        ok, why = verdict(CERTAINTY, sentence, 1 if "booking" in sentence else 2)
        assert ok, (sentence, why)
