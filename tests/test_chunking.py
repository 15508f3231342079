from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_rag.ingest.chunking import chunk_spans, paragraph_spans
from stream_rag.ingest.sentences import sentence_spans

SENTENCES = [
    "The refund window is 30 days.",
    "Monthly plans are not refunded.",
    "Open Settings and choose Billing.",
    "Refunds arrive in 5 to 10 business days.",
    "Gift subscriptions cannot be refunded once redeemed.",
]


def test_paragraph_spans_are_trimmed() -> None:
    text = "  First para.\nstill first.\n\n\n   Second.  \n \n"
    assert [text[s:e] for s, e in paragraph_spans(text)] == [
        "First para.\nstill first.",
        "Second.",
    ]


def test_sentence_spans_are_absolute() -> None:
    text = "Intro.\n\nOne here. Two there."
    spans = sentence_spans(text, 8, len(text))
    assert [text[s:e] for s, e in spans] == ["One here.", "Two there."]


def test_short_text_is_one_chunk() -> None:
    text = " ".join(SENTENCES[:2])
    assert chunk_spans(text, 1000, 100) == [(0, len(text))]


def test_chunks_end_on_sentence_boundaries_and_overlap() -> None:
    text = " ".join(SENTENCES * 4)
    spans = chunk_spans(text, 120, 40)
    assert len(spans) > 3
    for start, end in spans:
        assert end - start <= 120
        assert text[end - 1] == "."
        assert start == 0 or text[start - 1] == " "
    # No gaps; where the previous chunk's last sentence fits in 40 chars it is repeated.
    pairs = list(itertools.pairwise(spans))
    assert all(s1 < s2 <= e1 + 1 for (s1, e1), (s2, _) in pairs)
    overlapping = [(a, b) for a, b in pairs if b[0] < a[1]]
    assert overlapping
    assert all(a[1] - b[0] <= 40 for a, b in overlapping)


def test_zero_overlap_tiles_the_text() -> None:
    text = " ".join(SENTENCES * 3)
    spans = chunk_spans(text, 100, 0)
    for (_, e1), (s2, _) in itertools.pairwise(spans):
        assert s2 == e1 + 1


def test_prefers_paragraph_breaks() -> None:
    para_a = " ".join(SENTENCES[:3])
    para_b = " ".join(SENTENCES[2:])
    text = para_a + "\n\n" + para_b
    spans = chunk_spans(text, len(para_a) + 40, 0)
    assert [text[s:e] for s, e in spans] == [para_a, para_b]


def test_overlong_sentence_is_cut_at_spaces() -> None:
    text = "word " * 100
    spans = chunk_spans(text, 50, 0)
    assert all(e - s <= 50 for s, e in spans)
    assert all(text[s:e].strip() == text[s:e] for s, e in spans)
    assert " ".join(text[s:e] for s, e in spans) == text.strip()


def test_cjk_text_is_chunked() -> None:
    text = "退款期限为三十天。" * 40
    spans = chunk_spans(text, 100, 20)
    assert len(spans) > 1
    assert all(text[e - 1] == "。" for _, e in spans)


def test_bad_parameters() -> None:
    with pytest.raises(ValueError, match="overlap"):
        chunk_spans("x", 100, 100)


words = st.sampled_from(["refund", "plan", "days", "30", "Billing", "é", "世界", "Dr.", "a"])
sentence = st.lists(words, min_size=1, max_size=12).map(lambda ws: " ".join(ws) + ".")
paragraph = st.lists(sentence, min_size=1, max_size=6).map(" ".join)
document = st.lists(paragraph, min_size=1, max_size=6).map("\n\n".join)


@settings(max_examples=150, deadline=None)
@given(document, st.integers(40, 400), st.integers(0, 19))
def test_chunks_cover_every_word_in_order(text: str, target: int, overlap: int) -> None:
    spans = chunk_spans(text, target, overlap)
    assert spans
    starts = [s for s, _ in spans]
    assert starts == sorted(set(starts))
    covered = [False] * len(text)
    for start, end in spans:
        assert 0 <= start < end <= len(text)
        assert end - start <= target
        for i in range(start, end):
            covered[i] = True
    assert all(covered[i] for i, ch in enumerate(text) if not ch.isspace())


def test_heading_context_is_the_path_of_headings_before_each_chunk() -> None:
    from stream_rag.ingest.chunking import heading_context

    text = (
        "# Returns\n\nIntro text here.\n\n## Is there a restocking fee?\n\nA fee applies.\n\n"
        "## How fast are refunds issued?\n\nWithin 5 days.\n\n# Shipping\n\nShipping is free."
    )
    starts = [text.index(s) for s in ("# Returns", "Intro", "A fee", "Within", "Shipping is")]
    assert heading_context(text, starts) == [
        [],
        ["Returns"],
        ["Returns", "Is there a restocking fee?"],
        ["Returns", "How fast are refunds issued?"],
        ["Shipping"],
    ]
    plain = "Contacting support\n\nWrite to us. We answer.\n\nIs there live chat?\n\nYes, there is."
    assert heading_context(plain, [plain.index("Yes")]) == [
        ["Contacting support", "Is there live chat?"]
    ]
    assert heading_context("# " + "x" * 500 + "\n\nBody.", [504]) == [["x" * 300]]


def test_a_question_per_line_faq_has_its_questions_as_headings() -> None:
    from stream_rag.ingest.chunking import pieces

    faq = (
        "Spoke & Chain Cycles - frequently asked questions\n"
        "Can I test ride a bike before buying it?\n"
        "Test rides of up to 30 minutes are free. Bring a photo ID.\n"
        "Can I pay in instalments?\n"
        "Bikes over 800 euros can be paid in 12 monthly instalments."
    )
    headings = [faq[s:e] for s, e, heading in pieces(faq) if heading]
    assert headings == [
        "Spoke & Chain Cycles - frequently asked questions",
        "Can I test ride a bike before buying it?",
        "Can I pay in instalments?",
    ]
    # A line wrapped mid-sentence that happens to end asking is prose, not a heading.
    wrapped = "We are often asked whether the shop opens on holidays and\nWhy not?\nIt does not."
    assert [wrapped[s:e] for s, e, heading in pieces(wrapped) if heading] == []


def test_a_chunk_opening_a_section_carries_no_overlap_from_the_one_before() -> None:
    # The previous section's last sentences would open the chunk with no heading over them
    # ("On the day you leave, ..." read under the page title, not "Arrival and departure").
    arrival = (
        "## Arrival and departure\n\n"
        "Rooms are ready from 15:00 on the day you arrive. On the day you leave, please vacate "
        "the room by 11:00. A late check-out until 14:00 costs 25 euros.\n\n"
    )
    cancelling = (
        "## Cancelling a booking\n\n"
        "You can cancel free of charge up to 48 hours before the day you arrive. If you cancel "
        "later, we charge the first night.\n"
    )
    text = arrival + cancelling
    spans = chunk_spans(text, 180, 90)
    assert [text[start:end] for start, end in spans] == [arrival.strip(), cancelling.strip()]
    # Within a section the overlap stays.
    text = " ".join(SENTENCES * 4)
    assert any(b[0] < a[1] for a, b in itertools.pairwise(chunk_spans(text, 120, 40)))
