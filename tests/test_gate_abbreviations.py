"""A title's or an initial's full stop ends no clause and no coordinated part: "Dr. Amir
Haddad" is one name to the clause cutter (gate/clauses.py) and to the coordinated parts
(gate/coordinated.py), as it is to the sentence cutter (gate/boundaries.py)."""

from __future__ import annotations

import pytest

from stream_rag.gate.clauses import clauses
from stream_rag.language.statements import abbreviated, statement_spans, titled

from .gating import verdict

OTHER = "Unrelated block about the weather in spring."
NICKNAME = (
    'Maria Lopez, who goes by "Dr. Rhythm," teaches a free salsa class on Tuesdays and Thursdays.'
)


@pytest.mark.parametrize(
    "sentence",
    [
        "Cats are seen by Dr. Amir Haddad on Mondays.",
        'Salsa classes are taught by Maria "Dr. Rhythm" Lopez.',
        "The talk by Prof. Ines Vidal starts at noon.",
        "Sgt. Ray Kim and Capt. Jo Park lead the drill.",
    ],
)
def test_a_title_ends_no_clause(sentence: str) -> None:
    assert [c.text for c in clauses(f"{sentence} [1]", [OTHER], 1)] == [sentence]


def test_a_sentence_end_still_ends_a_clause() -> None:
    cut = [c.text for c in clauses("The desk is shut. Then ask Mr. Kim. [1]", [OTHER], 1)]
    assert cut == ["The desk is shut.", "Then ask Mr. Kim."]


@pytest.mark.parametrize(
    "sentence",
    [
        'Salsa classes are taught by Maria "Dr. Rhythm" Lopez.',
        'A free salsa class is taught by Maria "Dr. Rhythm" Lopez.',
        'Maria Lopez ("Dr. Rhythm") teaches a free salsa class on Tuesdays.',
    ],
)
def test_a_nickname_with_a_title_is_shown(sentence: str) -> None:
    ok, why = verdict((NICKNAME, OTHER), sentence, 1)
    assert ok, why


def test_a_title_ends_no_statement_of_the_span() -> None:
    # "Dr." cut the span into two statements, so "Maria Lopez" read as another statement's
    # subject before this one's predicate (gate/unsaid.py).
    sentence = "Maria Lopez teaches a free salsa class on Tuesdays."
    assert verdict((NICKNAME, OTHER), sentence, 1)[0]


@pytest.mark.parametrize(
    ("text", "ends"),
    [
        ("Ask Dr. Kim at the desk.", False),
        ("Ask J. Kim at the desk.", False),
        ("Bring pens, e.g. blue ones.", False),
        ("The desk is shut. Ask Mr. Kim.", True),
    ],
)
def test_abbreviated_is_the_statement_cutter_s_rule(text: str, ends: bool) -> None:
    first = text.index(". ")
    assert abbreviated(text, first) is not ends
    assert (len(statement_spans(text)) == 2) is ends


@pytest.mark.parametrize(
    ("block", "sentence"),
    [
        (
            "Vouchers cover most fees, e.g. entry and parking, but not food.",
            "Vouchers cover entry.",
        ),
        (
            "The kit has small parts, for example screws and nuts, and a manual.",
            "The kit has screws and nuts.",
        ),
        ("Dogs need some shots, i.e. rabies and distemper, every year.", "Dogs need rabies shots."),
    ],
)
def test_examples_of_a_part_are_no_part_of_their_own(block: str, sentence: str) -> None:
    # gate/coordinated.py: the examples restate the part before them, so naming them is no mix.
    ok, why = verdict((block, OTHER), sentence, 1)
    assert ok, why


def test_two_parts_around_examples_are_still_told_apart() -> None:
    block = "The gym has heated pools, e.g. a lap pool, and cold showers."
    assert not verdict((block, OTHER), "The gym has cold pools.", 1)[0]
    assert verdict((block, OTHER), "The gym has cold showers.", 1)[0]


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ('Ask "Dr. Drum" at the desk.', True),
        ("Bring pens, e.g. blue ones.", True),
        ("Board through gate B. Cars wait.", False),
        ("The desk is shut. Ask Mr. Kim.", False),
    ],
)
def test_titled_leaves_a_lone_capital_to_end_a_statement(text: str, title: bool) -> None:
    assert titled(text, text.index(". ")) is title
