"""Table rows as sentences the extractive generator can quote: a row ends in no full stop, so
without this a question answered by a table (exit codes, status icons, prices by region) was
never answered. Markdown tables come as one paragraph; HTML and DOCX ones (cells parted by
" | " at extraction) as a paragraph a row.
"""

from __future__ import annotations

import re

__all__ = ["Table", "cells"]

_SEPARATOR = re.compile(r"^\s*\|?(?:\s*:?-{2,}:?\s*\|?)+\s*$")


def cells(line: str) -> list[str] | None:
    """The cells of a table row ("a | b", "| a | b |"), None if the line is not one."""
    if "|" not in line:
        return None
    parts = [c.strip() for c in line.strip().strip("|").split("|")]
    return parts if len(parts) >= 2 and any(parts) else None


def is_separator(line: str) -> bool:
    return bool(_SEPARATOR.match(line))


class Table:
    """The rows of the table being read; its first row is the header."""

    def __init__(self) -> None:
        self.header: list[str] | None = None

    def reset(self) -> None:
        self.header = None

    def read(self, lines: list[str]) -> list[str] | None:
        """The sentences of a paragraph made only of rows (None if it is not one)."""
        read = [cells(line) for line in lines if not is_separator(line)]
        rows = [row for row in read if row is not None]
        if not rows or len(rows) < len(read):
            return None
        out: list[str] = []
        for row in rows:
            if self.header is None:
                self.header = row
            elif sentence := self.sentence(row):
                out.append(sentence)
        return out

    def sentence(self, row: list[str]) -> str | None:
        """ "Red cross: Sync stopped."; "Code 4: Not logged in." (a row that opens with a number
        is named by its column); "Japan: Standard days 12, Express price $32.00." (several
        values, each with its column's name)."""
        header = self.header or []
        first, rest = row[0], row[1:]
        if not first or not any(rest):
            return None
        if not first[0].isalpha() and header and header[0]:
            first = f"{header[0]} {first}"
        if len(rest) == 1:
            body = rest[0]
        else:
            names = header[1:] + [""] * len(rest)
            body = ", ".join(f"{n} {v}" if n else v for n, v in zip(names, rest, strict=False) if v)
        return f"{first}: {body}" + ("" if body.endswith((".", "!")) else ".")
