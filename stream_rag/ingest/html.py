"""HTML read as text: headings as `#` lines, lists with their numbers, tables as row sentences,
FAQ structures (`dt`/`dd`, `details`/`summary`) as question headings over their answers, and a
page's navigation, header and footer left out. Every piece keeps its span of the source."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from .layout import Layout
from .tables import row_sentences

_BLOCK_TAGS = frozenset(
    {
        *("address", "article", "aside", "blockquote", "dd", "div", "dl", "fieldset"),
        *("figcaption", "figure", "form", "main", "p", "pre", "section"),
        *("caption", "legend", "details", "hr", "center"),
    }
)
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_SKIP_TAGS = frozenset(
    {"script", "style", "noscript", "template", "svg", "head", "iframe", "button", "select"}
)
_BOILERPLATE_TAGS = frozenset({"nav", "footer"})
_BOILERPLATE_ROLES = frozenset({"navigation", "contentinfo", "banner", "search"})
_BOILERPLATE_WORDS = frozenset(
    {"nav", "navbar", "navigation", "menu", "breadcrumb", "breadcrumbs", "footer", "cookie"}
)
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "wbr", "col", "area", "source"})
_SPACE = re.compile(r"\s+")
_MAIN = re.compile(r"<(?:main|article)[\s>]", re.IGNORECASE)


@dataclass(slots=True)
class _Block:
    kind: str  # "p", "h", "li", "row"
    group: int  # blocks of one list or table share a group
    parts: list[tuple[str, int, int, bool]] = field(default_factory=list)
    level: int = 0
    mark: str = ""

    def text(self) -> str:
        return "".join(p[0] for p in self.parts).strip()


@dataclass(slots=True)
class _Table:
    rows: list[list[str]] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)
    header_rows: int = 0
    carried: dict[int, tuple[str, int]] = field(default_factory=dict)  # column: (text, rows)
    cell: list[str] | None = None
    caption: list[str] | None = None
    caption_text: str = ""
    caption_span: tuple[int, int] = (0, 0)
    cell_span: int = 1
    cell_rows: int = 1
    row_start: int = 0
    row_all_th: bool = True
    in_head: bool = False


class _Reader(HTMLParser):
    def __init__(self, src: str) -> None:
        super().__init__(convert_charrefs=True)
        self.src = src
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", src)]
        self.blocks: list[_Block] = []
        self.current: _Block | None = None
        self.group = 0
        self.skip: tuple[str, int] | None = None  # the tag being skipped, nesting depth
        self.in_title = False
        self.title: _Block | None = None
        self.lists: list[list[int]] = []  # per open list: [ordered, next number]
        self.tables: list[_Table] = []
        self.heading_level = 0
        self.in_main = 0
        # A page with a main or article element: its header outside them is the site's (a
        # logo, a tagline); without one, a header may hold the page's own title.
        self.has_main = _MAIN.search(src) is not None

    def position(self) -> int:
        line, col = self.getpos()
        return self.line_starts[line - 1] + col

    # -- blocks ---------------------------------------------------------------------------

    def flush(self) -> None:
        if self.current is not None and self.current.text():
            self.blocks.append(self.current)
        self.current = None

    def open(self, kind: str, level: int = 0, mark: str = "") -> _Block:
        self.flush()
        self.current = _Block(kind, self.group, level=level, mark=mark)
        return self.current

    def ensure(self) -> _Block:
        return self.current if self.current is not None else self.open("p")

    # -- parser events --------------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and (self.skip is None or self.skip[0] == "head"):
            self.in_title = True
            self.title = _Block("h", -1, level=1)
            return
        if self.skip is not None:
            if tag == self.skip[0] and tag not in _VOID:
                self.skip = (tag, self.skip[1] + 1)
            return
        if tag in _SKIP_TAGS or self._boilerplate(tag, dict(attrs)):
            if tag not in _VOID:
                self.skip = (tag, 1)
            return
        if tag in ("main", "article"):
            self.in_main += 1
        if self.tables and self._table_start(tag, dict(attrs)):
            return
        if tag in _HEADINGS:
            self.heading_level = _HEADINGS[tag]
            self.open("h", level=_HEADINGS[tag])
        elif tag in ("dt", "summary"):
            self.open("h", level=min(6, self.heading_level + 1))
        elif tag in ("ul", "ol", "menu"):
            self.flush()
            start = dict(attrs).get("start")
            first = int(start) if start and start.strip().isdigit() else 1
            self.lists.append([tag == "ol", first])
            if len(self.lists) == 1:
                self.group += 1
        elif tag == "li":
            mark = "-"
            if self.lists and self.lists[-1][0]:
                value = dict(attrs).get("value")
                if value and value.strip().isdigit():
                    self.lists[-1][1] = int(value)
                mark = f"{self.lists[-1][1]}."
                self.lists[-1][1] += 1
            self.open("li", mark=mark)
        elif tag == "table":
            self.flush()
            self.tables.append(_Table())
        elif tag in _BLOCK_TAGS:
            if self.current is not None and self.current.kind == "li":
                # A paragraph inside a list item (a loose list) is the item's text.
                self.current.parts.append((" ", 0, 0, False))
            else:
                self.flush()
        elif tag == "br":
            block = self.ensure()
            block.parts.append((" ", 0, 0, False))

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
            return
        if self.skip is not None:
            if tag == self.skip[0]:
                depth = self.skip[1] - 1
                self.skip = None if depth == 0 else (tag, depth)
            return
        if tag in ("main", "article") and self.in_main:
            self.in_main -= 1
        if self.tables and self._table_end(tag):
            return
        if tag in ("ul", "ol", "menu"):
            self.flush()
            if self.lists:
                self.lists.pop()
        elif tag in _BLOCK_TAGS and self.current is not None and self.current.kind == "li":
            self.current.parts.append((" ", 0, 0, False))
        elif tag in _HEADINGS or tag in ("dt", "summary", "li") or tag in _BLOCK_TAGS:
            self.flush()
            if tag in ("dd", "details"):
                self.group += 1

    def handle_data(self, data: str) -> None:
        if self.skip is not None and not self.in_title:
            return
        start = self.position()
        end = self.src.find("<", start)
        end = len(self.src) if end < 0 else end
        if self.in_title:
            if self.title is not None:
                self.title.parts.append((data, start, end, data == self.src[start:end]))
            return
        table = self.tables[-1] if self.tables else None
        if table is not None and table.cell is not None:
            table.cell.append(data)
            return
        if table is not None and table.caption is not None:
            table.caption.append(data)
            return
        if table is not None:
            return  # text between cells
        collapsed = _SPACE.sub(" ", data)
        if not collapsed.strip() and self.current is None:
            return
        block = self.ensure()
        exact = collapsed == data and data == self.src[start:end]
        block.parts.append((collapsed, start, end, exact))

    # -- tables ---------------------------------------------------------------------------

    def _table_start(self, tag: str, attrs: dict[str, str | None]) -> bool:
        table = self.tables[-1]
        if tag == "thead":
            table.in_head = True
        elif tag == "tr":
            table.rows.append([])
            table.row_start = self.position()
            table.row_all_th = True
            self._carry(table)
        elif tag in ("td", "th"):
            if not table.rows:
                table.rows.append([])
                table.row_start = self.position()
            table.cell = []
            table.row_all_th = table.row_all_th and tag == "th"
            table.cell_span = _count(attrs.get("colspan"))
            table.cell_rows = _count(attrs.get("rowspan"))
        elif tag == "br" and table.cell is not None:
            table.cell.append(" ")
        elif tag == "caption":
            table.caption = []
            table.caption_span = (self.position(), self.position())
        else:
            return tag != "table"
        return True

    def _table_end(self, tag: str) -> bool:
        table = self.tables[-1]
        if tag == "thead":
            table.in_head = False
            table.header_rows = len(table.rows)
        elif tag in ("td", "th") and table.cell is not None:
            text = " ".join("".join(table.cell).split())
            row = table.rows[-1]
            for _ in range(table.cell_span):
                if table.cell_rows > 1:
                    table.carried[len(row)] = (text, table.cell_rows - 1)
                row.append(text)
                self._carry(table)
            table.cell = None
        elif tag == "tr":
            if table.rows and len(table.spans) < len(table.rows):
                table.spans.append((table.row_start, self.position() + len("</tr>")))
                if table.row_all_th and len(table.rows) == table.header_rows + 1:
                    table.header_rows += 1  # the leading rows of header cells only
        elif tag == "caption":
            table.caption_text = " ".join("".join(table.caption or []).split())
            table.caption_span = (table.caption_span[0], self.position() + len("</caption>"))
            table.caption = None
        elif tag == "table":
            self.tables.pop()
            self._emit_table(table)
        else:
            return True
        return True

    def _carry(self, table: _Table) -> None:
        """Cells of rows above that span down into this row, at its current column."""
        row = table.rows[-1]
        while len(row) in table.carried:
            text, left = table.carried.pop(len(row))
            column = len(row)
            row.append(text)
            if left > 1:
                table.carried[column] = (text, left - 1)

    def _emit_table(self, table: _Table) -> None:
        while len(table.spans) < len(table.rows):
            table.spans.append((table.row_start, self.position()))
        header = table.header_rows >= 1
        rows = table.rows
        if table.header_rows > 1:  # several header rows: their texts joined per column
            width = max(len(r) for r in rows[: table.header_rows])
            merged = [
                " ".join(dict.fromkeys(r[c] for r in rows[: table.header_rows] if c < len(r)))
                for c in range(width)
            ]
            rows = [merged, *rows[table.header_rows :]]
            spans = [table.spans[0], *table.spans[table.header_rows :]]
        else:
            spans = table.spans
        body_spans = [
            s
            for s, r in zip(
                spans[1:] if header else spans, rows[1:] if header else rows, strict=False
            )
            if any(c.strip() for c in r)
        ]
        self.flush()
        if table.caption_text:
            level = min(6, self.heading_level + 1)
            caption = (table.caption_text, *table.caption_span, False)
            self.blocks.append(_Block("h", self.group, [caption], level))
        self.group += 1
        for sentence, (s, e) in zip(row_sentences(rows, header), body_spans, strict=False):
            self.blocks.append(_Block("row", self.group, [(sentence, s, e, False)]))
        self.group += 1

    def _boilerplate(self, tag: str, attrs: dict[str, str | None]) -> bool:
        if tag in _BOILERPLATE_TAGS or (tag == "header" and self.has_main and not self.in_main):
            return True
        if (attrs.get("role") or "").lower() in _BOILERPLATE_ROLES:
            return True
        words = " ".join(attrs.get(a) or "" for a in ("class", "id")).lower()
        return any(w in _BOILERPLATE_WORDS for w in re.split(r"[\s_-]+", words))


def _count(value: str | None) -> int:
    return max(1, min(int(value), 1000)) if value and value.strip().isdigit() else 1


def html_layout(src: str) -> Layout:
    reader = _Reader(src)
    reader.feed(src)
    reader.close()
    reader.flush()
    blocks = reader.blocks
    title = reader.title
    first_heading = next((b for b in blocks if b.kind == "h"), None)
    if (
        title is not None
        and title.text()
        and (first_heading is None or first_heading.text() != " ".join(title.text().split()))
    ):
        blocks = [title, *blocks]
    layout = Layout()
    previous: _Block | None = None
    for block in blocks:
        if previous is not None:
            together = block.kind in ("li", "row") and (
                (previous.kind == block.kind and previous.group == block.group)
                or (previous.kind == "p" and previous.text().endswith(":"))
            )
            layout.add("\n" if together else "\n\n")
        if block.kind == "h":
            layout.add("#" * max(1, block.level) + " ")
        elif block.kind == "li":
            layout.add(block.mark + " ")
        _write(layout, block)
        if block.kind == "li":
            layout.end_sentence()
        previous = block
    return layout


def _write(layout: Layout, block: _Block) -> None:
    """The block's pieces, spaces collapsed across them and trimmed at both ends."""
    started = False
    space = False  # a space is owed before the next word
    for text, start, end, exact in block.parts:
        if not text.strip():
            space = space or bool(text)
            continue
        lead = len(text) - len(text.lstrip())
        body = text.strip()
        if started and (space or lead):
            layout.add(" ")
        if exact:
            layout.add(body, (start + lead, start + lead + len(body)), exact=True)
        else:
            layout.add(" ".join(body.split()), (start, end))
        started = True
        space = len(text.rstrip()) < len(text)
