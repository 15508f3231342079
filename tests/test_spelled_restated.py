"""Restatements the gate read too literally and false edits beside them: a number in words
changed or moved between a list's items still fails (a ferry line, a library); British
spellings and the plural of a noun in "-ing" restate the word (a gym, a railway)."""

from __future__ import annotations

import pytest

from .gating import verdict

FERRY = [
    "Crossings take 40 minutes to Isla Verde, 2 hours to Porto Alto and 5 hours to Cabo Norte.",
    "Bicycles travel free. Cars pay 30 euros per crossing.",
]
LIBRARY = [
    "Members may borrow up to twelve books, 3 films and 2 games at a time.",
]


@pytest.mark.parametrize(
    ("blocks", "sentence"),
    [
        (
            FERRY,
            "Crossings take 40 minutes to Isla Verde, 2 hours to Porto Alto and six hours to "
            "Cabo Norte.",
        ),
        (
            FERRY,
            "Crossings take 40 minutes to Isla Verde, 5 hours to Porto Alto and two hours to "
            "Cabo Norte.",
        ),
        (LIBRARY, "Members may borrow up to 12 books, two films and three games at a time."),
        (LIBRARY, "Members may borrow up to 12 books, three films and four games at a time."),
    ],
)
def test_a_spelled_number_changed_or_moved_still_fails(blocks: list[str], sentence: str) -> None:
    assert not verdict(blocks, sentence, 1)[0]


# Word forms the stemmer read apart: British "cancelled" (as "cancell") and the plural of a
# noun in "-ing" ("bookings" as "booking" where "booking" is "book").
GYM = [
    "Members can cancel a class booking up to 12 hours before it starts.",
    "Passengers who travel with a bicycle must label it with their name.",
]


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Class bookings may be cancelled up to 12 hours before the class starts.", 1),
        ("Passengers travelling with a bicycle must have it labelled with their name.", 2),
    ],
)
def test_a_british_spelling_or_a_plural_restates_the_word(sentence: str, block: int) -> None:
    ok, why = verdict(GYM, sentence, block)
    assert ok, why


def test_a_negated_restatement_still_fails() -> None:
    sentence = "Class bookings cannot be cancelled up to 12 hours before the class starts."
    assert not verdict(GYM, sentence, 1)[0]


MEMBERSHIPS = [
    "Gym memberships\n\n"
    "Basic: Classes 4 a month, Price on a 12-month plan 14 euros, Price on a 1-month plan 17 "
    "euros.\n"
    "Plus: Classes 12 a month, Price on a 12-month plan 20 euros, Price on a 1-month plan 24 "
    "euros."
]


@pytest.mark.parametrize(
    ("sentence", "faithful"),
    [
        # another row's number, written in words, in the place of the row's own
        (
            "Basic: Classes 4 a month, Price on a 12-month plan twenty-four euros, Price on a "
            "1-month plan 17 euros.",
            False,
        ),
        (
            "Basic: Classes 4 a month, Price on a 12-month plan fourteen euros, Price on a "
            "1-month plan 17 euros.",
            True,
        ),
        ("Basic: Classes four a month, Price on a 12-month plan 14 euros.", True),
    ],
)
def test_a_number_in_words_of_another_row_in_the_rows_slot_fails(
    sentence: str, faithful: bool
) -> None:
    ok, why = verdict(MEMBERSHIPS, sentence, 1)
    assert ok == faithful, why
