"""DOCX read in document order: headings as `#` lines, list paragraphs with the numbers Word
shows for them, tables where they stand as row sentences (merged cells read once per row).

Each piece of text keeps its place in the file as a position among the body's paragraphs and
table rows, counted in document order from 0 (empty paragraphs and a table's header row
count too): a chunk's `source_start`/`source_end` are the first and one past the last it
reads, so a viewer of the DOCX can find the passage."""

from __future__ import annotations

import re
from typing import Any

from .layout import Layout
from .tables import indexed_row_sentences

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING_STYLE = re.compile(r"(?:heading|überschrift|titre|kop)\s*(\d)", re.IGNORECASE)
_ROMAN = (
    (1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
    (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"),
)  # fmt: skip


def docx_layout(document: Any) -> Layout:
    """The text of a python-docx `Document`."""
    numbering = _Numbering(document)
    layout = Layout()
    previous = ""  # kind of the block before: "p", "h", "li" or "row"
    previous_text = ""
    at = 0  # the position of `item` among the body's paragraphs and table rows
    for item in document.iter_inner_content():
        if hasattr(item, "rows"):
            rows = _table_rows(item)
            sentences = indexed_row_sentences(rows, header=True)
            for k, (row, sentence) in enumerate(sentences):
                together = k > 0 or previous_text.endswith(":")
                if layout.length:
                    layout.add("\n" if together else "\n\n")
                layout.add(sentence, (at + row, at + row + 1))
            if sentences:
                previous, previous_text = "row", sentences[-1][1]
            at += len(rows)
            continue
        place = (at, at + 1)
        at += 1
        text = " ".join(item.text.split())
        if not text:
            continue
        level = _heading_level(item)
        mark = None if level else numbering.mark(item)
        if layout.length:
            together = mark is not None and (previous == "li" or previous_text.endswith(":"))
            layout.add("\n" if together else "\n\n")
        if level:
            layout.add("#" * level + " " + text, place)
            previous = "h"
        elif mark is not None:
            layout.add(f"{mark} {text}" if mark else text, place)
            layout.end_sentence()
            previous = "li"
        else:
            layout.add(text, place)
            previous = "p"
        previous_text = text
    return layout


def _heading_level(paragraph: Any) -> int:
    name = paragraph.style.name if paragraph.style is not None else ""
    if name == "Title":
        return 1
    match = _HEADING_STYLE.fullmatch(name or "")
    return min(6, int(match.group(1))) if match else 0


def _table_rows(table: Any) -> list[list[str]]:
    # python-docx repeats a merged cell in each grid column and row it covers.
    return [[cell.text for cell in row.cells] for row in table.rows]


class _Numbering:
    """The number Word shows before a list paragraph, counted per list and level."""

    def __init__(self, document: Any) -> None:
        try:
            self.root = document.part.numbering_part.element
        except (KeyError, NotImplementedError, AttributeError):
            self.root = None
        self.counters: dict[str, list[int]] = {}
        self.formats: dict[tuple[str, int], tuple[str, str, int]] = {}

    def mark(self, paragraph: Any) -> str | None:
        """None: not a list paragraph; "": one without a visible mark."""
        num_id, level = self._num_pr(paragraph)
        if num_id is None or num_id == "0" or self.root is None:
            return None
        fmt, text, start = self._format(num_id, level)
        counts = self.counters.setdefault(num_id, [])
        while len(counts) <= level:
            counts.append(0)
        del counts[level + 1 :]
        counts[level] = counts[level] + 1 if counts[level] else start
        if fmt == "bullet":
            return "-"
        if fmt == "none":
            return ""

        def number(match: re.Match[str]) -> str:
            k = int(match.group(1)) - 1
            value = counts[k] if k < len(counts) and counts[k] else 1
            own = self._format(num_id, k)[0] if k != level else fmt
            return _render(value, own)

        return re.sub(r"%(\d)", number, text) or f"{counts[level]}."

    def _num_pr(self, paragraph: Any) -> tuple[str | None, int]:
        found = paragraph.paragraph_format.element.find(f"{_W}pPr/{_W}numPr")
        style = paragraph.style
        while found is None and style is not None:
            found = style.element.find(f"{_W}pPr/{_W}numPr")
            style = style.base_style
        if found is None:
            return None, 0
        num_id = _val(found.find(f"{_W}numId"))
        raw = _val(found.find(f"{_W}ilvl")) or "0"
        return num_id, min(int(raw), 8) if raw.isdigit() else 0

    def _format(self, num_id: str, level: int) -> tuple[str, str, int]:
        key = (num_id, level)
        if key not in self.formats:
            fmt, text, start = "decimal", f"%{level + 1}.", 1
            abstract = next(
                (
                    _val(num.find(f"{_W}abstractNumId"))
                    for num in self.root.findall(f"{_W}num")
                    if num.get(f"{_W}numId") == num_id
                ),
                None,
            )
            lvl = next(
                (
                    lvl
                    for node in self.root.findall(f"{_W}abstractNum")
                    if node.get(f"{_W}abstractNumId") == abstract
                    for lvl in node.findall(f"{_W}lvl")
                    if lvl.get(f"{_W}ilvl") == str(level)
                ),
                None,
            )
            if lvl is not None:
                fmt = _val(lvl.find(f"{_W}numFmt")) or fmt
                text = _val(lvl.find(f"{_W}lvlText")) or text
                raw = _val(lvl.find(f"{_W}start")) or "1"
                start = int(raw) if raw.isdigit() else 1
            self.formats[key] = (fmt, text, start)
        return self.formats[key]


def _val(element: Any) -> str | None:
    return None if element is None else element.get(f"{_W}val")


def _render(value: int, fmt: str) -> str:
    if fmt in ("lowerLetter", "upperLetter"):
        letters = ""
        n = value
        while n > 0:
            n, r = divmod(n - 1, 26)
            letters = chr(ord("a") + r) + letters
        return letters.upper() if fmt == "upperLetter" else letters
    if fmt in ("lowerRoman", "upperRoman"):
        out, n = "", value
        for amount, numeral in _ROMAN:
            while n >= amount:
                out, n = out + numeral, n - amount
        return out.upper() if fmt == "upperRoman" else out
    return str(value)
