"""Extracted text assembled piece by piece, each piece remembering where it came from: the span
of the original file it renders (Markdown, HTML), its paragraph or table row (DOCX) and the
PDF page it is on.

The text is what chunks, the gate and answers read (markup removed, tables as sentences); a
chunk's `source_start`/`source_end` place it in the original, so a widget can show the passage
formatted: byte offsets into the stored file (Markdown, HTML, plain text), the first and one
past the last of the body's paragraphs and table rows it reads (DOCX, `office.py`), or
character offsets into the text of its first and of its last page (PDF); `page_start`/
`page_end` are 1-based PDF pages.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field

# Bumped whenever extraction or chunking changes what a stored version's text or chunks would
# be: versions extracted by an older one are extracted again at start (store/reextract.py).
EXTRACTION_VERSION = 10  # 10: each chunk's heading path


SENTENCE_ENDS = (".", "!", "?", ":", ";", "。", "！", "？", "：", "；")


@dataclass(frozen=True, slots=True)
class Place:
    """Where a chunk came from: bytes of the original file and PDF pages (None: not known), and
    the headings it stands under."""

    source_start: int | None = None
    source_end: int | None = None
    page_start: int | None = None
    page_end: int | None = None
    # The headings it stands under, outermost first, each as a line ("## Fees": its level).
    headings: tuple[str, ...] = ()


@dataclass(slots=True)
class Layout:
    """Text being built, with `(text_start, text_end, source_start, source_end, exact)` pieces;
    an exact piece is the source copied character for character."""

    parts: list[str] = field(default_factory=list)
    length: int = 0
    pieces: list[tuple[int, int, int, int, bool]] = field(default_factory=list)

    def add(self, text: str, source: tuple[int, int] | None = None, exact: bool = False) -> None:
        if not text:
            return
        if source is not None:
            self.pieces.append((self.length, self.length + len(text), *source, exact))
        self.parts.append(text)
        self.length += len(text)

    def copy(self, source_text: str, start: int, end: int) -> None:
        """Append `source_text[start:end]` verbatim."""
        self.add(source_text[start:end], (start, end), exact=True)

    def end_sentence(self) -> None:
        """End what was written with a full stop unless it ends a sentence or clause already
        (a list item is a sentence of its own)."""
        tail = "".join(self.parts[-3:]).rstrip()
        if tail and not tail.endswith(SENTENCE_ENDS):
            self.add(".")

    def ends_with(self, suffix: str) -> bool:
        return "".join(self.parts[-3:]).endswith(suffix) if self.parts else False

    def text(self) -> str:
        return "".join(self.parts)


@dataclass(frozen=True, slots=True)
class Source:
    """The decoded text of a stored file and how it was encoded (to count its bytes)."""

    text: str
    encoding: str  # "utf-8" or "utf-16-le" (as long as big-endian)
    bom: int  # bytes of byte-order mark before it


@dataclass(frozen=True, slots=True)
class Extraction:
    """A file's text and how to place a span of it back in the file."""

    text: str
    media_type: str
    pieces: Sequence[tuple[int, int, int, int, bool]] = ()
    source: Source | None = None
    pages: Sequence[tuple[int, int]] = ()  # (text offset where a page begins, its number)
    dated: str | None = None  # when the document says it was last updated (ingest/dates.py)

    def places(self, spans: Sequence[tuple[int, int]]) -> list[Place]:
        """Where each span `[start, end)` of the text came from."""
        ends = [p[1] for p in self.pieces]
        found = [self._source(ends, s, e) for s, e in spans]
        if self.source is not None:
            wanted = sorted({o for pair in found for o in pair if o is not None})
            in_bytes = _byte_offsets(self.source, wanted)
            found = [
                (None if a is None else in_bytes[a], None if b is None else in_bytes[b])
                for a, b in found
            ]
        starts = [offset for offset, _ in self.pages]
        out: list[Place] = []
        for (s, e), (source_start, source_end) in zip(spans, found, strict=True):
            page_start = page_end = None
            if starts:
                first = max(0, bisect.bisect_right(starts, s) - 1)
                last = max(0, bisect.bisect_right(starts, max(s, e - 1)) - 1)
                page_start, page_end = self.pages[first][1], self.pages[last][1]
                # A PDF's span is in its pages' texts: from an offset in the first page's
                # to one in the last page's.
                source_start, source_end = max(0, s - starts[first]), max(0, e - starts[last])
            out.append(Place(source_start, source_end, page_start, page_end))
        return out

    def _source(self, ends: list[int], start: int, end: int) -> tuple[int | None, int | None]:
        low: int | None = None
        high: int | None = None
        # Indexed, not sliced: a slice copied the rest of the pieces for every chunk.
        for k in range(bisect.bisect_right(ends, start), len(self.pieces)):
            t_start, t_end, s_start, s_end, exact = self.pieces[k]
            if t_start >= end:
                break
            if exact:
                a = s_start + max(start, t_start) - t_start
                b = s_start + min(end, t_end) - t_start
            else:
                a, b = s_start, s_end
            low = a if low is None else min(low, a)
            high = b if high is None else max(high, b)
        return low, high


def _byte_offsets(source: Source, offsets: Sequence[int]) -> dict[int, int]:
    """Byte offsets of the sorted character `offsets` of `source`, in one pass."""
    out: dict[int, int] = {}
    at, count = 0, source.bom
    for offset in offsets:
        count += len(source.text[at:offset].encode(source.encoding))
        at = offset
        out[offset] = count
    return out
