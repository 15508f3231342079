"""Tables read row by row: each row a sentence that names its headers, so a row found on its
own still says what its cells are ("Main Street store: Weekdays 9 am to 6 pm, Sunday Closed.")."""

from __future__ import annotations

import re
from collections.abc import Sequence

_ENDS = (".", "!", "?", "。", "！", "？")


def clean(cell: str) -> str:
    """A cell's words on one line; a dash alone stands for an empty cell."""
    text = " ".join(cell.split())
    return "" if text.strip("-–— ") == "" else text


def row_sentences(rows: Sequence[Sequence[str]], header: bool) -> list[str]:
    """One sentence per row (`header`: the first row names the columns). A cell that spans
    columns (repeated, side by side, in `rows`) is read once, under its headers joined."""
    return [sentence for _, sentence in indexed_row_sentences(rows, header)]


def indexed_row_sentences(rows: Sequence[Sequence[str]], header: bool) -> list[tuple[int, str]]:
    """`row_sentences`, each with the index in `rows` of the row it reads."""
    cleaned = [(i, [clean(c) for c in row]) for i, row in enumerate(rows)]
    kept = [(i, row) for i, row in cleaned if any(row)]
    if not kept:
        return []
    heads: list[str] = list(kept[0][1]) if header and len(kept) > 1 else []
    body = kept[1:] if heads else kept
    return [(i, s) for i, row in body if (s := _sentence(row, heads))]


def _sentence(row: Sequence[str], heads: Sequence[str]) -> str:
    # Columns side by side with one value (a merged cell) are read once.
    groups: list[tuple[list[str], str]] = []
    for i, value in enumerate(row):
        head = heads[i] if i < len(heads) else ""
        if groups and value and value == groups[-1][1] and i > 0:
            if head and head not in groups[-1][0]:
                groups[-1][0].append(head)
            continue
        groups.append(([head] if head else [], value))
    filled = [(h, v) for h, v in groups if v]
    if not filled:
        return ""
    key_heads, key = groups[0]
    if key and not key[0].isalpha() and key_heads:
        key = f"{key_heads[0]} {key}"  # "Code 4: Not logged in.", not "4: Not logged in."
    if not key:
        # No row label: every cell with its header.
        parts = [f"{' and '.join(h)} {v}".strip() for h, v in filled]
        return _end(", ".join(parts))
    rest = [(h, v) for h, v in groups[1:] if v]
    if not rest:
        return _end(key)
    if not heads or len(row) == 2:
        # One value: its column's name adds nothing ("Red cross: Sync stopped.").
        return _end(f"{key}: {', '.join(v for _, v in rest)}")
    return _end(f"{key}: " + ", ".join(f"{' and '.join(h)} {v}".strip() for h, v in rest))


# A row as `row_sentences` writes it: "label: values." on a line of its own; never a list
# item ("- Cleaning fee: 60 euros ..."), which extraction writes with its marker.
_ROW_LINE = re.compile(r"(?![-*+•]\s|\d+[.)]\s)[^\s:][^:\n]{0,120}: \S[^\n]*[.!?。！？]")


def rendered_rows(lines: Sequence[str]) -> tuple[list[str], list[str]] | None:
    """A paragraph of rows as extraction writes them, after an optional lead-in line ending
    in ":": `(lead_in, rows)`, or None when it is not one (two rows at least)."""
    lead = list(lines[:1]) if lines and lines[0].rstrip().endswith(":") else []
    rows = [line.strip() for line in lines[len(lead) :]]
    if len(rows) < 2 or not all(_ROW_LINE.fullmatch(row) for row in rows):
        return None
    return lead, rows


def _end(sentence: str) -> str:
    sentence = sentence.strip()
    return sentence if sentence.endswith(_ENDS) else sentence + "."
