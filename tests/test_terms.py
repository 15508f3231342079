"""The content terms (language/terms.py): the stemmer."""

from __future__ import annotations

import pytest

from stream_rag.language.terms import stem


@pytest.mark.parametrize(
    "words",
    [
        ("refund", "refunds", "refunded", "refunding"),
        ("use", "uses", "used", "using"),
        ("stop", "stops", "stopped", "stopping"),
        ("study", "studies", "studied"),
        ("box", "boxes"),
        ("make", "makes", "making"),
        # British doubling of a verb's one "l", and a plural of a noun in "-ing"
        ("cancel", "cancels", "cancelled", "cancelling", "canceled"),
        ("label", "labels", "labelled", "labelling"),
        ("booking", "bookings"),
        ("setting", "settings"),
    ],
)
def test_stem_joins_inflections(words: tuple[str, ...]) -> None:
    assert len({stem(word) for word in words}) == 1


@pytest.mark.parametrize("word", ["bus", "class", "status", "thing", "bring", "need", "30", "退款"])
def test_stem_leaves_other_words_alone(word: str) -> None:
    assert stem(word) == word


@pytest.mark.parametrize(
    ("word", "base"),
    [("installed", "install"), ("filled", "fill"), ("spelled", "spell"), ("things", "thing")],
)
def test_a_verbs_own_double_l_and_a_plain_plural_stay(word: str, base: str) -> None:
    assert stem(word) == base
