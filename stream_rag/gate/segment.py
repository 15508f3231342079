"""Split a streamed answer into units (sentences, list items, headings, code blocks).

`SentenceBuffer.feed` returns a unit as soon as no later text can move its end; `close` returns
the rest. `split_segments` runs the same machine over a whole text, so for any split of a text
into tokens the streamed units equal `split_segments(text)`. Every decision reads a bounded
window past a cursor, so feeding costs about the same as one pass over the text. What a line
opens and list labels are read in markup.py; whether punctuation ends a sentence, in
boundaries.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .boundaries import NO, OPENERS, TERMINALS, WAIT, WORD_CHAR, YES, sentence_end
from .markup import BLANK_CHARS, BULLETS, LABEL, LABEL_ONLY, LABEL_PREFIX, classify, skip, successor

Kind = Literal["sentence", "list_item", "heading", "code"]


@dataclass(frozen=True, slots=True)
class Segment:
    """One unit: its raw text (markers kept, outer whitespace stripped) and what it is."""

    text: str
    kind: Kind


_LINE, _PROSE, _CODE, _HEAD = 0, 1, 2, 3

_CLOSERS = frozenset(OPENERS.values())

_STOP_SET = TERMINALS + "\n" + "".join(OPENERS) + "".join(_CLOSERS)
_STOPS = re.compile(f"[{_STOP_SET}]")
# With an inline list running ("1) a 2) b"), also stop where the next label may start.
_LABEL_STOPS = {
    kind: (re.compile(f"[{_STOP_SET}]|(?<=[ \t])[{chars}]"), re.compile(f"[{_STOP_SET}{chars}]"))
    for kind, chars in (("digit", "0-9"), ("letter", "a-z"), ("bullet", BULLETS))
}
_NEWLINE = re.compile("\n")
_BLANKS = re.compile(r"[ \t\r\f\v]*")
_TABLE_RULE = re.compile(r"[ \t]*(?:\|[ \t\r:|-]*)?")
_LONG, _LOOKBACK = 4096, 256  # see SentenceBuffer._drain


class SentenceBuffer:
    """Feed tokens; get back the units whose end no later text can move. `close` flushes."""

    __slots__ = (
        "_buf",
        "_code",
        "_fast",
        "_fast_label",
        "_fence",
        "_has_word",
        "_head",
        "_held",
        "_i",
        "_kind",
        "_label",
        "_line_at",
        "_line_kind",
        "_mode",
        "_stack",
        "_start",
        "_stops",
        "_want_label",
    )

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._buf = ""
        self._i = 0  # scan cursor: nothing before it needs another look
        self._start = -1  # where the pending unit starts in _buf; -1 between units
        self._mode = _LINE
        self._kind: Kind = "sentence"
        self._stack: list[tuple[str, int]] = []  # brackets open in the current sentence
        self._label: str | None = None  # next inline list label; "" until the block's start is read
        self._want_label = False
        self._stops = self._fast_label = _STOPS
        self._fast: re.Pattern[str] | None = None  # a token it does not match needs no scan
        self._held: list[str] = []  # such tokens, not yet in _buf
        self._line_at, self._line_kind = -1, ""  # the last line _classify settled
        self._head: list[str] = []  # the start of a long pending sentence, out of _buf
        self._has_word = False  # whether _head has a word character
        self._fence = ""
        self._code: list[str] = []

    def feed(self, token: str) -> list[Segment]:
        """Add a token; return the units that are now complete (often none)."""
        fast = self._fast
        if fast is not None and fast.search(token) is None:
            self._held.append(token)  # joined later: no copy of a long buffer per token
            return []
        return self._drain(token, final=False)

    def close(self) -> list[Segment]:
        """End of stream: return everything still pending, and start afresh."""
        out = self._drain("", final=True)
        self._reset()
        return out

    def _drain(self, token: str, final: bool) -> list[Segment]:
        out: list[Segment] = []
        if self._held:
            self._buf = "".join((self._buf, *self._held, token))
            self._held.clear()
        else:
            self._buf += token
        self._fast = None
        while True:
            mode = self._mode
            if mode == _PROSE:
                progressed = self._prose(final, out)
            elif mode == _LINE:
                progressed = self._line(final)
            elif mode == _CODE:
                progressed = self._code_block(final, out)
            else:
                progressed = self._one_line(final, out)
            if not progressed:
                break
        if self._mode == _PROSE and self._start >= 0 and self._i - self._start > _LONG:
            # A long sentence: park its head so each slow feed copies a bounded buffer. The
            # rules look back at most _LOOKBACK characters, so they see the same text.
            cut = self._i - _LOOKBACK
            head = self._buf[self._start : cut]
            self._head.append(head)
            self._has_word = self._has_word or WORD_CHAR.search(head) is not None
            self._start = cut
        cut = self._i if self._start < 0 else self._start
        if cut:
            self._buf = self._buf[cut:]
            self._i -= cut
            if self._start >= 0:
                self._start -= cut
            if self._stack:
                self._stack = [(c, p - cut) for c, p in self._stack]
            self._line_at = -1
        return out

    def _classify(self, p: int, final: bool) -> str | None:
        """`_classify` at `p`, remembered: a unit's end and the next block ask about one line."""
        if p == self._line_at:
            return self._line_kind
        what = classify(self._buf, p, final)
        if what is not None and what != "block":
            self._line_at, self._line_kind = p, what
        return what

    def _emit(self, end: int, out: list[Segment]) -> None:
        text = self._buf[self._start : end]
        if self._head:
            text = "".join((*self._head, text))
            self._head, self._has_word = [], False
        text = text.strip()
        if text:
            out.append(Segment(text, self._kind))
        if self._kind == "list_item":
            self._kind = "sentence"  # later sentences of a list item
        self._start = -1

    def _line(self, final: bool) -> bool:
        buf, i = self._buf, self._i
        what = self._classify(i, final)
        if what is None or what == "end" or what == "block":
            return False
        if what == "blank":
            self._i = buf.index("\n", i) + 1
            return True
        if what == "fence":
            self._mode, self._start, self._fence, self._code = _CODE, i, "", []
            return True
        start = skip(_BLANKS, buf, i)
        if what in ("heading", "rule", "row"):
            self._mode, self._start, self._i = _HEAD, start, start
            self._kind = "sentence" if what == "row" else "heading"
            return True
        self._mode, self._start, self._i = _PROSE, -1, start
        self._kind = "list_item" if what == "item" else "sentence"
        self._label, self._stops, self._fast_label = "", _STOPS, _STOPS
        return True

    def _one_line(self, final: bool, out: list[Segment]) -> bool:
        """A heading, a rule or a table row: the line is the unit."""
        buf = self._buf
        n = len(buf)
        nl = buf.find("\n", self._i)
        if nl < 0:
            self._i = n
            if not final:
                self._fast = _NEWLINE
                return False
            nl = n
        elif self._kind == "sentence":  # a table row takes the "|---|" line under it along
            e = skip(_TABLE_RULE, buf, nl + 1)
            if e == n and not final:
                self._i = nl
                return False
            rule = buf[nl + 1 : e]
            if "|" in rule and "-" in rule and (e == n or buf[e] == "\n"):
                nl = e
        self._emit(nl, out)
        self._mode, self._i = _LINE, min(nl + 1, n)
        return True

    def _code_block(self, final: bool, out: list[Segment]) -> bool:
        buf = self._buf
        while True:
            nl = buf.find("\n", self._i)
            if nl < 0:
                self._i = len(buf)
                if not final:
                    self._fast = _NEWLINE
                    return False
                end = len(buf)
            else:
                line = buf[self._start : nl]
                if not self._fence:  # the opening line: ``` or ~~~, three or more
                    mark = line.lstrip(" \t")
                    self._fence = mark[: len(mark) - len(mark.lstrip(mark[0]))]
                    stripped = ""
                else:
                    stripped = line.strip()
                if not (
                    stripped
                    and len(stripped) >= len(self._fence)
                    and not stripped.strip(self._fence[0])
                ):
                    self._code.append(buf[self._start : nl + 1])
                    self._start = self._i = nl + 1
                    continue
                end = nl
            text = ("".join(self._code) + buf[self._start : end]).strip()
            out.append(Segment(text, "code"))
            self._code, self._start, self._mode = [], -1, _LINE
            self._i = min(end + 1, len(buf))
            return True

    def _prose(self, final: bool, out: list[Segment]) -> bool:
        buf = self._buf
        n = len(buf)
        while True:
            if self._start < 0:  # between sentences: find where the next one starts
                j = self._i
                while j < n and buf[j] in BLANK_CHARS:
                    j += 1
                if j == n:
                    self._i = j
                    if final:
                        self._mode = _LINE
                    elif self._label != "":  # a label, if any, is read on the next scan
                        self._fast = self._fast_label
                    return final
                if buf[j] == "\n":
                    what = self._classify(j + 1, final)
                    if what is None:
                        self._i = j
                        return False
                    self._i = j + 1
                    if what != "para":
                        self._mode = _LINE
                        return True
                    continue
                self._start = self._i = j
                self._stack = []
                self._want_label = self._label is not None
            if self._want_label and not self._read_label(final):
                return False
            m = self._stops.search(buf, self._i)
            if m is None:
                self._i = n
                if final:
                    self._emit(n, out)
                    self._mode = _LINE
                    return True
                self._fast = self._fast_label
                return False
            pos = m.start()
            c = buf[pos]
            if c == "\n":
                what = self._classify(pos + 1, final)
                if what is None:
                    self._i = pos
                    return False
                self._i = pos + 1
                if what != "para":  # a blank line or a new block ends the unit
                    self._emit(pos, out)
                    self._mode = _LINE
                    return True
                continue
            if c in OPENERS:
                self._stack.append((c, pos))
                self._i = pos + 1
                continue
            if c in _CLOSERS:
                if self._stack and OPENERS[self._stack[-1][0]] == c:
                    self._stack.pop()
                self._i = pos + 1
                continue
            if c in TERMINALS:
                opened = self._stack[-1][1] if self._stack else None
                verdict, at = sentence_end(
                    buf, self._start, pos, final, opened, self._has_word, self._classify
                )
            else:
                verdict, at = self._inline_label(pos, final)
            if verdict == WAIT:
                self._i = pos
                return False
            if verdict == YES:
                self._emit(at, out)
            self._i = at

    def _read_label(self, final: bool) -> bool:
        """Note whether the sentence opens with a list label; False while it cannot tell yet."""
        buf, s = self._buf, self._start
        if not final and len(buf) - s < 8 and LABEL_PREFIX.match(buf, s):
            return False
        self._want_label = False
        m = LABEL.match(buf, s)
        if self._label == "" or (m and m.group() == self._label):
            expected = successor(m) if m else None
            self._label = expected
            if expected is None:
                self._stops = self._fast_label = _STOPS
            else:
                first = expected[0]
                kind = "digit" if first.isdigit() else "letter" if first.isalpha() else "bullet"
                self._stops, self._fast_label = _LABEL_STOPS[kind]
        return True

    def _inline_label(self, pos: int, final: bool) -> tuple[int, int]:
        """`pos` may start the next label of an inline list ("1) a 2) b"): split before it."""
        buf, expected, start = self._buf, self._label or "", self._start
        n, end = len(buf), pos + len(self._label or "")
        if not buf.startswith(expected, pos):
            waiting = not final and n < end and expected.startswith(buf[pos:])
            return (WAIT if waiting else NO), pos + 1
        if end == n:
            return (NO, pos + 1) if final else (WAIT, 0)
        if buf[end] not in " \t" or (not self._has_word and not WORD_CHAR.search(buf, start, pos)):
            return NO, pos + 1
        if pos - start < 12 and LABEL_ONLY.fullmatch(buf[start:pos].rstrip()):
            return NO, pos + 1
        return YES, pos


def split_segments(text: str) -> list[Segment]:
    """Units of a whole text: exactly what streaming it through a `SentenceBuffer` yields."""
    return SentenceBuffer()._drain(text, final=True)
