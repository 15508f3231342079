"""The last shapes the fake's knobs got past the clause checks (gate/unsaid.py, swaps.py,
links.py), on blocks of other domains than the sample knowledge base: another statement's
subject before the span's whole predicate, a subject narrowed by another statement's modifier,
an unknown word as a subject, a list item of words already said, the span's prepositional
object made its subject, a head noun swapped before a comma, and an opening condition joining
statements that set none. Each edit fails; the faithful restatement beside it passes."""

from __future__ import annotations

import pytest

from .gating import verdict

MUSEUM = (
    "All exhibits are insured against fire and theft. Donated paintings are restored in the "
    "east wing. The audio guide can be borrowed at the front desk. Wikiguide covers every "
    "room of the museum."
)
LIBRARY = (
    "The reading room offers up to 4 study desks, 20 lockers and wifi on every floor.\n"
    "If a book is not on the shelf, first ask that both branches check the same catalogue. "
    "The branch code is printed on each library card."
)
CLUB = (
    "A guest pass between any two partner clubs in Region A costs £6.50. A day pass in Region A "
    "costs £9 and is valid until midnight.\n"
    "Members get priority booking for courts.\n"
    "Lockers are free for members.\n"
    "Courts take 2 days to book for members, 3 days for guests and 5 days online."
)
OTHER = "Unrelated block about the weather in spring."


def judge(block: str, sentence: str) -> tuple[bool, str]:
    return verdict((block, OTHER), sentence, 1)


@pytest.mark.parametrize(
    ("block", "sentence"),
    [
        # another statement's words put before the span's whole predicate
        (MUSEUM, "Wikiguide covers every room can be borrowed at the front desk."),
        # the span's subject narrowed to what another statement names
        (MUSEUM, "Donated exhibits are insured against fire and theft."),
        # a subject no lemma table knows ("Wikiguide"), another statement's
        (MUSEUM, "Wikiguide can be borrowed at the front desk."),
        # a list item of words the clause has already said
        (LIBRARY, "The reading room offers up to 4 study desks, 20 lockers, wifi and three rooms."),
        # a head noun before a comma swapped for a word of no cited block and no synonym
        (
            LIBRARY,
            "If a book is not on the shelf, first ask that both branches check the same menu, "
            "then wait.",
        ),
        (
            LIBRARY,
            "If a book is not on the stairs, first ask that both branches check the same "
            "catalogue.",
        ),
        # the span's prepositional object made its subject
        (CLUB, "Any two partner clubs in Region A cost £6.50."),
        # a number in words moved between coordinated parts (the digits' rule, gate/parallel.py)
        (CLUB, "Courts take 2 days to book for members, 3 days for guests and three days online."),
        (CLUB, "Courts take three days to book for members."),
        # an opening condition joining statements that set none
        (CLUB, "If members get priority booking for courts, lockers are free for members."),
    ],
)
def test_the_edit_fails(block: str, sentence: str) -> None:
    ok, why = judge(block, sentence)
    assert not ok, why


@pytest.mark.parametrize(
    ("block", "sentence"),
    [
        (MUSEUM, "The audio guide can be borrowed at the front desk."),
        (MUSEUM, "All exhibits are insured against fire and theft."),
        (MUSEUM, "Exhibits are insured against fire and theft."),
        (MUSEUM, "Wikiguide covers every room of the museum."),
        (
            LIBRARY,
            "The reading room offers 20 lockers, wifi on every floor and up to 4 study desks.",
        ),
        (
            LIBRARY,
            "If a book is not on the shelf, first ask that both branches check the same catalogue.",
        ),
        (CLUB, "A guest pass between any two partner clubs in Region A costs £6.50."),
        (CLUB, "Members get priority booking for courts."),
        (CLUB, "A day pass in Region A costs £9."),
        (CLUB, "Courts take three days to book for guests."),
        # an opening condition its statement sets, and a later clause citing another block
        (
            LIBRARY,
            "If a book is not on the shelf, first ask that both branches check the catalogue.",
        ),
    ],
)
def test_the_faithful_restatement_passes(block: str, sentence: str) -> None:
    ok, why = judge(block, sentence)
    assert ok, why
