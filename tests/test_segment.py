"""Tests for gate/segment.py: units are released as soon as they are certain, and any token
split streams the same units as `split_segments` (a property). The boundary rules are tested
in test_boundaries.py, the markdown units in test_markup.py."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_rag.gate.segment import (  # stream_rag.segment in the repo
    Segment,
    SentenceBuffer,
    split_segments,
)


def texts(segments: list[Segment]) -> list[str]:
    return [segment.text for segment in segments]


def stream(tokens: list[str]) -> list[Segment]:
    buffer = SentenceBuffer()
    out: list[Segment] = []
    for token in tokens:
        out += buffer.feed(token)
    return out + buffer.close()


def released(tokens: list[str]) -> list[list[str]]:
    """What each feed returned, then what close returned."""
    buffer = SentenceBuffer()
    steps = [texts(buffer.feed(token)) for token in tokens]
    return [*steps, texts(buffer.close())]


def chars(text: str) -> list[str]:
    return list(text)


def fullwidth(text: str) -> str:
    """CJK text with `!` and `?` written as their fullwidth forms (ruff flags the literals)."""
    return text.translate({ord("!"): "\uff01", ord("?"): "\uff1f"})


# --- certainty and latency -----------------------------------------------------------------


def test_release_as_soon_as_next_sentence_starts() -> None:
    tokens = ["Refunds", " take", " 30", " days", ".", " Monthly", " plans."]
    first = ["Refunds take 30 days."]
    assert released(tokens) == [[], [], [], [], [], first, [], ["Monthly plans."]]


def test_cjk_released_on_next_character() -> None:
    assert released(["退款需要30天。", "月", "度。"]) == [[], ["退款需要30天。"], [], ["月度。"]]


def test_abbreviation_waits_for_the_next_word() -> None:
    tokens = ["I met Dr.", " S", "mith", " today.", " Then", " I", " left."]
    first = ["I met Dr. Smith today."]
    assert released(tokens) == [[], [], [], [], first, [], [], ["Then I left."]]
    # After an acronym the next word decides, so the boundary waits until that word ends.
    tokens = ["I live in the U.S.", " Ho", "w", " about you?"]
    assert released(tokens) == [[], [], [], ["I live in the U.S."], ["How about you?"]]


def test_decimal_is_not_released_early() -> None:
    tokens = ["It costs 3.", "50", " dollars.", " Pay", " now."]
    assert released(tokens) == [[], [], [], ["It costs 3.50 dollars."], [], ["Pay now."]]


def test_nothing_released_before_a_boundary_is_certain() -> None:
    for tokens in (["Hello."], ["Hello. "], ["Hello.", " [1"], ["Dr."], ["No. 5"]):
        buffer = SentenceBuffer()
        assert all(buffer.feed(token) == [] for token in tokens)


def test_close_resets() -> None:
    buffer = SentenceBuffer()
    assert texts(buffer.feed("One. Two") + buffer.close()) == ["One.", "Two"]
    assert texts(buffer.feed("Three. F") + buffer.close()) == ["Three.", "F"]


# --- the streaming property ----------------------------------------------------------------

FRAGMENTS = [
    "Refunds take 30 days.",
    "Dr. Smith paid $3.50 at 5 p.m. yesterday.",
    "The U.S. Army won. It was e.g. fine.",
    "See p. 55 and Fig. 3 for details!",
    "Is it true? Yes!! Really?!",
    "It was great... Then it rained.",
    "He said . . . nothing. . . . The end.",
    '"Stop." She left (see above. Really.) quickly.',
    "Plans renew monthly [1].",
    "Refunds take 30 days. [1][2]",
    "Annual plans do not.[1, 2]",
    "It is free. (source#1: faq, ID: 'doc-1')",
    "Not a marker. [see below] More. (sourcing info) Done.",
    "[3] The window is 14 days.",
    "1) The first item 2) The second item",
    "a. One b. Two c. Three",
    "• 9. The first • 10. The second",
    "退款需要30天。【1】月度计划会续订。",
    fullwidth("我们明天一起去看《摔跤吧!爸爸》好吗?好!"),
    "これは父の\n家です。",
    "I visited the U.S.A. last year. I. Jones came.",
    "At 5 a.m. Mr. Smith went to the bank.",
]
BLOCKS = [
    "# Heading one",
    "## Heading two [1]",
    "- A list item. With two sentences",
    "* Another item\n  continued here.",
    "1. Numbered item.\n2. Second item",
    "```python\nx = 1. Not text.\n\ny = 2\n```",
    "~~~\ncode\n~~~",
    "---",
    "#hashtag not a heading",
    "| Plan | Refund |\n|---|:--|\n| Monthly | 30 days. [1] |",
]
SEPARATORS = [" ", "  ", "\n", "\n\n", "\n\n\n", " \n", "\t"]


@st.composite
def documents(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.sampled_from(FRAGMENTS + BLOCKS), min_size=1, max_size=8))
    text = ""
    for part in parts:
        text += part + draw(st.sampled_from(SEPARATORS))
    return text if draw(st.booleans()) else text.rstrip()


@st.composite
def split_points(draw: st.DrawFn, text: str) -> list[str]:
    cuts = sorted(draw(st.sets(st.integers(0, len(text)), max_size=len(text) // 2 + 1)))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_streaming_equals_whole_text(data: st.DataObject) -> None:
    text = data.draw(documents())
    tokens = data.draw(split_points(text))
    assert stream(tokens) == split_segments(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=".!? \n\r\t[]1(#source:)-*`~。【】《》ab A\u2028", max_size=60), st.data())
def test_streaming_equals_whole_text_on_noise(text: str, data: st.DataObject) -> None:
    assert stream(data.draw(split_points(text))) == split_segments(text)


WORDS = [
    *("Dr.", "U.S.", "a.m.", "p.", "55.", "1.", "2.", "1)", "2)", "a.", "b.", "•", "• 9.", "• 10."),
    *("The", "the", "He", "I.", "E.", "co.", "etc.", "e.g.", "...", ". . .", ".", "!", "?", "?!"),
    *("[1]", "[1", "2]", "[1 and 2]", "【1】", "(source#1: x)", "(source", "#1)", "(", ")"),
    *("《", "》", "「", "」", "。", "好", '"', "”", "'", "#", "##", "-", "*", "---", "```", "~~~"),
    *("3.50", "N°.", "Mr", "How", "It", "Jr.'s", "x", "\n", "\n\n", "  ", "\t", "\r\n"),
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=30), st.lists(st.sampled_from(["", " ", "\n"])))
def test_streaming_equals_whole_text_on_word_salad(words: list[str], gaps: list[str]) -> None:
    text = "".join(word + (gaps[i] if i < len(gaps) else " ") for i, word in enumerate(words))
    for size in (1, 2, 3, 7):
        assert stream([text[i : i + size] for i in range(0, len(text), size)]) == split_segments(
            text
        )


@pytest.mark.parametrize("text", ["x \n. Y", "a \r\n. B", "a\u2028. B", "\u00a0. x"])
def test_dot_after_odd_whitespace(text: str) -> None:
    assert stream(chars(text)) == split_segments(text)


def test_next_word_behind_a_quote_waits() -> None:
    assert (
        stream(['co. "', "Dr."])
        == split_segments('co. "Dr.')
        == [
            Segment("co.", "sentence"),
            Segment('"Dr.', "sentence"),
        ]
    )


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(1, 400), min_size=1, max_size=60))
def test_long_sentence_streams_the_same(sizes: list[int]) -> None:
    # Longer than the buffer keeps in one piece: its head is parked while it grows.
    text = "A clause (with brackets) e.g. here, 3.5 or U.S. too " * 200 + "ends. . . . Then more."
    tokens: list[str] = []
    at = 0
    while at < len(text):
        size = sizes[len(tokens) % len(sizes)]
        tokens.append(text[at : at + size])
        at += size
    assert stream(tokens) == split_segments(text)
    assert len(split_segments(text)) == 2


@settings(max_examples=200, deadline=None)
@given(documents())
def test_nothing_but_whitespace_is_lost(text: str) -> None:
    segments = split_segments(text)
    assert all(s.text and s.text == s.text.strip() for s in segments)
    assert "".join("".join(s.text for s in segments).split()) == "".join(text.split())


def test_each_character_streamed_alone() -> None:
    text = "\n\n".join(FRAGMENTS + BLOCKS)
    assert stream(chars(text)) == split_segments(text)
