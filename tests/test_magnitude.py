"""Magnitudes in words held to the aligned span (gate/magnitude.py): another multiplier or
another scale fails, the same one passes; blocks of another domain than the fixtures."""

from __future__ import annotations

import pytest

from stream_rag.gate.magnitude import magnitude_mismatch

from .gating import verdict

FESTIVAL = (
    "The festival draws tens of thousands of visitors every summer. Its stage was built by "
    "hundreds of volunteers. The town has 4,000 inhabitants."
)


@pytest.mark.parametrize(
    "sentence",
    [
        "The festival draws thousands of visitors every summer.",
        "The festival draws hundreds of thousands of visitors every summer.",
        "The festival draws millions of visitors every summer.",
        "Its stage was built by thousands of volunteers.",
    ],
)
def test_another_magnitude_fails(sentence: str) -> None:
    ok, detail = verdict((FESTIVAL,), sentence, 1)
    assert not ok, detail


@pytest.mark.parametrize(
    "sentence",
    [
        "The festival draws tens of thousands of visitors every summer.",
        "Hundreds of volunteers built its stage.",
        "The town has 4,000 inhabitants.",
    ],
)
def test_the_same_magnitude_passes(sentence: str) -> None:
    ok, detail = verdict((FESTIVAL,), sentence, 1)
    assert ok, detail


def test_a_span_without_magnitudes_in_words_is_left_to_the_number_checks() -> None:
    assert magnitude_mismatch("thousands of visitors", "the town has 4,000 inhabitants") == ""
    assert magnitude_mismatch("4,000 inhabitants", "tens of thousands of visitors") == ""
