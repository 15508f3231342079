"""A sentence holding two statements is held statement by statement (gate/statement_rules.py),
a clause is checked against a statement rather than the question an FAQ asks above it
(gate/support.py align), a condition's time is one word and a universal made "no" is an
opposite (gate/binding.py), one statement's subject before another's predicate is found when
a "but" part follows that predicate (gate/unsaid.py), and a number whose own part is the
number and its unit alone is held to the clause's statement (gate/claimcheck.py), and a
heading is a statement of its own to the sentence rules (gate/reading.py), and a day of
another kind without a count is refused (gate/daykinds.py): each
refuses its edit and passes the faithful sentence. Blocks of domains the benchmarks do not
use (issue 27, the unseen lane's courier_kb found them)."""

from __future__ import annotations

import pytest

from .gating import verdict

POOL = (
    "Lockers cost 1 euro per visit. Bags taken to the pool side must not weigh more than 7 kg. "
    "Bags over the limit are kept at the desk, and the owner is charged a fee of 2 euros."
)
LESSONS = (
    "When is a swim lesson cancelled?\n"
    "A swim lesson is cancelled if fewer than 3 children are booked. Lessons are never "
    "cancelled for rain."
)
TICKETS = (
    "Evening ticket: Valid from 18:00 if bought by 12:00, Price 9 euros, Entry Main gate.\n"
    "Day ticket: Valid all day, Price 15 euros, Entry Any gate."
)
STUDIO = (
    "Class passes expire only after 90 days. Unused lessons are refunded within 14 days of a "
    "request. Members get 10% off every class except yoga, which is not discounted."
)
NURSERY = (
    "Seeds may be posted only in paper envelopes, at most ten packets per order. Bulbs and "
    "tubers are sold in spring but not in autumn. Live trees are never posted."
)
MISSED = (
    "## If you miss a class\n\n"
    "The studio moves you to the next class free of charge, unless the class is full."
)
VISITS = "If the technician cannot get in, the visit is moved to the next working day."
MARINA = (
    "Inside the harbour, mooring between 8:00 and 18:00 is for club members only, except at "
    "the pontoon. Jet skis cannot be given a berth of any kind."
)
# Hard-wrapped as a PDF's or a text file's lines are: a line that runs on in lower case is not a
# statement of its own, so the duty on its first line still binds what the next line says.
GALLERY = (
    "Cloakroom\n\nUmbrellas and walking poles are left at the cloakroom and\nare returned on "
    "exit. Backpacks must be carried on the front or\nleft in a locker at the entrance and "
    "cost 2 euros per day."
)
BLOCKS = (POOL, LESSONS, TICKETS, STUDIO, NURSERY, MISSED, VISITS, MARINA, GALLERY)


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        # The rules of one statement, on the first of two the sentence holds.
        (
            "Bags taken to the pool side need not weigh more than 7 kg. Bags over the limit "
            "are kept at the desk, and the owner is charged a fee of 2 euros.",
            1,
        ),
        (
            "Bags taken to the pool side should not weigh more than 7 kg. Bags over the limit "
            "are kept at the desk, and the owner is charged a fee of 2 euros.",
            1,
        ),
        # The condition dropped, the FAQ's question holding every word left.
        ("A swim lesson is cancelled.", 2),
        # A table row's condition whose time shares its digits with the row's other time.
        ("Evening ticket: Valid from 18:00.", 3),
        # The number of another statement of the block, with the unit both write.
        ("Class passes expire only after 14 days.", 4),
        ("Members get 10% off no class except yoga, which is not discounted.", 4),
        # One statement's subject before another's predicate, which a "but" part follows.
        ("Live trees are sold in spring but not in autumn.", 5),
        # "unless" made "if" under a heading that opens with "If".
        ("The studio moves you to the next class free of charge, if the class is full.", 6),
        # A day of another kind, with no count.
        ("If the technician cannot get in, the visit is moved to the next calendar day.", 7),
        # An exception cut off a claim that ends on "only"; "any" made "no" after a negation.
        ("Inside the harbour, mooring between 8:00 and 18:00 is for club members only.", 8),
        ("Jet skis cannot be given a berth of no kind.", 8),
        # A duty made advice, the wrapped statement's second line restated with it.
        (
            "Backpacks should be carried on the front or left in a locker at the entrance and "
            "cost 2 euros per day.",
            9,
        ),
    ],
)
def test_the_edit_is_refused(sentence: str, block: int) -> None:
    ok, why = verdict(BLOCKS, sentence, block)
    assert not ok, why


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        (
            "Bags taken to the pool side must not weigh more than 7 kg. Bags over the limit "
            "are kept at the desk, and the owner is charged a fee of 2 euros.",
            1,
        ),
        ("Lockers cost 1 euro per visit. Bags over the limit are kept at the desk.", 1),
        ("A swim lesson is cancelled if fewer than 3 children are booked.", 2),
        ("Evening ticket: Valid from 18:00 if bought by 12:00.", 3),
        ("Class passes expire only after 90 days.", 4),
        ("Unused lessons are refunded within 14 days of a request.", 4),
        ("Members get 10% off every class except yoga.", 4),
        ("Bulbs and tubers are sold in spring but not in autumn.", 5),
        ("Bulbs and tubers are sold in spring.", 5),
        ("The studio moves you to the next class free of charge, unless the class is full.", 6),
        ("If the technician cannot get in, the visit is moved to the next business day.", 7),
        (
            "Mooring between 8:00 and 18:00 is only for club members, except at the pontoon.",
            8,
        ),
        ("Jet skis cannot be given a berth of any kind.", 8),
        (
            "Backpacks must be carried on the front or left in a locker at the entrance and "
            "cost 2 euros per day.",
            9,
        ),
        ("Umbrellas and walking poles are left at the cloakroom and are returned on exit.", 9),
    ],
)
def test_the_faithful_sentence_passes(sentence: str, block: int) -> None:
    ok, why = verdict(BLOCKS, sentence, block)
    assert ok, why
