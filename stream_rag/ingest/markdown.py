"""Markdown read as text: emphasis, links, images, code marks, inline HTML, footnote marks and
front matter removed; tables read as row sentences; lists keep their numbers and stay with
their lead-in sentence; `#` heading lines are kept, as every format's headings are (they give
what follows its context). Every piece keeps its span of the source (layout.py)."""

from __future__ import annotations

import re

from .layout import Layout
from .tables import row_sentences

_LINE = re.compile(r"[^\n]*\n?")
_FRONT_FENCE = re.compile(r"---[ \t]*\r?\n?")
_FRONT_END = re.compile(r"(?:---|\.\.\.)[ \t]*\r?\n?")
_FRONT_TITLE = re.compile(r"title:[ \t]*(['\"]?)(.+?)\1[ \t]*\r?\n?$")
_HEADING = re.compile(r"[ ]{0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"[ ]{0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"[ ]{0,3}(```+|~~~+)")
_RULE = re.compile(r"[ ]{0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_LIST_ITEM = re.compile(r"([ \t]*)([-*+]|\d{1,9}[.)])([ \t]+)(.*)$")
_TABLE_RULE = re.compile(r"[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_FOOTNOTE_DEF = re.compile(r"\[\^([^\]\s]+)\]:[ \t]*(.*)$")
_LINK_DEF = re.compile(r"[ ]{0,3}\[[^\]^][^\]]*\]:[ \t]*\S+.*$")
_QUOTE = re.compile(r"[ ]{0,3}(?:>[ \t]?)+")
_COMMENT = re.compile(r"[ \t]*<!--.*-->[ \t]*$")

# Inline markup, tried left to right; the group named after each kind holds what is kept.
_INLINE = re.compile(
    r"(?P<code>`+)(?P<code_text>.+?)(?P=code)"
    r"|!\[(?P<image>[^\]]*)\]\([^)]*\)"
    r"|\[(?P<link>[^\]]+)\]\((?:[^()]|\([^)]*\))*\)"
    r"|\[\^[^\]\s]+\]"
    r"|\[(?P<ref>[^\]]+)\]\[[^\]]*\]"
    r"|<(?P<auto>(?:https?://|mailto:)[^>\s]+)>"
    r"|(?P<strong>\*\*|__)(?=\S)(?P<strong_text>.+?)(?<=\S)(?P=strong)"
    r"|(?P<strike>~~)(?=\S)(?P<strike_text>.+?)(?<=\S)~~"
    r"|\*(?=[^\s*])(?P<em>[^*]+?)(?<=\S)\*"
    r"|(?<![\w])_(?=[^\s_])(?P<em2>[^_]+?)(?<=\S)_(?![\w])"
    r"|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>"
    r"|\\(?P<escaped>[\\`*_{}\[\]()#+\-.!|~<>])"
)
_KEPT = ("code_text", "image", "link", "ref", "auto", "strong_text", "strike_text", "em", "em2")


def inline(layout: Layout, src: str, start: int, end: int) -> None:
    """Append `src[start:end]` with its inline markup removed."""
    pos = start
    for match in _INLINE.finditer(src, start, end):
        layout.copy(src, pos, match.start())
        pos = match.end()
        if match.group("escaped") is not None:
            layout.copy(src, match.start("escaped"), match.end("escaped"))
            continue
        kept = next((k for k in _KEPT if match.group(k) is not None), None)
        if kept is None:
            continue  # a footnote mark or an HTML tag: nothing is shown
        if kept in ("code_text", "auto", "image"):
            layout.copy(src, match.start(kept), match.end(kept))
        else:
            inline(layout, src, match.start(kept), match.end(kept))
    layout.copy(src, pos, end)


def plain(src: str, start: int, end: int) -> str:
    scratch = Layout()
    inline(scratch, src, start, end)
    return scratch.text()


def markdown_layout(src: str) -> Layout:
    lines = [(m.start(), m.end()) for m in _LINE.finditer(src) if m.end() > m.start()]
    return _Reader(src, lines).read()


class _Reader:
    def __init__(self, src: str, lines: list[tuple[int, int]]) -> None:
        self.src = src
        # Each line's span without its line break.
        self.lines = [(s, s + len(src[s:e].rstrip("\r\n"))) for s, e in lines]
        self.layout = Layout()
        self.footnotes: dict[str, list[tuple[int, int]]] = {}
        self.pending: list[str] = []  # footnotes referenced by the paragraph being written
        self.shown: set[str] = set()

    def line(self, i: int) -> str:
        s, e = self.lines[i]
        return self.src[s:e]

    def read(self) -> Layout:
        i = self._front_matter()
        self._collect_footnotes(i)
        n = len(self.lines)
        while i < n:
            text = self.line(i)
            if (
                not text.strip()
                or _RULE.match(text)
                or _LINK_DEF.match(text)
                or _COMMENT.match(text)
            ):
                i += 1
            elif m := _FOOTNOTE_DEF.match(text):
                i = self._skip_footnote(i)
                if m.group(1) not in self.shown:
                    self._footnote(m.group(1))
            elif fence := _FENCE.match(text):
                i = self._code(i, fence.group(1))
            elif m := _HEADING.match(text):
                s = self.lines[i][0]
                level = len(m.group(1))
                self._heading(i, level, s + m.start(2) if m.group(2) else None, s + m.end(2))
                i += 1
            elif (
                i + 1 < n
                and self.line(i + 1).strip()
                and _SETEXT.match(self.line(i + 1))
                and not _LIST_ITEM.match(text)
                and "|" not in text
            ):
                level = 1 if self.line(i + 1).strip().startswith("=") else 2
                s, e = self.lines[i]
                self._heading(i, level, s + len(text) - len(text.lstrip()), e)
                i += 2
            elif "|" in text and i + 1 < n and _TABLE_RULE.match(self.line(i + 1)):
                i = self._table(i)
            elif _LIST_ITEM.match(text):
                i = self._list(i)
            else:
                i = self._paragraph(i)
        return self.layout

    # -- blocks ---------------------------------------------------------------------------

    def _front_matter(self) -> int:
        if not self.lines or not _FRONT_FENCE.fullmatch(self.line(0)):
            return 0
        for j in range(1, len(self.lines)):
            if _FRONT_END.fullmatch(self.line(j)):
                has_heading = any(
                    _HEADING.match(self.line(k)) for k in range(j + 1, len(self.lines))
                )
                for k in range(1, j):
                    title = _FRONT_TITLE.match(self.line(k))
                    if title and not has_heading:
                        self._break()
                        self.layout.add("# ")
                        self.layout.copy(self.src, *self._span(k, title, 2))
                return j + 1
        return 0  # no closing fence: not front matter

    def _span(self, i: int, match: re.Match[str], group: int) -> tuple[int, int]:
        s = self.lines[i][0]
        return s + match.start(group), s + match.end(group)

    def _break(self, lead_in: bool = False) -> None:
        if self.layout.length:
            self.layout.add("\n" if lead_in else "\n\n")

    def _heading(self, i: int, level: int, start: int | None, end: int) -> None:
        self._flush_footnotes()
        if start is None:
            return
        s = self.lines[i][0]
        self._break()
        self.layout.add("#" * level + " ", (s, s + level))
        inline(self.layout, self.src, start, end)

    def _code(self, i: int, fence: str) -> int:
        j = i + 1
        first = True
        while j < len(self.lines) and not self.line(j).lstrip().startswith(fence):
            if self.line(j).strip():
                if first:
                    self._flush_footnotes()
                    self._break()
                    first = False
                else:
                    self.layout.add("\n")
                self.layout.copy(self.src, *self.lines[j])
            j += 1
        return j + 1

    def _paragraph(self, i: int) -> int:
        self._flush_footnotes()
        self._break()
        first = True
        while i < len(self.lines):
            text = self.line(i)
            if not text.strip() or _HEADING.match(text) or _FENCE.match(text) or _RULE.match(text):
                break
            if not first and (_LIST_ITEM.match(text) or _FOOTNOTE_DEF.match(text)):
                break
            if not first:
                self.layout.add("\n")
            s, e = self.lines[i]
            quote = _QUOTE.match(text)
            s += quote.end() if quote else len(text) - len(text.lstrip())
            self._note_refs(s, e)
            inline(self.layout, self.src, s, e)
            first = False
            i += 1
        return i

    def _list(self, i: int) -> int:
        self._flush_footnotes()
        # A list stays in the paragraph of the sentence that leads in to it.
        self._break(lead_in=self.layout.ends_with(":"))
        first = True
        # The next number per indent, as a renderer numbers them ("1." on every item of a
        # list reads 1, 2, 3); a shallower item ends the deeper lists.
        numbers: dict[int, tuple[int, str]] = {}
        while i < len(self.lines):
            text = self.line(i)
            item = _LIST_ITEM.match(text)
            if item is None:
                if not text.strip():
                    # A blank line inside a list: the list goes on if another item follows.
                    nxt = i + 1
                    if nxt < len(self.lines) and _LIST_ITEM.match(self.line(nxt)):
                        i = nxt
                        continue
                    break
                if _HEADING.match(text) or (not text[:1].isspace() and "|" in text):
                    break
                # A continuation line of the item.
                s, e = self.lines[i]
                s += len(text) - len(text.lstrip())
                self.layout.add(" ")
                self._note_refs(s, e)
                inline(self.layout, self.src, s, e)
                i += 1
                continue
            if not first:
                self.layout.end_sentence()
                self.layout.add("\n")
            s = self.lines[i][0]
            mark = item.group(2)
            indent = len(item.group(1).expandtabs(4))
            for deeper in [d for d in numbers if d > indent]:
                del numbers[deeper]
            if mark[0].isdigit():
                number, delimiter = numbers.get(indent, (int(mark[:-1]), mark[-1]))
                if delimiter != mark[-1]:  # another delimiter starts another list
                    number, delimiter = int(mark[:-1]), mark[-1]
                numbers[indent] = (number + 1, delimiter)
                self.layout.add(f"{number}{delimiter}", (s + item.start(2), s + item.end(2)))
            else:
                numbers.pop(indent, None)
                self.layout.add("-", (s + item.start(2), s + item.end(2)))
            self.layout.add(" ")
            self._note_refs(s + item.start(4), s + item.end(4))
            inline(self.layout, self.src, s + item.start(4), s + item.end(4))
            first = False
            i += 1
        self.layout.end_sentence()
        return i

    def _table(self, i: int) -> int:
        self._flush_footnotes()
        rows: list[tuple[list[str], tuple[int, int]]] = [(self._cells(i), self.lines[i])]
        j = i + 2
        while j < len(self.lines) and "|" in self.line(j) and self.line(j).strip():
            rows.append((self._cells(j), self.lines[j]))
            j += 1
        sentences = row_sentences([cells for cells, _ in rows], header=True)
        spans = [span for cells, span in rows[1:] if any(c.strip() for c in cells)]
        self._break(lead_in=self.layout.ends_with(":"))
        for k, (sentence, span) in enumerate(zip(sentences, spans, strict=False)):
            if k:
                self.layout.add("\n")
            self.layout.add(sentence, span)
        return j

    def _cells(self, i: int) -> list[str]:
        s, e = self.lines[i]
        text = self.src[s:e].strip()
        if text.startswith("|"):
            text = text[1:]
        if text.endswith("|") and not text.endswith("\\|"):
            text = text[:-1]
        cells = re.split(r"(?<!\\)\|", text)
        return [plain(cell, 0, len(cell)).replace("\\|", "|") for cell in cells]

    # -- footnotes ------------------------------------------------------------------------

    def _collect_footnotes(self, i: int) -> None:
        while i < len(self.lines):
            if m := _FOOTNOTE_DEF.match(self.line(i)):
                s = self.lines[i][0]
                spans = [(s + m.start(2), s + m.end(2))]
                j = i + 1
                while j < len(self.lines) and self.line(j)[:1] in (" ", "\t"):
                    if self.line(j).strip():
                        t = self.line(j)
                        spans.append(
                            (self.lines[j][0] + len(t) - len(t.lstrip()), self.lines[j][1])
                        )
                    j += 1
                self.footnotes.setdefault(m.group(1), spans)
                i = j
            else:
                i += 1

    def _skip_footnote(self, i: int) -> int:
        j = i + 1
        while j < len(self.lines) and self.line(j)[:1] in (" ", "\t"):
            j += 1
        return j

    def _note_refs(self, start: int, end: int) -> None:
        for ref in re.finditer(r"\[\^([^\]\s]+)\](?!:)", self.src[start:end]):
            name = ref.group(1)
            if name in self.footnotes and name not in self.shown and name not in self.pending:
                self.pending.append(name)

    def _flush_footnotes(self) -> None:
        """A footnote is read right after the paragraph that refers to it, as its own."""
        pending, self.pending = self.pending, []
        for name in pending:
            self._footnote(name)

    def _footnote(self, name: str) -> None:
        if name in self.shown or name not in self.footnotes:
            return
        self.shown.add(name)
        self._break()
        for k, (s, e) in enumerate(self.footnotes[name]):
            if k:
                self.layout.add(" ")
            inline(self.layout, self.src, s, e)
