"""Split extracted text into overlapping chunks along paragraph and sentence boundaries.

A chunk is a span `[start, end)` of the extracted text, so a citation can point at the
exact place it came from; its text is always `text[start:end]`, never rewritten.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..text import tokenize
from .sentences import ITEM_LINE, sentence_spans

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_LIST_MARK = re.compile(r"^(?:[-*+]\s+|\d+[.)]\s+)")
# A sentence ending inside a line: a line asking at its end only ("Refunds take 5 days. Why?")
# is a statement and its question, not an FAQ entry's question.
_INNER_END = re.compile(r"[.!?。！？]\s")
# An FAQ's question line ("Q: How do I...?"): a heading even with its answer on the next line.
_QUESTION_LINE = re.compile(r"^\s*(?:Q|Question)\s*\d*\s*[:.)]\s+\S.*\?\s*$", re.IGNORECASE)
TITLE_LEVEL = 7  # a plain-text title or question line ranks below any Markdown heading


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int
    paragraph: int

    @property
    def length(self) -> int:
        return self.end - self.start


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """Spans of paragraphs (separated by blank lines), trimmed of surrounding whitespace."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for match in _PARAGRAPH_BREAK.finditer(text):
        spans.append((pos, match.start()))
        pos = match.end()
    spans.append((pos, len(text)))
    return [trimmed for s, e in spans if (trimmed := _trim(text, s, e))[0] < trimmed[1]]


def pieces(text: str) -> list[tuple[int, int, bool]]:
    """Paragraphs split into headings and text: `(start, end, is_heading)`. A heading is a
    Markdown `#` line, a "Q: ...?" line, or a one-line paragraph that asks a question or has no
    closing punctuation (an FAQ entry's question, a plain-text title)."""
    out: list[tuple[int, int, bool]] = []
    for p_start, p_end in paragraph_spans(text):
        run_start = None
        pos = p_start
        lines = text[p_start:p_end].split("\n")
        for i, line in enumerate(lines):
            end = pos + len(line)
            if (
                line.lstrip().startswith("#")
                or _QUESTION_LINE.match(line)
                or _asks_above_answer(lines, i)
            ):
                if run_start is not None:
                    out.append((run_start, pos - 1, False))
                    run_start = None
                out.append((pos, end, True))
            elif run_start is None:
                run_start = pos
            pos = end + 1
        if run_start is not None:
            out.append((run_start, p_end, False))
    return [(s, e, heading or _title_like(text[s:e])) for s, e, heading in out if text[s:e].strip()]


def _asks_above_answer(lines: Sequence[str], i: int) -> bool:
    """Whether line `i` of a paragraph is a question over its answer, as a question-per-line
    FAQ writes them with no blank line between entries ("Can I pay in instalments?" and the
    answer on the next line): a whole line asking, opening the paragraph, a new sentence or
    the entries under a title line, with a line after it that does not ask. A line wrapped
    mid-sentence ("... and whether\nyou can?") is not one."""
    line = lines[i].strip()
    if not line.endswith("?") or len(line) > 200 or _LIST_MARK.match(line) or line[0].islower():
        return False
    if _INNER_END.search(line):
        return False
    if i + 1 >= len(lines) or not lines[i + 1].strip() or lines[i + 1].rstrip().endswith("?"):
        return False
    before = lines[i - 1].strip() if i else ""
    return (
        not before
        or before.endswith((".", "!", "?", ")", "。", "！", "？"))
        or (i == 1 and _title_like(before) and _ends_on_content(before))
    )


def _ends_on_content(line: str) -> bool:
    """Whether `line` ends on a word that says something (a title: "... asked questions"), not
    on one that runs on to the next line ("... on holidays and")."""
    words = line.split()
    return bool(words) and bool(tokenize(words[-1]))


def _title_like(paragraph: str) -> bool:
    line = paragraph.strip()
    if "\n" in line or len(line) > 200 or _LIST_MARK.match(line) or "|" in line:
        return False
    return not line.endswith((".", "!", ":", ";", ",", "。", "！"))


def heading_context(text: str, starts: Sequence[int], limit: int = 300) -> list[list[str]]:
    """For each chunk start, the headings it sits under (outermost first, at most `limit`
    characters, innermost kept), e.g. ["Returns policy", "Is there a restocking fee?"]."""
    return [
        [line.lstrip("#").strip() for line in path] for path in heading_paths(text, starts, limit)
    ]


def heading_paths(text: str, starts: Sequence[int], limit: int = 300) -> list[tuple[str, ...]]:
    """`heading_context` with each heading written as a line of its own ("## Fees" for a level-2
    heading, a plain title or question bare), so that the path read above a chunk's text is
    read as the headings it is (`pieces`), each at its level."""
    headings = [
        # A plain-text title opening the document stays outermost, above any later heading.
        (s, 0 if i == 0 and level == TITLE_LEVEL else level, " ".join(line.lstrip("#").split()))
        for i, (s, e, heading) in enumerate(pieces(text))
        if heading and (line := text[s:e].strip()) and (level := _level(line))
    ]
    out: list[tuple[str, ...]] = [() for _ in starts]
    # One sweep over the headings for all starts in order (each start rebuilding the stack
    # from the first heading was quadratic: ~1 s for a 3 MB manual's 4,500 chunks).
    stack: list[tuple[int, str]] = []
    next_heading = 0
    for i in sorted(range(len(starts)), key=starts.__getitem__):
        while next_heading < len(headings) and headings[next_heading][0] < starts[i]:
            _, level, title = headings[next_heading]
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            next_heading += 1
        path = list(stack)
        if next_heading < len(headings) and headings[next_heading][0] == starts[i]:
            # The chunk opens with a heading: the sections it closes are not the chunk's.
            path = [(level, t) for level, t in path if level < headings[next_heading][1]]
        while len(path) > 1 and sum(len(t) + 1 for _, t in path) > limit:
            path.pop(0)
        out[i] = tuple(_marked(level, t[:limit]) for level, t in path)
    return out


def _marked(level: int, title: str) -> str:
    return f"{'#' * level} {title}" if 1 <= level <= 6 else title


def _level(line: str) -> int:
    stripped = line.lstrip()
    hashes = len(stripped) - len(stripped.lstrip("#"))
    return hashes if 1 <= hashes <= 6 else TITLE_LEVEL


def chunk_spans(
    text: str, target_chars: int, overlap_chars: int, walls: Sequence[int] = ()
) -> list[tuple[int, int]]:
    """Pack sentences into chunks of about `target_chars`, preferring paragraph breaks and
    repeating up to `overlap_chars` of trailing sentences at the start of the next chunk, but
    never from before one of the sorted offsets `walls` (where a PDF page begins: a chunk
    starts on the page its new text is on, which is the page its citations open at)."""
    if target_chars < 1 or not 0 <= overlap_chars < target_chars:
        raise ValueError("need target_chars >= 1 and 0 <= overlap_chars < target_chars")
    paragraphs = paragraph_spans(text)
    units = _units(text, target_chars, paragraphs)
    paragraph_ends = {u.paragraph: u.end for u in units}
    lists = _list_paragraphs(text, paragraphs)
    headings = _heading_paragraphs(text, paragraphs)
    chunks: list[tuple[int, int]] = []
    current: list[Span] = []
    for unit in units:
        if current and _should_break(current, unit, paragraph_ends, target_chars, lists):
            current = _next_chunk(
                chunks, current, unit, headings, overlap_chars, target_chars, lists
            )
            at = bisect.bisect_right(walls, unit.start) - 1
            if at >= 0:
                current = [span for span in current if span.start >= walls[at]]
        current.append(unit)
    if current:
        chunks.append((current[0].start, current[-1].end))
    return chunks


def _next_chunk(
    chunks: list[tuple[int, int]],
    current: list[Span],
    unit: Span,
    headings: set[int],
    overlap: int,
    target: int,
    lists: set[int] | frozenset[int] = frozenset(),
) -> list[Span]:
    """End the chunk `current` (appended to `chunks`) and begin the next. Headings at its end
    go to the next one, which starts at them with no overlap: a heading is the context of
    what follows it, and a chunk ending in one carries a title its text never gets to."""
    keep = len(current)
    while keep > 1 and current[keep - 1].paragraph in headings:
        keep -= 1
    if keep < len(current) and current[keep - 1].paragraph not in headings:
        chunks.append((current[0].start, current[keep - 1].end))
        carried = current[keep:]
        if unit.end - carried[0].start <= target:
            return carried
        return []  # the heading with the next sentence would not fit: no carry
    chunks.append((current[0].start, current[-1].end))
    if unit.paragraph in headings:
        # The next chunk opens a section: the previous one's last sentences, whole in this
        # chunk, would open it with no heading of their own ("On the day you leave, ..." read
        # under the page title and ranked above the chunk that holds them under theirs).
        return []
    return _overlap_tail(current, overlap, unit, target, lists)


def _heading_paragraphs(text: str, paragraphs: Sequence[tuple[int, int]] = ()) -> set[int]:
    """Indexes of the paragraphs that are a heading (as `pieces` judges one)."""
    return {
        index
        for index, (start, end) in enumerate(paragraphs or paragraph_spans(text))
        if "\n" not in text[start:end] and _is_heading(text[start:end])
    }


def _is_heading(line: str) -> bool:
    return line.lstrip().startswith("#") or bool(_QUESTION_LINE.match(line)) or _title_like(line)


def _should_break(
    current: list[Span],
    unit: Span,
    paragraph_ends: dict[int, int],
    target: int,
    lists: set[int] | frozenset[int] = frozenset(),
) -> bool:
    size = unit.end - current[0].start
    if size > target:
        return True
    starts_paragraph = unit.paragraph != current[-1].paragraph
    if starts_paragraph and unit.paragraph in lists:
        # A list with its lead-in sentence (a table with its rows) starts a chunk of its own
        # rather than be cut, where it fits in one.
        whole = paragraph_ends[unit.paragraph] - unit.start
        return whole <= target and paragraph_ends[unit.paragraph] - current[0].start > target
    if starts_paragraph and current[-1].end - current[0].start >= target // 2:
        # Break at the paragraph boundary rather than mid-way through the next paragraph.
        return paragraph_ends[unit.paragraph] - current[0].start > target
    return False


def _list_paragraphs(text: str, paragraphs: Sequence[tuple[int, int]] = ()) -> set[int]:
    """Indexes of the paragraphs that hold list items or several table rows."""
    return {
        index
        for index, (start, end) in enumerate(paragraphs or paragraph_spans(text))
        if ITEM_LINE.search(text, start, end)
    }


def _overlap_tail(
    previous: list[Span],
    overlap: int,
    nxt: Span,
    target: int,
    lists: set[int] | frozenset[int] = frozenset(),
) -> list[Span]:
    tail: list[Span] = []
    # Never carry the whole previous chunk, or the chunker would make no progress; nor the
    # last items of a list, which would open the next chunk as half a procedure.
    for span in reversed(previous[1:]):
        if previous[-1].end - span.start > overlap or nxt.end - span.start > target:
            break
        if span.paragraph in lists:
            break
        tail.insert(0, span)
    return tail


def _units(text: str, target: int, paragraphs: Sequence[tuple[int, int]] = ()) -> list[Span]:
    units: list[Span] = []
    for index, (p_start, p_end) in enumerate(paragraphs or paragraph_spans(text)):
        for s_start, s_end in sentence_spans(text, p_start, p_end):
            for piece in _split_long(text, s_start, s_end, target):
                units.append(Span(piece[0], piece[1], index))
    return units


def _split_long(text: str, start: int, end: int, target: int) -> list[tuple[int, int]]:
    """Cut a sentence longer than `target` at whitespace (or hard, if it has none)."""
    pieces: list[tuple[int, int]] = []
    while end - start > target:
        cut = text.rfind(" ", start + 1, start + target)
        if cut <= start:
            cut = start + target
        pieces.append(_trim(text, start, cut))
        start = _trim(text, cut, end)[0]
    pieces.append((start, end))
    return [p for p in pieces if p[0] < p[1]]


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
