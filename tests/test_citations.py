from __future__ import annotations

import pytest

from stream_rag.gate.citations import (
    PARTIAL_MARKER_RE,
    Citation,
    extract,
    parse_marker,
    strip_markers,
)


@pytest.mark.parametrize(
    ("text", "clean", "numbers"),
    [
        ("Refunds take 30 days [1].", "Refunds take 30 days.", [1]),
        ("Refunds take 30 days.[1][2]", "Refunds take 30 days.", [1, 2]),
        ("[1] The refund window is 30 days.", "The refund window is 30 days.", [1]),
        ("Two sources [1, 2] agree.", "Two sources agree.", [1, 2]),
        ("Fullwidth 【3】 works.", "Fullwidth works.", [3]),
        ("Ranges [2-4] expand.", "Ranges expand.", [2, 3, 4]),
        ("Footnote style[^2].", "Footnote style.", [2]),
        ("Repeats [1] and [1] once.", "Repeats and once.", [1]),
        ("No marker here.", "No marker here.", []),
        ("The year [2023] is not a citation.", "The year [2023] is not a citation.", []),
    ],
)
def test_extract(text: str, clean: str, numbers: list[int]) -> None:
    got_clean, citations = extract(text)
    assert got_clean == clean
    assert [c.n for c in citations] == numbers


def test_source_form_carries_the_claimed_id() -> None:
    clean, citations = extract("Refunds take 30 days (source#1: refund.md, ID: 'doc_ab12').")
    assert clean == "Refunds take 30 days."
    assert citations == [Citation(1, "doc_ab12")]
    assert parse_marker("(source#2)") == [Citation(2, None)]


def test_strip_markers_tidies_spacing() -> None:
    assert strip_markers("A [1] , b [2][3] .") == "A, b."


@pytest.mark.parametrize("tail", ["[", "[1", "[1,", "[1, 2", "【", "(source#", "(source#1: ref"])
def test_partial_markers_are_recognised(tail: str) -> None:
    assert PARTIAL_MARKER_RE.search("Refunds take 30 days. " + tail)


@pytest.mark.parametrize("tail", ["days.", "a [1] b", "(see above)"])
def test_complete_text_is_not_partial(tail: str) -> None:
    assert not PARTIAL_MARKER_RE.search(tail)
