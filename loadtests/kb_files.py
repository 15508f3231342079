"""The shape of a dev knowledge base's binary file as the document modules declare it
(`kb_documents*.py`, `kb_fixtures.py`): where it goes and the text it holds. `kb_fixtures`
writes every one of them."""

from __future__ import annotations

from dataclasses import dataclass

# (kind, text): kind is "h1"/"h2" (heading), "p" (paragraph), "num"/"bullet" (list item),
# or "table" (rows of cells, the first row the header; "<" merges a cell into the one on its
# left, "^" into the one above).
DocxBlock = tuple[str, object]
# A PDF page: its lines.
Page = list[str]


@dataclass(frozen=True, slots=True)
class KbFile:
    """A DOCX (`blocks`) or a PDF (`pages`) at `path` under loadtests/answers; `saved`: the time
    its writer records as its last change (ISO for a DOCX, a PDF date for a PDF), if any."""

    path: str
    blocks: tuple[DocxBlock, ...] = ()
    pages: tuple[Page, ...] = ()
    saved: str | None = None

    @staticmethod
    def docx(path: str, blocks: list[DocxBlock], saved: str | None = None) -> KbFile:
        return KbFile(path, blocks=tuple(blocks), saved=saved)

    @staticmethod
    def pdf(path: str, pages: list[Page], saved: str | None = None) -> KbFile:
        return KbFile(path, pages=tuple(pages), saved=saved)
