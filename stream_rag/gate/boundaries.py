"""Whether terminal punctuation ends a sentence: the characters that matter, the abbreviation
lists, the English rules for `.`, `!`, `?` and ellipses (`english`), and where the citation
markers after a sentence end (`markers_end`), and the decision at a candidate in the streamed
buffer (`sentence_end`). segment.py finds the candidates and asks here."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

import blingfire

from .citations import MARKER_RE
from .markup import BLANK_CHARS, LABEL_ONLY, skip

# A decision about a possible boundary: wait for more text, not a boundary, or a boundary.
WAIT, NO, YES = 0, 1, 2

# Look-alike characters are spelled as escapes (ruff RUF001).
CJK_TERMINALS = "\u3002\uff01\uff1f"  # ideographic full stop, fullwidth ! and ?
TERMINALS = ".!?\u2026" + CJK_TERMINALS  # with the ellipsis character
OPENERS = {"(": ")", "\uff08": "\uff09", "《": "》", "「": "」", "『": "』", "〈": "〉"}
CLOSER_CHARS = "\"'\u201d\u2019\u00bb)]" + "".join(OPENERS.values())
_OPENING_PUNCT = "\"'\u201c\u2018([{*_<"
_SPACED_DOTS = re.compile(r"\.(?:[ \t]+\.)*")
_NEXT_WORD = re.compile(f"[{re.escape(_OPENING_PUNCT)}]{{0,3}}([^\\W\\d_]+)")
_OPENINGS_ONLY = re.compile(f"[{re.escape(_OPENING_PUNCT)}]{{0,3}}\\Z")
_DOTTED = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")  # U.S, a.m, e.g
_NUMBER_LABEL = re.compile(r"[0-9]{1,3}(?:\.\)|[.)])[ \t\n]")
_NUMBER_LABEL_PREFIX = re.compile(r"[0-9]{1,3}(?:\.\)?|\))?\Z")
# citations.PARTIAL_MARKER_RE, made prefix-closed: it rejects "[1 a" although "[1 and 2]" is a
# marker, and its "$" also matches before a final newline.
_PARTIAL_MARKER = re.compile(
    r"(?:\[\^?|\u3010)\s*(?:\d+(?:\s*(?:[,\uff0c;\u3001]|-|\u2013|a|an|and)\s*\d*)*)?\s*\Z"
    r"|\(\s*s?o?u?r?c?e?\s*#?\s*\d*\s*(?::[^()]*)?\Z",
    re.IGNORECASE,
)
_MARKER_MAX = 160  # longer openings are not markers, so a stray "(" cannot stall the stream
_CJK_TERMS = frozenset(CJK_TERMINALS)
WORD_CHAR = re.compile(r"\w")
_BRACKET_REACH = 200  # a terminal inside brackets opened this recently ends no sentence

# Periods after these never end a sentence when a capital or digit follows.
_NEVER_END_TEXT = (
    "mr mrs ms mx dr prof mt rev hon gen sen rep gov capt lt col sgt cmdr adm maj fr pres supt "
    "messrs mme mlle e.g i.e eg ie vs cf viz"
)
NEVER_END = frozenset(_NEVER_END_TEXT.split())
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
    if lower in NEVER_END:
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


def markers_end(buf: str, p: int, final: bool) -> int | None:
    """End of the citation markers starting (after blanks) at `p`; None while a marker
    could still be arriving."""
    n = len(buf)
    e = p
    while True:
        k = e
        while k < n and buf[k] in BLANK_CHARS:
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


def english(buf: str, start: int, pos: int, te: int, ce: int, s: int, final: bool) -> int:
    """The rules for `.`, `!`, `?` and ellipses at `pos` (a run ending at `te`, closers up to
    `ce`) in the sentence starting at `start`; `s` is the next visible character."""
    n, r = len(buf), buf[s]
    if ce - start <= 8 and LABEL_ONLY.fullmatch(buf, start, ce):
        return NO  # "1." or "a)" opening a list item is not a sentence
    term = buf[pos:te]
    if "?" in term or "!" in term:
        return NO if r.islower() else YES
    before = buf[pos - 1]
    if term != ".":  # an ellipsis: mid-sentence when it does not follow a word
        if r.islower() or not (before.isalnum() or before in CLOSER_CHARS):
            return NO
        return YES
    if before.isspace():  # a dot after a blank: the last of a spaced ellipsis ". . ."?
        k, dots = pos, 1
        while dots < 4 and k - 2 >= start and buf[k - 1] == " " and buf[k - 2] == ".":
            k, dots = k - 2, dots + 1
        attached = k > start and not buf[k - 1].isspace()
        if r == "." or r.islower() or (not attached and dots == 3):
            return NO
        return YES
    if r == ".":  # "word. . . . Next": the ellipsis opens the next sentence
        q = skip(_SPACED_DOTS, buf, s)
        k = q
        while k < n and buf[k] in BLANK_CHARS:
            k += 1
        if k == n and not final:
            return WAIT
        dots = buf.count(".", s, q)
        return YES if dots >= 3 and q < k < n and buf[k].isupper() else NO
    if r.islower():
        return NO
    lo = max(start, pos - 40)
    word = buf[max(buf.rfind(" ", lo, pos), lo - 1) + 1 : pos]
    if not word.isprintable():  # a line break or tab inside the last 40 characters
        word = word.split()[-1]
    kind = _word_kind(word)
    if kind == _ENDS_NEVER:
        return NO
    if "0" <= r <= "9":  # only a list label after a period starts with a digit
        if kind == _TAKES_NUMBER:
            return NO
        if _NUMBER_LABEL.match(buf, s):
            return YES
        return WAIT if not final and _NUMBER_LABEL_PREFIX.match(buf, s) else NO
    if kind == _PLAIN:
        return YES
    m = _NEXT_WORD.match(buf, s)
    if not final and (_OPENINGS_ONLY.match(buf, s) if m is None else m.end() == n):
        return WAIT  # the next word has not ended yet
    if m is None:
        return NO
    if m.group(1) not in _STARTERS:
        return NO
    words = buf[start:pos].split() if pos - start <= 60 else []
    if 0 < len(words) <= 3 and words[0].lower().lstrip(_OPENING_PUNCT) in _PREPOSITIONS:
        return NO
    return YES


def sentence_end(
    buf: str,
    start: int,
    pos: int,
    final: bool,
    opened: int | None,
    has_word: bool,
    classify: Callable[[int, bool], str | None],
) -> tuple[int, int]:
    """Whether the terminal punctuation at `pos` ends the sentence begun at `start`, and where
    to go on: `opened` is where the innermost open bracket was opened, `has_word` whether the
    sentence's head parked out of `buf` has a word, `classify` what a line starting there is."""
    n = len(buf)
    te = pos + 1
    while te < n and buf[te] in TERMINALS:
        te += 1
    if opened is not None and pos - opened <= _BRACKET_REACH:
        return NO, te
    if not has_word and WORD_CHAR.search(buf, start, pos) is None:
        return NO, te
    e = te
    while e < n and buf[e] in CLOSER_CHARS:
        e += 1
    ce, k = e, e
    while k < n and buf[k] in BLANK_CHARS:
        k += 1
    cjk = buf[pos] in _CJK_TERMS or not _CJK_TERMS.isdisjoint(buf[pos + 1 : te])
    if k < n and buf[k] in "[(\u3010":
        marked = markers_end(buf, ce, final)
        if marked is None:
            return WAIT, 0
        e = k = marked
        while k < n and buf[k] in BLANK_CHARS:
            k += 1
    if cjk:  # no space needed after CJK punctuation; only a closer or marker may follow
        return (YES, e) if k < n or final else (WAIT, 0)
    if k == n:
        return (YES, e) if final else (WAIT, 0)
    if k == e and buf[k] != "\n":
        return NO, te  # "U.S.A", "3.5", "Jr.'s", "[1]x": no space after
    if buf[k] == "\n":
        what = classify(k + 1, final)
        if what is None:
            return WAIT, 0
        if what != "para":
            return YES, e  # the unit ends here anyway
        k += 1
        while buf[k] in BLANK_CHARS:
            k += 1
    verdict = english(buf, start, pos, te, ce, k, final)
    if verdict == NO and e > ce and buf[pos] == "." and buf[k].isalnum():
        # "in the app. [1] Spin ...": a citation after the period closes the sentence the
        # word before it would otherwise keep open (an abbreviation taking a number, or one
        # the next word cannot tell), unless the word never ends one ("e.g."). Before a
        # lower-case word or a digit ("each year. [1] delivery is free ...", "[1] 5% off"),
        # quoted list items, only after a word that is no abbreviation ("etc. [1] and").
        lo = max(start, pos - 40)
        word = buf[max(buf.rfind(" ", lo, pos), lo - 1) + 1 : pos].split()
        kind = _word_kind(word[-1]) if word else _PLAIN
        if kind == _PLAIN or (buf[k].isupper() and kind != _ENDS_NEVER):
            verdict = YES
    return verdict, (e if verdict == YES else te)
