"""Split a streamed answer into units (sentences, list items, headings, code blocks).

`SentenceBuffer.feed` returns a unit as soon as no later text can move its end; `close` returns
the rest. `split_segments` runs the same machine over a whole text, so for any split of a text
into tokens the streamed units equal `split_segments(text)`. Every decision reads a bounded
window past a cursor, so feeding costs about the same as one pass over the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import blingfire

from .citations import MARKER_RE

Kind = Literal["sentence", "list_item", "heading", "code"]


@dataclass(frozen=True, slots=True)
class Segment:
    """One unit: its raw text (markers kept, outer whitespace stripped) and what it is."""

    text: str
    kind: Kind


# A decision about a possible boundary: wait for more text, not a boundary, or a boundary.
_WAIT, _NO, _YES = 0, 1, 2
_LINE, _PROSE, _CODE, _HEAD = 0, 1, 2, 3

# Look-alike characters are spelled as escapes (ruff RUF001).
_CJK_TERMINALS = "\u3002\uff01\uff1f"  # ideographic full stop, fullwidth ! and ?
_TERMINALS = ".!?\u2026" + _CJK_TERMINALS  # with the ellipsis character
_BULLETS = "\u2022\u2043\u2023\u25e6\u25aa"  # bullet, hyphen bullet, triangle, white, square
_OPENERS = {"(": ")", "\uff08": "\uff09", "《": "》", "「": "」", "『": "』", "〈": "〉"}
_CLOSERS = frozenset(_OPENERS.values())
_CLOSER_CHARS = "\"'\u201d\u2019\u00bb)]" + "".join(_OPENERS.values())
_OPENING_PUNCT = "\"'\u201c\u2018([{*_<"

_STOP_SET = _TERMINALS + "\n" + "".join(_OPENERS) + "".join(_CLOSERS)
_STOPS = re.compile(f"[{_STOP_SET}]")
# With an inline list running ("1) a 2) b"), also stop where the next label may start.
_LABEL_STOPS = {
    kind: (re.compile(f"[{_STOP_SET}]|(?<=[ \t])[{chars}]"), re.compile(f"[{_STOP_SET}{chars}]"))
    for kind, chars in (("digit", "0-9"), ("letter", "a-z"), ("bullet", _BULLETS))
}
_NEWLINE = re.compile("\n")
_CJK_TERMS = frozenset(_CJK_TERMINALS)
_BLANK_CHARS = " \t\r\f\v"
_BLANKS = re.compile(r"[ \t\r\f\v]*")
_BLANK_LINE = re.compile(r"[ \t\r\f\v]*(\n)?")
_TABLE_RULE = re.compile(r"[ \t]*(?:\|[ \t\r:|-]*)?")
_RULE_RUN = re.compile(r"([-*_])(?:[ \t\r]*\1)*[ \t\r]*")
_WORD_CHAR = re.compile(r"\w")
_SPACED_DOTS = re.compile(r"\.(?:[ \t]+\.)*")
_NEXT_WORD = re.compile(f"[{re.escape(_OPENING_PUNCT)}]{{0,3}}([^\\W\\d_]+)")
_OPENINGS_ONLY = re.compile(f"[{re.escape(_OPENING_PUNCT)}]{{0,3}}\\Z")
_DOTTED = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")  # U.S, a.m, e.g
_NUMBER_LABEL = re.compile(r"[0-9]{1,3}(?:\.\)|[.)])[ \t\n]")
_NUMBER_LABEL_PREFIX = re.compile(r"[0-9]{1,3}(?:\.\)?|\))?\Z")
# Inline list labels: "1.", "2)", "3.)", "a.", "• 9.", or a bullet alone.
_B = f"[{_BULLETS}]"
_LABEL = re.compile(
    f"(?P<bullet>{_B}[ \t]?)?"
    r"(?P<value>[0-9]{1,3}|[a-z])(?P<suffix>\.\)|[.)])(?=[ \t])"
    f"|(?P<alone>{_B})(?=[ \t])"
)
_LABEL_PREFIX = re.compile(f"(?:{_B}[ \t]?)?" r"(?:(?:[0-9]{1,3}|[a-z])(?:\.\)?|\))?)?\Z")
_LABEL_ONLY = re.compile(f"(?:{_B}[ \t]?)?" r"(?:[0-9]{1,3}|[a-z])(?:\.\)?|\))")
# citations.PARTIAL_MARKER_RE, made prefix-closed: it rejects "[1 a" although "[1 and 2]" is a
# marker, and its "$" also matches before a final newline.
_PARTIAL_MARKER = re.compile(
    r"(?:\[\^?|\u3010)\s*(?:\d+(?:\s*(?:[,\uff0c;\u3001]|-|\u2013|a|an|and)\s*\d*)*)?\s*\Z"
    r"|\(\s*s?o?u?r?c?e?\s*#?\s*\d*\s*(?::[^()]*)?\Z",
    re.IGNORECASE,
)
_MARKER_MAX = 160  # longer openings are not markers, so a stray "(" cannot stall the stream
_BRACKET_REACH = 200  # a terminal inside brackets opened this recently ends no sentence
_LONG, _LOOKBACK = 4096, 256  # see SentenceBuffer._drain

# Periods after these never end a sentence when a capital or digit follows.
_NEVER_END_TEXT = (
    "mr mrs ms mx dr prof mt rev hon gen sen rep gov capt lt col sgt cmdr adm maj fr pres supt "
    "messrs mme mlle e.g i.e eg ie vs cf viz"
)
_NEVER_END = frozenset(_NEVER_END_TEXT.split())
# Abbreviations that take a number: "p. 55", "No. 5", "N°. 1026".
_NUMBERED_TEXT = (
    "p pp no nos nº n° nr vol vols fig figs ch chap sec sect art eq eqs para pt ref tab ex op "
    "ed app"
)
_NUMBERED = frozenset(_NUMBERED_TEXT.split())
# Abbreviations that may or may not end a sentence; the next word decides.
_ABBREVIATIONS_TEXT = (
    "co corp inc ltd llc plc bros etc al jr sr st ave blvd rd dept univ assn est govt misc mfg "
    "intl natl approx ca min max hr hrs sq ft lb lbs oz esp incl tel ext dist div yr yrs wk wks "
    "mo mos pts jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs "
    "fri ibid"
)
_ABBREVIATIONS = frozenset(_ABBREVIATIONS_TEXT.split())
# Words that usually open a sentence: after an abbreviation they signal a new one.
_STARTERS_TEXT = (
    "The A An This That These Those There Here It Its I We You He She They My Our Your His Her "
    "Their What When Where Why Who Whom Which How Is Are Was Were Do Does Did Can Could Will "
    "Would Should Shall May Might Must Have Has Had If But And Or So Yet Then Thus Hence However "
    "Also Although Though Because Since While After Before Once As In On At For From To By With "
    "Without During Please Note See Let Each Every All Some Most Many Any No Not None Both Either "
    "Neither One Yes Mr Mrs Ms Dr Otherwise Finally First Second Next Today Still Even Only Such "
    "Other Another Instead Meanwhile Unfortunately Fortunately Overall Therefore"
)
_STARTERS = frozenset(_STARTERS_TEXT.split())
# A sentence cannot be just a prepositional phrase ("At 5 a.m." before "Mr. Smith went ...").
_PREPOSITIONS_TEXT = (
    "at by in on after before until till since from around about for with under over during "
    "near through within past to of"
)
_PREPOSITIONS = frozenset(_PREPOSITIONS_TEXT.split())


_PLAIN, _ENDS_NEVER, _TAKES_NUMBER, _AMBIGUOUS = range(4)


@lru_cache(maxsize=16384)
def _word_kind(word: str) -> int:
    """How the word before a period bears on a boundary. Blingfire is asked whether it keeps
    `word.` with a following capitalised word: if so, the word is an abbreviation to it."""
    word = word.lstrip(_OPENING_PUNCT)
    lower = word.lower()
    if lower in _NEVER_END:
        return _ENDS_NEVER
    if lower in _NUMBERED:
        return _TAKES_NUMBER
    if (
        lower in _ABBREVIATIONS
        or (len(word) == 1 and word.isalpha())
        or _DOTTED.fullmatch(word) is not None
        or (word != "" and "\n" not in blingfire.text_to_sentences(f"{word}. The"))
    ):
        return _AMBIGUOUS
    return _PLAIN


def _skip(pattern: re.Pattern[str], buf: str, pos: int) -> int:
    """Where `pattern`, which may match nothing, stops when matched at `pos`."""
    m = pattern.match(buf, pos)
    return pos if m is None else m.end()


def _successor(label: re.Match[str]) -> str | None:
    if label["alone"]:
        return label["alone"]
    value = label["value"]
    if value.isdigit():
        following = str(int(value) + 1)
    elif value < "z":
        following = chr(ord(value) + 1)
    else:
        return None
    return f"{label['bullet'] or ''}{following}{label['suffix']}"


def _classify(buf: str, p: int, final: bool) -> str | None:
    """What the line starting at `p` opens: blank, end, fence, heading, rule, row, item, para;
    "block" when it is a rule or an item, not yet which; None while it cannot tell yet."""
    n = len(buf)
    if p < n and buf[p].isalpha():  # the common case: a line of text
        return "para"
    m = _BLANK_LINE.match(buf, p)
    if m is None:
        return None
    if m.group(1):
        return "blank"
    q = m.end()
    if q == n:
        return "end" if final else None
    c = buf[q]
    if c == "|":
        return "row"
    if c in "`~":
        run = 0
        while run < 3 and q + run < n and buf[q + run] == c:
            run += 1
        if run == 3:
            return "fence"
        return None if q + run == n and not final else "para"
    if c == "#":
        e = q + len(buf[q : q + 8]) - len(buf[q : q + 8].lstrip("#"))
        if e == n:
            return None if not final else ("heading" if e - q <= 6 else "para")
        return "heading" if e - q <= 6 and buf[e] in " \t\r\n" else "para"
    if c in "-*_":
        e = _skip(_RULE_RUN, buf, q)
        if e == n and not final:  # "- " opens an item or a rule: a block either way
            return "block" if c != "_" and buf[q + 1 : q + 2] in (" ", "\t") else None
        if (e == n or buf[e] == "\n") and buf.count(c, q, e) >= 3:
            return "rule"
    if c in "-*+" or c in _BULLETS:
        if q + 1 == n:
            return None if not final else "para"
        return "item" if buf[q + 1] in " \t\r\n" else "para"
    if "0" <= c <= "9":
        e = q
        while e < n and e - q < 10 and "0" <= buf[e] <= "9":
            e += 1
        if e == n:
            return None if not final else "para"
        if e - q > 9 or buf[e] not in ".)":
            return "para"
        if e + 1 == n:
            return None if not final else "item"
        return "item" if buf[e + 1] in " \t\r\n" else "para"
    return "para"


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
            self._has_word = self._has_word or _WORD_CHAR.search(head) is not None
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
        what = _classify(self._buf, p, final)
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
        start = _skip(_BLANKS, buf, i)
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
            e = _skip(_TABLE_RULE, buf, nl + 1)
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
                while j < n and buf[j] in _BLANK_CHARS:
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
            if c in _OPENERS:
                self._stack.append((c, pos))
                self._i = pos + 1
                continue
            if c in _CLOSERS:
                if self._stack and _OPENERS[self._stack[-1][0]] == c:
                    self._stack.pop()
                self._i = pos + 1
                continue
            if c in _TERMINALS:
                verdict, at = self._terminal(pos, final)
            else:
                verdict, at = self._inline_label(pos, final)
            if verdict == _WAIT:
                self._i = pos
                return False
            if verdict == _YES:
                self._emit(at, out)
            self._i = at

    def _read_label(self, final: bool) -> bool:
        """Note whether the sentence opens with a list label; False while it cannot tell yet."""
        buf, s = self._buf, self._start
        if not final and len(buf) - s < 8 and _LABEL_PREFIX.match(buf, s):
            return False
        self._want_label = False
        m = _LABEL.match(buf, s)
        if self._label == "" or (m and m.group() == self._label):
            expected = _successor(m) if m else None
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
            return (_WAIT if waiting else _NO), pos + 1
        if end == n:
            return (_NO, pos + 1) if final else (_WAIT, 0)
        if buf[end] not in " \t" or (not self._has_word and not _WORD_CHAR.search(buf, start, pos)):
            return _NO, pos + 1
        if pos - start < 12 and _LABEL_ONLY.fullmatch(buf[start:pos].rstrip()):
            return _NO, pos + 1
        return _YES, pos

    def _terminal(self, pos: int, final: bool) -> tuple[int, int]:
        """Decide whether the terminal punctuation at `pos` ends the sentence."""
        buf, start = self._buf, self._start
        n = len(buf)
        te = pos + 1
        while te < n and buf[te] in _TERMINALS:
            te += 1
        if self._stack and pos - self._stack[-1][1] <= _BRACKET_REACH:
            return _NO, te
        if not self._has_word and _WORD_CHAR.search(buf, start, pos) is None:
            return _NO, te
        e = te
        while e < n and buf[e] in _CLOSER_CHARS:
            e += 1
        ce, k = e, e
        while k < n and buf[k] in _BLANK_CHARS:
            k += 1
        cjk = buf[pos] in _CJK_TERMS or not _CJK_TERMS.isdisjoint(buf[pos + 1 : te])
        if k < n and buf[k] in "[(\u3010":
            marked = self._markers(ce, final)
            if marked is None:
                return _WAIT, 0
            e = k = marked
            while k < n and buf[k] in _BLANK_CHARS:
                k += 1
        if cjk:  # no space needed after CJK punctuation; only a closer or marker may follow
            return (_YES, e) if k < n or final else (_WAIT, 0)
        if k == n:
            return (_YES, e) if final else (_WAIT, 0)
        if k == e and buf[k] != "\n":
            return _NO, te  # "U.S.A", "3.5", "Jr.'s", "[1]x": no space after
        if buf[k] == "\n":
            what = self._classify(k + 1, final)
            if what is None:
                return _WAIT, 0
            if what != "para":
                return _YES, e  # the unit ends here anyway
            k += 1
            while buf[k] in _BLANK_CHARS:
                k += 1
        verdict = self._english(pos, te, ce, k, final)
        return verdict, (e if verdict == _YES else te)

    def _markers(self, p: int, final: bool) -> int | None:
        """End of the citation markers starting (after blanks) at `p`; None while a marker
        could still be arriving."""
        buf = self._buf
        n = len(buf)
        e = p
        while True:
            k = e
            while k < n and buf[k] in _BLANK_CHARS:
                k += 1
            if k == n:
                return e if final else None
            if buf[k] not in "[(\u3010":
                return e
            m = MARKER_RE.match(buf, k, min(n, k + _MARKER_MAX))
            if m is not None:
                e = m.end()
                continue
            if not final and n - k < _MARKER_MAX and _PARTIAL_MARKER.match(buf, k):
                return None
            return e

    def _english(self, pos: int, te: int, ce: int, s: int, final: bool) -> int:
        """The rules for `.`, `!`, `?` and ellipses; `s` is the next visible character."""
        buf, start = self._buf, self._start
        n, r = len(buf), buf[s]
        if ce - start <= 8 and _LABEL_ONLY.fullmatch(buf, start, ce):
            return _NO  # "1." or "a)" opening a list item is not a sentence
        term = buf[pos:te]
        if "?" in term or "!" in term:
            return _NO if r.islower() else _YES
        before = buf[pos - 1]
        if term != ".":  # an ellipsis: mid-sentence when it does not follow a word
            if r.islower() or not (before.isalnum() or before in _CLOSER_CHARS):
                return _NO
            return _YES
        if before.isspace():  # a dot after a blank: the last of a spaced ellipsis ". . ."?
            k, dots = pos, 1
            while dots < 4 and k - 2 >= start and buf[k - 1] == " " and buf[k - 2] == ".":
                k, dots = k - 2, dots + 1
            attached = k > start and not buf[k - 1].isspace()
            if r == "." or r.islower() or (not attached and dots == 3):
                return _NO
            return _YES
        if r == ".":  # "word. . . . Next": the ellipsis opens the next sentence
            q = _skip(_SPACED_DOTS, buf, s)
            k = q
            while k < n and buf[k] in _BLANK_CHARS:
                k += 1
            if k == n and not final:
                return _WAIT
            dots = buf.count(".", s, q)
            return _YES if dots >= 3 and q < k < n and buf[k].isupper() else _NO
        if r.islower():
            return _NO
        lo = max(start, pos - 40)
        word = buf[max(buf.rfind(" ", lo, pos), lo - 1) + 1 : pos]
        if not word.isprintable():  # a line break or tab inside the last 40 characters
            word = word.split()[-1]
        kind = _word_kind(word)
        if kind == _ENDS_NEVER:
            return _NO
        if "0" <= r <= "9":  # only a list label after a period starts with a digit
            if kind == _TAKES_NUMBER:
                return _NO
            if _NUMBER_LABEL.match(buf, s):
                return _YES
            return _WAIT if not final and _NUMBER_LABEL_PREFIX.match(buf, s) else _NO
        if kind == _PLAIN:
            return _YES
        m = _NEXT_WORD.match(buf, s)
        if not final and (_OPENINGS_ONLY.match(buf, s) if m is None else m.end() == n):
            return _WAIT  # the next word has not ended yet
        if m is None:
            return _NO
        if m.group(1) not in _STARTERS:
            return _NO
        words = buf[start:pos].split() if pos - start <= 60 else []
        if 0 < len(words) <= 3 and words[0].lower().lstrip(_OPENING_PUNCT) in _PREPOSITIONS:
            return _NO
        return _YES


def split_segments(text: str) -> list[Segment]:
    """Units of a whole text: exactly what streaming it through a `SentenceBuffer` yields."""
    return SentenceBuffer()._drain(text, final=True)
