"""A number written in words where the block writes digits, and the reverse, restates it
(gate/support.py reads "five" as the number 5): in a list of values each said of its own
thing, a spelled number is no item added to the list. Blocks of a ferry line and a library;
each restatement passes and a number moved or changed still fails."""

from __future__ import annotations

import pytest

from stream_rag.gate.support import read_words

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
            "Crossings take 40 minutes to Isla Verde, 2 hours to Porto Alto and five hours to "
            "Cabo Norte.",
        ),
        (
            FERRY,
            "Crossings take forty minutes to Isla Verde, two hours to Porto Alto and 5 hours "
            "to Cabo Norte.",
        ),
        (LIBRARY, "Members may borrow up to 12 books, three films and two games at a time."),
    ],
)
def test_a_number_in_words_in_a_list_restates_the_digits(blocks: list[str], sentence: str) -> None:
    ok, why = verdict(blocks, sentence, 1)
    assert ok, why


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


def test_spelled_numbers_are_read_as_their_value() -> None:
    text = "Twenty-five seats, a desk and three lamps"
    keys = [w.key for w in read_words(text, text.casefold())]
    assert keys == ["#25", "seat", "desk", "#3", "lamp"]


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
