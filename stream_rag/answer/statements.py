"""Statements read for the conflict check: each sentence (or line) of a block with its
content terms, the numbers, dates and times it states (with what they measure) and its
negations. Deterministic and cached per block text (`analyse`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from functools import lru_cache
from typing import Literal

from ..language.quantities import NUMBER_WORDS, Quantity, canonical, scan
from ..language.statements import statement_spans
from ..text import STOP_WORDS, normalise, tokenize

__all__ = [
    "FILLER",
    "Analysed",
    "Slot",
    "Statement",
    "Value",
    "analyse",
    "read",
    "statement_spans",
    "stem_term",
    "terms_of",
    "written",
]

Scanned = tuple[list[Quantity], str]
Terms = frozenset[str]
Slot = tuple[str, ...]
Reading = tuple[float | None, ...]  # (value,), (hour, minute) or (year, month, day); None: unstated

# Negations are found in `canonical` text. "no more than 30 days" is a bound and "not only" an
# addition, not a denial. Chinese: 不 and friends, minus words they merely start (不同 "different",
# 无论 "regardless", 非常 "very", 未来 "future").
_BOUND = r"(?!\s+(?:more|less|fewer|later|earlier|sooner|longer|greater)\s+than\b)"
_NEGATION = re.compile(
    rf"\b(?:not\b{_BOUND}(?!\s+only\b)|no\b{_BOUND}(?!\s+(?:matter|one)\b)|never\b|none\b"
    r"|neither\b|nor\b|cannot\b|nothing\b|nobody\b|\w+n['’]t\b)"
    r"|不(?![同过仅断但少久])|没有?|无(?!论)|未(?!来)|非(?!常)|勿"
)
# Stop words that change what a statement says ("over 250 MB" vs "under 250 MB"): kept as terms.
_KEPT = re.compile(
    r"\b(?:above|below|over|under|before|after|more|most|only|all|any|until|between|during|"
    r"against|same|other|off|out)\b"
)
_NOT_TERMS = NUMBER_WORDS | {"never", "none", "neither", "nothing", "nobody"}
_SEPARATOR = "qqstatementbreakqq"  # a word tokenize keeps, to split its output by statement
_SCALE = r"(?:\s*(?:hundred|thousand|million|billion|trillion)\b)?"
_NUMBER_PART = re.compile(rf"[$€£¥]?\s?[\d.,]+(?:st|nd|rd|th|s)?{_SCALE}\s*")
_PER = re.compile(r"\s*(?:/|\b(?:per|a|an|each|every)\b)\s*([^\W\d_]+)")
_ADVERB_PERIOD = re.compile(r"\s*(hourly|daily|weekly|monthly|annually|yearly)\b")
_PERIOD_OF = {"hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month"}
_PERIOD_OF |= {"annually": "year", "yearly": "year", "annum": "year", "yr": "year", "mo": "month"}
_WORDS = re.compile(r"[^\W\d_]+")
_PRONOUNS = frozenset(
    "it its they their them this these that those he she his her such 它 其 该 此 这".split()
)
_HAS_DIGIT = re.compile(r"\d")
_DIGIT_GLUE = frozenset("0123456789.,")


@lru_cache(maxsize=65536)
def stem_term(term: str) -> str:
    """Light suffix stripping, so that "refunded", "refunds" and "refundable" meet."""
    if len(term) < 4 or not (term.isascii() and term.isalpha()):
        return term
    if term.endswith("ies") and len(term) > 4:
        term = term[:-3] + "y"
    elif term.endswith("s") and not term.endswith(("ss", "us", "is")):
        term = term[:-1]
    for suffix in ("ing", "ed", "able", "ible", "ly"):
        if term.endswith(suffix) and len(term) - len(suffix) >= 3:
            term = term[: -len(suffix)]
            break
    return term[:-1] if len(term) > 4 and term.endswith("e") else term


# Words of how a question is asked, not of what it is about ("how long", "how does X work").
_FILLER_WORDS = "long much many often soon far get tell know please possible happen mean work need"
FILLER = frozenset(map(stem_term, (_FILLER_WORDS + " want like way kind thing").split()))


@lru_cache(maxsize=65536)
def _term(token: str) -> str:
    """The term a token of `tokenize` counts as, or "" for numbers and negations."""
    return "" if _HAS_DIGIT.search(token) or token in _NOT_TERMS else stem_term(token)


def terms_of(texts: Sequence[str]) -> list[frozenset[str]]:
    """Content terms of each text. One `tokenize` call for all: each costs ~30 us of set-up."""
    out: list[frozenset[str]] = []
    terms: set[str] = set()
    # The full stop keeps a text's last word apart from the separator: tokenize joins a lone
    # letter to the word after it ("choose plan b" gave the next text "bqqstatementbreakqq").
    for token in tokenize(f" . {_SEPARATOR} ".join(texts)):
        if token == _SEPARATOR:
            out.append(frozenset(terms))
            terms = set()
        elif term := _term(token):
            terms.add(term)
    out.append(frozenset(terms))
    if len(out) != len(texts):  # no texts, or one that glued onto the separator
        out = [frozenset(filter(None, map(_term, tokenize(text)))) for text in texts]
    return [terms.union(_KEPT.findall(text)) for terms, text in zip(out, texts, strict=True)]


def _without(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """`text` with negations cut out: a CJK one leaves no gap, so 不可退款 reads as 可退款."""
    for start, end in reversed(spans):
        text = text[:start] + ("" if text[start] >= "\u3040" else " ") + text[end:]
    return text


@dataclass(frozen=True, slots=True)
class Value:
    kind: Literal["number", "date"]
    slot: Slot  # what is measured: ("date",), ("time",), ("$", "month"), ("day",)
    readings: tuple[Reading, ...]
    start: int  # span in the canonical sentence, unit and period included
    end: int


@dataclass(frozen=True, slots=True)
class Statement:
    text: str  # verbatim
    canon: str
    terms: frozenset[str]
    values: tuple[Value, ...]
    negations: tuple[tuple[int, int], ...]  # spans in canon
    about: frozenset[str]  # terms, and the previous sentence's if this one opens with "It"


@dataclass(frozen=True, slots=True)
class Analysed:
    sentences: tuple[Statement, ...]
    names: frozenset[str]  # terms written with a capital inside a sentence: "Pro", "Team"


def _locate(text: str, piece: str, taken: set[int]) -> int:
    """Where `piece` stands in `text` as a whole number (not "$8" inside "$80"), not yet taken."""
    s = text.find(piece)
    while s >= 0:
        e = s + len(piece)
        glued_before = piece[0].isdigit() and s > 0 and text[s - 1] in _DIGIT_GLUE
        glued_after = piece[-1].isdigit() and e < len(text) and text[e].isdigit()
        if s not in taken and not glued_before and not glued_after:
            taken.add(s)
            return s
        s = text.find(piece, s + 1)
    return -1


def _previous_word(text: str, end: int) -> str:
    for word in reversed(_WORDS.findall(text, max(0, end - 80), end)):
        if word not in STOP_WORDS and word not in NUMBER_WORDS:
            return "@" + stem_term(word)
    return "@"


def _number(quantity: Quantity, canon: str, words: str, start: int) -> Value:
    value, unit = quantity.values[0]
    number = _NUMBER_PART.match(quantity.text)
    rest = quantity.text[number.end() :] if number else ""
    end = start + len(quantity.text)
    if unit is None and rest in STOP_WORDS:  # "5 to 10 days": "to" is no unit
        end -= len(rest)
        rest = ""
    slot = [unit or (stem_term(rest) if rest else _previous_word(words, start))]
    periods: list[str] = []
    while match := _PER.match(canon, end) or _ADVERB_PERIOD.match(canon, end):
        word = match.group(1)
        periods.append(_PERIOD_OF.get(word, stem_term(word)))
        end = match.end()
    return Value("number", (*slot, *sorted(periods)), ((value,),), start, end)


def read(statements: Sequence[str]) -> list[Statement]:
    canons = [canonical(statement) for statement in statements]
    scanned = [scan(canon) for canon in canons]
    negations = [tuple(m.span() for m in _NEGATION.finditer(canon)) for canon in canons]
    terms = terms_of(list(map(_without, (blanked for _, blanked in scanned), negations)))
    return list(map(_sentence, statements, canons, scanned, negations, terms))


def _sentence(
    text: str, canon: str, scanned: Scanned, negations: tuple[tuple[int, int], ...], terms: Terms
) -> Statement:
    """`text` read: `canon` is `canonical(text)`, `scanned` is `scan(canon)`."""
    found, blanked = scanned
    taken: set[int] = set()
    values: list[Value] = []
    for quantity in found:
        where = blanked if quantity.values else canon  # dates and times are blanked out
        start = _locate(where, quantity.text, taken)
        if start < 0:
            continue
        end = start + len(quantity.text)
        if quantity.values:
            values.append(_number(quantity, canon, where, start))
        elif quantity.dates:
            values.append(Value("date", ("date",), quantity.dates, start, end))
        else:
            values.append(Value("date", ("time",), quantity.times, start, end))
    return Statement(text, canon, terms, tuple(values), negations, terms)


@lru_cache(maxsize=1024)
def analyse(text: str) -> Analysed:
    sentences = read([text[s:e] for s, e in statement_spans(text)])
    names: set[str] = set()
    for i, sentence in enumerate(sentences):
        words = _WORDS.findall(sentence.text)
        for word in words[1:]:
            if word[0].isupper() and (word := normalise(word)) not in STOP_WORDS:
                names.add(stem_term(word))
        if i and words and (normalise(words[0]) in _PRONOUNS or words[0][0] in _PRONOUNS):
            # "It includes 20 GB of storage." is about the Pro plan of the sentence before.
            about = sentence.terms | sentences[i - 1].terms
            sentences[i] = replace(sentence, about=about)
    return Analysed(tuple(sentences), frozenset(names))


def written(original: str, canon: str, start: int, end: int) -> str:
    """`canon[start:end]` as `original` writes it: "thirty days" for "30 days", 三十天 for 30天."""
    if original.isascii() and len(original) == len(canon):
        return original[start:end].strip()  # only case and nothing else changed
    owner: list[int] = []  # index in `original` of each character of its normalised form
    for i, char in enumerate(original):
        owner.extend([i] * len(normalise(char)))
    normal = "".join(normalise(char) for char in original)
    if normal == canon:
        lo, hi = start, end
    else:
        lo, hi = -1, -1
        for tag, i1, i2, j1, j2 in SequenceMatcher(None, normal, canon, False).get_opcodes():
            if lo < 0 and j1 <= start < j2:
                lo = i1 + (start - j1) if tag == "equal" else i1
            if hi < 0 and j1 < end <= j2:
                hi = i1 + (end - j1) if tag == "equal" else i2
    if not 0 <= lo < hi <= len(owner):
        return canon[start:end].strip()
    return original[owner[lo] : owner[hi - 1] + 1].strip()
