"""The search for coordinated names ("Basic and Pro") finds what `re`'s own search of the same
pattern finds, on short questions and on long runs of names (where `re` retried from every
word of the run); its cost was measured once (docs/decisions/names-search-question-linear.md),
not here."""

from __future__ import annotations

import random

import pytest

from stream_rag.language.asks import _NAMES, _search_names, asks

_VOCABULARY = (
    "Abc", "Pro", "Basic", "the", "The", "and", "or", "Or", "AND", "plan", "X1", "X1'", "a1-b",
    "x200", "iOS16", "Wi-Fi", "don't", "O’Neil", "Éa", "é", "9a", "_A", "A_b", "-A", "'A",
    ",", ".", "?", "\n", "the,", ",and",
)  # fmt: skip


def _found(match: object) -> object:
    import re

    assert match is None or isinstance(match, re.Match)
    return None if match is None else (match.span(), match.groupdict())


def _clause(rng: random.Random, words: int) -> str:
    separators = ("", " ", " ", "  ", ", ")
    return "".join(rng.choice(_VOCABULARY) + rng.choice(separators) for _ in range(words))


def test_the_search_finds_what_re_finds_on_random_clauses() -> None:
    rng = random.Random(20261201)
    found = 0
    for _ in range(5000):
        clause = _clause(rng, rng.randint(1, 30))
        expected = _found(_NAMES.search(clause))
        assert _found(_search_names(clause)) == expected, clause
        found += expected is not None
    assert found > 300  # the clauses do coordinate names, not only fail to


@pytest.mark.parametrize(
    "clause",
    [
        ("Abc " * 1000)[:4000],
        ("Abc, " * 800)[:4000],
        " ".join(f"X{i}" for i in range(900))[:4000],
        ("Abc " * 999) + "and Pro",
        ("Abc " * 999) + "and X1'",
        "What does " + ("the Abc, " * 440) + "or the Pro cost?",
        ("Is the Pro plan cheaper than the Basic one? " * 90)[:4000],
    ],
)
def test_the_search_finds_what_re_finds_on_long_runs_of_names(clause: str) -> None:
    assert _found(_search_names(clause)) == _found(_NAMES.search(clause))


def test_long_random_questions_split_as_before() -> None:
    rng = random.Random(7)
    for _ in range(20):
        clause = _clause(rng, 600)
        assert _found(_search_names(clause)) == _found(_NAMES.search(clause))
    names = "Abc " * 900
    assert asks(f"What do the {names}and Pro cost?", None) == [
        f"What do the {names.rstrip()} cost?",
        "What do Pro cost?",
    ]
