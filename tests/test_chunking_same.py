"""The faster chunker gives exactly what the old one gave: the old code is kept here, as it
was before the speed-up, and both run on the same generated documents."""

from __future__ import annotations

import random
from collections.abc import Sequence

import blingfire
import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_rag.ingest import chunking, sentences
from stream_rag.ingest.chunking import (
    Span,
    chunk_spans,
    heading_context,
    paragraph_spans,
)
from stream_rag.ingest.sentences import sentence_offsets

# Characters that stress the UTF-8 to string offset mapping: one to four bytes, combining
# marks, zero-width and line separators, sentence ends, abbreviations, NUL.
ALPHABET = [
    *"abc XYZ.?!\n\t,;:'\"()-0123456789#|",
    *"éüßçø中文日本語한국😀👍🏽\u0301\u200b\u00a0\u2028\u2029…—“”。！？",
    *("\r", "\x00", "Dr. ", "e.g. ", "U.S. ", "\n\n", "\n# ", "\n- ", "?\n\n"),
]


def texts(max_size: int = 80) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(ALPHABET), max_size=max_size).map("".join)


def old_offsets(piece: str) -> list[tuple[int, int]] | str:
    try:
        offsets: list[tuple[int, int]] = blingfire.text_to_sentences_and_offsets(piece)[1]
    except AssertionError:  # blingfire's own check of its mapping
        return "assertion"
    return offsets


def new_offsets(piece: str) -> list[tuple[int, int]] | str:
    try:
        return sentence_offsets(piece)
    except AssertionError:
        return "assertion"


def old_chunk_spans(text: str, target: int, overlap: int) -> list[tuple[int, int]]:
    """`chunk_spans` before the speed-up (blingfire's offsets, the unchanged helpers; list
    items parted as `sentence_spans` parts them)."""
    units: list[Span] = []
    for index, (p_start, p_end) in enumerate(paragraph_spans(text)):
        for s, e in old_sentences(text, p_start, p_end):
            for cut in chunking._split_long(text, s, e, target):
                units.append(Span(cut[0], cut[1], index))
    paragraph_ends = {u.paragraph: u.end for u in units}
    lists = chunking._list_paragraphs(text)
    headings = chunking._heading_paragraphs(text)
    chunks: list[tuple[int, int]] = []
    current: list[Span] = []
    for unit in units:
        if current and chunking._should_break(current, unit, paragraph_ends, target, lists):
            current = chunking._next_chunk(chunks, current, unit, headings, overlap, target, lists)
        current.append(unit)
    if current:
        chunks.append((current[0].start, current[-1].end))
    return chunks


def old_sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sentences by blingfire's own offsets, a list item's line always starting one."""
    out: list[tuple[int, int]] = []
    cuts = [m.start() for m in sentences.ITEM_LINE.finditer(text, start, end)]
    for at, cut in zip([start, *(c + 1 for c in cuts)], [*cuts, end], strict=True):
        piece = text[at:cut]
        if not piece.strip():
            continue
        offsets = [(at + s, at + e) for s, e in blingfire.text_to_sentences_and_offsets(piece)[1]]
        offsets = [(s, e) for s, e in offsets if e > s]
        for k, (s, e) in enumerate(offsets):
            if k and sentences._MARK_ONLY.fullmatch(text, *offsets[k - 1]):
                out[-1] = (out[-1][0], e)
            else:
                out.append((s, e))
    return out


def old_heading_context(text: str, starts: Sequence[int], limit: int = 300) -> list[list[str]]:
    """`heading_context` before the speed-up (the stack rebuilt for every start)."""
    headings = [
        (
            s,
            0 if i == 0 and level == chunking.TITLE_LEVEL else level,
            " ".join(line.lstrip("#").split()),
        )
        for i, (s, e, heading) in enumerate(chunking.pieces(text))
        if heading and (line := text[s:e].strip()) and (level := chunking._level(line))
    ]
    out: list[list[str]] = []
    for start in starts:
        stack: list[tuple[int, str]] = []
        for at, level, title in headings:
            if at == start:  # a chunk opening with a heading is not in the sections it closes
                stack = [(lv, t) for lv, t in stack if lv < level]
            if at >= start:
                break
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
        path = [title for _, title in stack]
        while len(path) > 1 and sum(len(t) + 1 for t in path) > limit:
            path.pop(0)
        # As heading_context writes a title cut at `limit`: without the space the cut may end on.
        out.append([t[:limit].rstrip() for t in path])
    return out


def manual(seed: int, paragraphs: int) -> str:
    """A generated product manual: headings, FAQ questions, lists, prose, long unbroken runs
    and non-ASCII text, so every path of the chunker is taken."""
    rnd = random.Random(seed)
    words = [*"refund plan billing sync export Gerät Größe 料金 프로 emoji😀 e.g. Dr. U.S.".split()]

    def sentence() -> str:
        body = " ".join(rnd.choice(words) for _ in range(rnd.randint(1, 40)))
        return body + rnd.choice([".", ".", "?", "!", "。", "", "..."])

    parts = []
    for n in range(paragraphs):
        kind = rnd.random()
        if kind < 0.1:
            parts.append("#" * rnd.randint(1, 4) + f" Section {n} {rnd.choice(words)}")
        elif kind < 0.2:
            parts.append(f"How do I {rnd.choice(words)}?")
        elif kind < 0.3:
            parts.append("\n".join(f"- {sentence()}" for _ in range(rnd.randint(1, 5))))
        elif kind < 0.35:
            parts.append(rnd.choice(words) * rnd.randint(100, 700))  # no space to cut at
        else:
            parts.append(" ".join(sentence() for _ in range(rnd.randint(1, 12))))
    return rnd.choice(["", "Title line\n\n"]) + rnd.choice(["\n\n", "\n \n", "\n\n\n"]).join(parts)


@given(texts())
def test_sentence_offsets_are_blingfires(piece: str) -> None:
    assert new_offsets(piece) == old_offsets(piece)


@given(texts(400))
def test_sentence_offsets_of_longer_texts_are_blingfires(piece: str) -> None:
    assert new_offsets(piece) == old_offsets(piece)


@given(texts(300), st.integers(20, 400), st.data())
def test_chunks_are_the_old_chunkers(text: str, target: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(0, target - 1))
    assert chunk_spans(text, target, overlap) == old_chunk_spans(text, target, overlap)


@given(texts(300), st.lists(st.integers(0, 320)), st.integers(1, 80))
def test_heading_context_is_the_old_one(text: str, starts: list[int], limit: int) -> None:
    assert heading_context(text, starts, limit) == old_heading_context(text, starts, limit)


@pytest.mark.parametrize("seed", range(6))
def test_generated_manuals_chunk_as_before(seed: int) -> None:
    text = manual(seed, 400)
    for target, overlap in ((1000, 150), (300, 0), (120, 119)):
        spans = chunk_spans(text, target, overlap)
        assert spans == old_chunk_spans(text, target, overlap)
        starts = [s for s, _ in spans]
        assert heading_context(text, starts) == old_heading_context(text, starts)
