"""A modifier in the place of the cited span's (gate/swaps.py): one no cited block writes
stands for the span's only as the same word, an inflection or a listed synonym (WordNet);
on blocks of other domains than the fixtures, each swap failing and a synonym passing."""

from __future__ import annotations

import pytest

from .gating import verdict

AIRPORT = (
    "Passengers must show a printed boarding pass at the gate. Large suitcases go to the "
    "oversize desk. The current timetable is posted in the main hall. Lost items are kept "
    "at the information desk for 14 days. Parking is free for at least 20 minutes. Receipts "
    "are sent to your email address."
)
LIBRARY = (
    "Members can borrow six books at a time. The reading room is reserved for quiet study. "
    "Some events are organised for charitable causes. Each member gets a personal locker."
)
BLOCKS = (AIRPORT, LIBRARY)


def judge(sentence: str, block: int) -> tuple[bool, str]:
    return verdict(BLOCKS, sentence, block)


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Passengers must show a digital boarding pass at the gate.", 1),
        ("Small suitcases go to the oversize desk.", 1),  # an opposite: the claim checks'
        ("Passengers must show a mobile boarding pass at the gate.", 1),
        ("The next timetable is posted in the main hall.", 1),
        ("The current timetable is posted in the east hall.", 1),
        ("Parking is free for at most 20 minutes.", 1),
        ("Parking is free for roughly 20 minutes.", 1),
        ("The reading room is reserved for weekly study.", 2),
        ("Each member gets a spacious locker.", 2),
    ],
)
def test_a_word_in_the_spans_place_that_is_no_synonym_fails(sentence: str, block: int) -> None:
    ok, why = judge(sentence, block)
    assert not ok, why


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Passengers must show a printed boarding pass at the gate.", 1),  # the span's words
        ("Big suitcases go to the oversize desk.", 1),  # one synset
        ("Sizeable suitcases go to the oversize desk.", 1),  # an adjective similar to it
        ("Passengers must show a printed boarding card at the gate.", 1),  # head: the overlap's
        ("Receipts are sent to your e-mail address.", 1),  # written with a hyphen
        ("Members can borrow six books at once.", 2),  # no modifier swapped
    ],
)
def test_the_spans_word_a_synonym_or_a_derivation_passes(sentence: str, block: int) -> None:
    ok, why = judge(sentence, block)
    assert ok, why


def test_the_reason_names_both_words() -> None:
    ok, why = judge("Passengers must show a digital boarding pass at the gate.", 1)
    assert not ok
    assert "'digital' stands where the span says 'printed'" in why
