"""Tests for segment: one test per rule, a property (any token split streams the same units as
`split_segments`), self-made tricky cases, and the golden rules when their path is given."""

from __future__ import annotations

import itertools
import json
import os
import re
from pathlib import Path

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


# --- sentence boundaries -------------------------------------------------------------------


def test_plain_sentences() -> None:
    assert split_segments("Hello World. My name is Jonas. Is it? Yes!") == [
        Segment("Hello World.", "sentence"),
        Segment("My name is Jonas.", "sentence"),
        Segment("Is it?", "sentence"),
        Segment("Yes!", "sentence"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Dr. Smith and Mrs. Jones met at 10 a.m. on Monday.",  # titles, a.m. + lowercase
        "She has $100.00 in her bag.",  # decimal
        "Please turn to p. 55 and N°. 1026 for details.",  # abbreviations taking numbers
        "My name is Jonas E. Smith.",  # initial
        "I work for the U.S. Government in Virginia.",  # acronym before a non-starter
        "The options, e.g. Apples or i.e. Pears, are fine.",  # e.g./i.e. never end
        "He teaches (He worked. She too.) at the university.",  # inside parentheses
        "She works at Yahoo! in the accounting department.",  # "!" then lowercase
        "I wasn't really ... well, what I mean . . . I didn't mean it.",  # elisions
        "That is JFK Jr.'s book and report.final.pdf is here.",  # no space after the dot
    ],
)
def test_not_a_boundary(text: str) -> None:
    assert texts(split_segments(text)) == [text]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I live in the U.S. How about you?", ["I live in the U.S.", "How about you?"]),
        ("Let's ask Jane and co. They know.", ["Let's ask Jane and co.", "They know."]),
        ("She has $100.00. It is hers.", ["She has $100.00.", "It is hers."]),
        ('He said, "Stop." Then he left.', ['He said, "Stop."', "Then he left."]),
        ("I never meant that.... She left.", ["I never meant that....", "She left."]),
        ("Wait?! Really?? Yes.", ["Wait?!", "Really??", "Yes."]),
        (
            "At 5 a.m. Mr. Smith left. At 6 P.M. Mr. Smith came.",
            ["At 5 a.m. Mr. Smith left.", "At 6 P.M. Mr. Smith came."],
        ),
        ("It went well. . . . The rest failed.", ["It went well.", ". . . The rest failed."]),
    ],
)
def test_boundary(text: str, expected: list[str]) -> None:
    assert texts(split_segments(text)) == expected


def test_inline_numbered_lists() -> None:
    assert texts(split_segments("1) The first item 2) The second item")) == [
        "1) The first item",
        "2) The second item",
    ]
    assert texts(split_segments("a. First one b. Second one c. Third one")) == [
        "a. First one",
        "b. Second one",
        "c. Third one",
    ]
    # Only the next label in sequence splits: "3)" after "1)" is text.
    assert texts(split_segments("1) Pick 3) options")) == ["1) Pick 3) options"]


# Made for these tests, not taken from the golden rules.
TRICKY = [
    ("The meeting is at 3 p.m. Please arrive early.", 2),
    ("Mrs. Jones met Prof. Smith at 10 a.m. on Monday.", 1),
    ("Our U.K. office is closed. The U.S. office is open.", 2),
    ("Version 2.5 fixed the bug. Upgrade now!", 2),
    ("He works at Acme Inc. The company makes anvils.", 2),
    ("He works at Acme Inc. in Ohio.", 1),
    ("See Fig. 3 for the results.", 1),
    ("It was great... Then it rained.", 2),
    ("The file is named report.final.pdf. Open it.", 2),
    ("Call us at 555.123.4567. We answer quickly.", 2),
    ("J. R. R. Tolkien wrote it. It sold well.", 2),
    ("The price rose 3.5% in Q3. Analysts expected less.", 2),
    ("Approx. 20 people came. It was fun.", 2),
    ("Send it to the U.S. Embassy in Rome. They will help.", 2),
    ("In the U.S. Many people disagree.", 1),
    ("She earned a Ph.D. in physics. Now she teaches.", 2),
]


@pytest.mark.parametrize(("text", "count"), TRICKY)
def test_tricky_english(text: str, count: int) -> None:
    assert len(split_segments(text)) == count, texts(split_segments(text))


def test_tricky_english_pass_rate() -> None:
    passed = sum(len(split_segments(text)) == count for text, count in TRICKY)
    assert passed == len(TRICKY)


def test_cjk() -> None:
    text = fullwidth("我们明天一起去看《摔跤吧!爸爸》好吗?好!これはペンです。それは何ですか?")
    assert texts(split_segments(text)) == [
        fullwidth("我们明天一起去看《摔跤吧!爸爸》好吗?"),
        fullwidth("好!"),
        "これはペンです。",
        fullwidth("それは何ですか?"),
    ]
    # A soft line break inside a CJK sentence is not a boundary.
    assert texts(split_segments("これは父の\n家です。")) == ["これは父の\n家です。"]


# --- citation markers ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "marker", ["[1]", "[1][2]", "[1, 2]", "[1-3]", "[^1]", "(source#1: faq, ID: 'doc-1')"]
)
def test_marker_after_punctuation_joins_that_sentence(marker: str) -> None:
    for space in (" ", ""):
        text = f"Refunds take 30 days.{space}{marker} Monthly plans renew."
        expected = [f"Refunds take 30 days.{space}{marker}", "Monthly plans renew."]
        assert texts(split_segments(text)) == expected


def test_cjk_marker_joins_sentence() -> None:
    assert texts(split_segments("退款需要30天。【1】月度计划会续订。[2]")) == [
        "退款需要30天。【1】",
        "月度计划会续订。[2]",
    ]


def test_marker_before_sentence_is_its_label() -> None:
    assert texts(split_segments("[1] The refund window is 30 days.")) == [
        "[1] The refund window is 30 days."
    ]
    # On a new line a marker opens the next sentence rather than closing the previous one.
    assert texts(split_segments("Plans renew monthly.\n[2] Refunds take 30 days.")) == [
        "Plans renew monthly.",
        "[2] Refunds take 30 days.",
    ]


def test_split_marker_holds_the_sentence() -> None:
    tokens = ["Refunds take 30 days.", " ", "[", "1", "]", " Monthly", " plans", " renew."]
    assert released(tokens) == [
        [],
        [],
        [],
        [],
        [],
        ["Refunds take 30 days. [1]"],
        [],
        [],
        ["Monthly plans renew."],
    ]
    tokens = ["It is free.", " (", "source", "#2", ": faq", ")", " More", "."]
    assert released(tokens)[-4:] == [[], ["It is free. (source#2: faq)"], [], ["More."]]


def test_bracket_that_is_no_marker_releases() -> None:
    tokens = ["Refunds take 30 days.", " [", "see", " below] More."]
    assert released(tokens) == [[], [], ["Refunds take 30 days."], [], ["[see below] More."]]


def test_marker_and_number_in_brackets() -> None:
    # "[1 and 2]" is one marker although "[1 a" is not a prefix PARTIAL_MARKER_RE accepts.
    tokens = ["Plans renew.", " [1 a", "nd 2]", " Refunds vary."]
    assert released(tokens) == [[], [], [], ["Plans renew. [1 and 2]"], ["Refunds vary."]]


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


# --- markdown ------------------------------------------------------------------------------

MARKDOWN = """# Refund policy

Refunds take 30 days. [1] Monthly plans renew.

- First item. It has two sentences
- Second item without a full stop
* Star item
1. Numbered one
2. Numbered two

```python
x = 1. Not a sentence. [1]

print(x)
```
## Next steps
No punctuation at the end

---
Last line"""


def test_markdown_units() -> None:
    assert split_segments(MARKDOWN) == [
        Segment("# Refund policy", "heading"),
        Segment("Refunds take 30 days. [1]", "sentence"),
        Segment("Monthly plans renew.", "sentence"),
        Segment("- First item.", "list_item"),
        Segment("It has two sentences", "sentence"),
        Segment("- Second item without a full stop", "list_item"),
        Segment("* Star item", "list_item"),
        Segment("1. Numbered one", "list_item"),
        Segment("2. Numbered two", "list_item"),
        Segment("```python\nx = 1. Not a sentence. [1]\n\nprint(x)\n```", "code"),
        Segment("## Next steps", "heading"),
        Segment("No punctuation at the end", "sentence"),
        Segment("---", "heading"),
        Segment("Last line", "sentence"),
    ]


def test_code_block_released_when_closing_fence_line_ends() -> None:
    tokens = ["Intro:\n", "```", "\nx = 1\n", "``", "`", "\n", "Done."]
    assert released(tokens) == [[], ["Intro:"], [], [], [], ["```\nx = 1\n```"], [], ["Done."]]


def test_unclosed_code_block_is_one_unit() -> None:
    assert split_segments("~~~\na. b. C\n") == [Segment("~~~\na. b. C", "code")]


def test_heading_and_item_released_at_line_end() -> None:
    assert released(["# Title", "\n", "- item", "\n", "- ", "- -\n"]) == [
        [],
        ["# Title"],
        [],
        [],
        ["- item"],
        ["- - -"],
        [],
    ]


def test_blank_line_ends_unit() -> None:
    assert released(["No full stop here", "\n", "\n", "Next"]) == [
        [],
        [],
        ["No full stop here"],
        [],
        ["Next"],
    ]


def test_soft_line_break_continues_sentence() -> None:
    assert texts(split_segments("A sentence that\nwraps. Next one")) == [
        "A sentence that\nwraps.",
        "Next one",
    ]


def test_table_rows() -> None:
    text = "| Plan | Refund |\n|---|---|\n| Monthly | 30 days. [1] |\n| Annual | none. |\nAfter."
    assert texts(split_segments(text)) == [
        "| Plan | Refund |\n|---|---|",  # the header row keeps its rule line
        "| Monthly | 30 days. [1] |",
        "| Annual | none. |",
        "After.",
    ]
    assert released(["| A |\n", "| B", " |\n", "|-", "--|\n", "x"]) == [
        [],
        ["| A |"],
        [],
        [],
        ["| B |\n|---|"],
        [],
        ["x"],
    ]


def test_hashtag_and_bold_are_text() -> None:
    assert split_segments("#hashtag here\n**Bold** text.") == [
        Segment("#hashtag here\n**Bold** text.", "sentence")
    ]


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


# --- golden rules (evaluation data, only when its path is given) ----------------------------

_CJK = "\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"


def normalise(sentence: str) -> str:
    """Whitespace as the golden data writes it: runs become one space, and none is kept next
    to a CJK character (the data joins "父の\\n家" to "父の家")."""
    collapsed = " ".join(sentence.split())
    return re.sub(f"(?<=[{_CJK}]) | (?=[{_CJK}])", "", collapsed)


def golden_pass_counts(path: Path) -> dict[str, tuple[int, int]]:
    counts: dict[str, tuple[int, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        whole = split_segments(case["text"])
        text = case["text"]
        assert stream([text[i : i + 3] for i in range(0, len(text), 3)]) == whole
        got = [normalise(s.text) for s in whole]
        ok = got == [normalise(s) for s in case["sentences"]]
        passed, total = counts.get(case["lang"], (0, 0))
        counts[case["lang"]] = (passed + ok, total + 1)
    return counts


def test_golden_rules() -> None:
    path = os.environ.get("SEGMENT_GOLDEN_RULES")
    if not path or not Path(path).is_file():
        pytest.skip("set SEGMENT_GOLDEN_RULES to golden_rules.jsonl to run")
    counts = golden_pass_counts(Path(path))
    assert counts["en"][1] == 48
    assert counts["en"][0] >= 46, counts
