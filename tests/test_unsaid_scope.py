"""A universal said of another noun than the span's ("Any cot ..." where the span says "A cot
can be put in any double room"), and a restriction lifted ("not only with an adult" where the
span says "only with an adult"), and a phone number's digit groups reordered ("0199 555 020" of
"020 555 0199"): shapes the fake's knobs got past on knowledge bases of other domains
(loadtests/answers/hotel_kb, clinic_kb), tested here on blocks of others still (gate/unsaid.py).
Each edit fails; the faithful restatements beside it pass."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .gating import verdict

OTHER = "Unrelated block about the weather in spring."


def judge(block: str, sentence: str) -> tuple[bool, str]:
    return verdict((block, OTHER), sentence, 1)


FERRY = "A folding bike can be taken on any morning ferry without a ticket."
POOL = "Children under 12 may use the slide only with a lifeguard present and may not dive."
PLANS = "Every plan includes phone support. Pro and Team customers get live chat."
SHOP = "Repairs are done on weekdays only, and the shop is closed on holidays."


@pytest.mark.parametrize(
    ("block", "sentence"),
    [
        (FERRY, "Any bike can be taken on any morning ferry without a ticket."),
        (FERRY, "Every bike can be taken on any morning ferry without a ticket."),
        (POOL, "Children under 12 may use the slide not only with a lifeguard present."),
        (SHOP, "Repairs are done on weekdays not only, and the shop is closed on holidays."),
    ],
)
def test_the_edit_fails(block: str, sentence: str) -> None:
    ok, why = judge(block, sentence)
    assert not ok, why


@pytest.mark.parametrize(
    ("block", "sentence"),
    [
        (FERRY, "A folding bike can be taken on any morning ferry without a ticket."),
        (FERRY, "Any morning ferry takes a folding bike without a ticket."),
        (POOL, "Children under 12 may use the slide only with a lifeguard present."),
        (PLANS, "Every plan includes phone support."),
        (PLANS, "Not only Pro but also Team customers get live chat."),
        (SHOP, "Repairs are done on weekdays only."),
    ],
)
def test_the_restatement_passes(block: str, sentence: str) -> None:
    ok, why = judge(block, sentence)
    assert ok, why


NOUNS = ("scooter", "kayak", "stroller", "guitar", "drone", "tent")
PLACES = ("train", "ferry", "coach", "tram", "shuttle")
USES = ("slide", "sauna", "gym", "climbing wall", "rowing machines")
STAFF = ("an adult", "a trainer", "a lifeguard present", "a guardian")


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(
    st.sampled_from(NOUNS),
    st.sampled_from(PLACES),
    st.sampled_from(("any", "every")),
    st.sampled_from(USES),
    st.sampled_from(STAFF),
)
def test_generated(noun: str, place: str, universal: str, use: str, staff: str) -> None:
    block = f"A small {noun} can be taken on any {place} free of charge."
    assert not judge(
        block, f"{universal.capitalize()} {noun} can be taken on any {place} free of charge."
    )[0]
    assert judge(block, f"A small {noun} can be taken on any {place} free of charge.")[0]
    rule = f"Guests may use the {use} only with {staff} and may not bring food."
    assert not judge(rule, f"Guests may use the {use} not only with {staff}.")[0]
    assert judge(rule, f"Guests may use the {use} only with {staff}.")[0]


HELPDESK = "For lost cards, call the helpdesk on 030 777 2145, open every day until 22:00."


def test_a_phone_numbers_groups_reordered_fail() -> None:
    assert not judge(HELPDESK, "For lost cards, call the helpdesk on 2145 777 030.")[0]
    assert not judge(HELPDESK, "For lost cards, call the helpdesk on 777 030 2145.")[0]
    ok, why = judge(HELPDESK, "For lost cards, call the helpdesk on 030 777 2145.")
    assert ok, why


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(
    st.lists(st.integers(10, 9999), min_size=3, max_size=3, unique=True),
    st.permutations(range(3)),
)
def test_generated_phone_numbers(groups: list[int], order: list[int]) -> None:
    written = " ".join(f"{g:03d}" for g in groups)
    block = f"To book a table at the riverside cafe, ring {written} before noon."
    moved = " ".join(f"{groups[i]:03d}" for i in order)
    ok, why = judge(block, f"To book a table at the riverside cafe, ring {moved} before noon.")
    assert ok == (moved == written), (moved, why)
