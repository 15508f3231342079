"""Tests for gate/boundaries.py, through the sentence buffer: where `.`, `!` and `?` end a
sentence (abbreviations, numbers, tricky English, CJK), citation markers after a sentence, and
the golden rules when their path is given."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from stream_rag.gate.segment import Segment, split_segments

from .test_segment import fullwidth, released, stream, texts

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


def test_marker_closes_sentence_before_lower_case_item() -> None:
    # Quoted list items open lower-case: the marker after each one's period closes it.
    text = "a free loan bike for a week. [1] roadside help at no cost. [1] 5% off tyres. [2]"
    expected = ["a free loan bike for a week. [1]", "roadside help at no cost. [1]"]
    assert texts(split_segments(text)) == [*expected, "5% off tyres. [2]"]
    assert stream([text[i : i + 4] for i in range(0, len(text), 4)]) == split_segments(text)
    # After an abbreviation the marker does not: "etc." may go on lower-case.
    assert len(split_segments("Bring pens, paper etc. [1] and a ruler.")) == 1
    assert len(split_segments("Use a soft cloth, e.g. [1] microfibre.")) == 1


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
