"""Refuse before generation when the sources an answer would rest on contradict each other.

A `ConflictDetector` reports pairs of statements from different documents that say the same
thing about the question but differ in a number, a date or time, or a negation.
`LexicalConflictDetector` does it with shared terms and `quantities`: ~1 ms of CPU per 300-word
block, and ~0.1 ms per call once its per-text analysis is cached.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from functools import lru_cache
from itertools import combinations
from typing import Literal, Protocol

from ..gate.quantities import NUMBER_WORDS, Quantity, canonical, scan
from ..retrieve.hybrid import Block
from ..text import STOP_WORDS, normalise, tokenize
from .asked import SlotKind, clause_at, clause_spans, fits, slot_kind

__all__ = ["Conflict", "ConflictDetector", "ConflictKind", "LexicalConflictDetector"]

ConflictKind = Literal["number", "date", "negation"]


@dataclass(frozen=True, slots=True)
class Conflict:
    """Two statements from different documents that cannot both be true."""

    a: Block
    b: Block
    sentence_a: str  # verbatim from a.text
    sentence_b: str
    values_a: tuple[str, ...]  # as written: ("30 days",) vs ("14 days",); ("not",) vs ()
    values_b: tuple[str, ...]
    kind: ConflictKind

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "a": _side_json(self.a, self.sentence_a, self.values_a),
            "b": _side_json(self.b, self.sentence_b, self.values_b),
        }


def _side_json(block: Block, sentence: str, values: tuple[str, ...]) -> dict[str, object]:
    at = block.text.find(sentence)
    start = block.start + at if at >= 0 else None  # offsets in the document's extracted text
    return {
        "n": block.n,
        "doc_id": block.doc_id,
        "name": block.name,
        "filename": block.filename,
        "version": block.version,
        "chunk_id": block.chunk_id,
        "url": block.url,
        "sentence": sentence,
        "start": start,
        "end": None if start is None else start + len(sentence),
        "values": list(values),
    }


class ConflictDetector(Protocol):
    def find(self, question: str, blocks: Sequence[Block]) -> list[Conflict]: ...


# --- reading one sentence --------------------------------------------------------------------

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
_BREAK = re.compile(r"[.!?][\"'”’)\]]*\s+|[。！？]\s*|[ \t]*\n\s*")
_LAST_WORD = re.compile(r"\w+$")
_ABBREVIATIONS = frozenset("approx cf dr etc fig figs mr mrs ms no nos vs".split())
_HAS_DIGIT = re.compile(r"\d")
_DIGIT_GLUE = frozenset("0123456789.,")


@lru_cache(maxsize=65536)
def _stem(term: str) -> str:
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
_FILLER = frozenset(map(_stem, (_FILLER_WORDS + " want like way kind thing").split()))


@lru_cache(maxsize=65536)
def _term(token: str) -> str:
    """The term a token of `tokenize` counts as, or "" for numbers and negations."""
    return "" if _HAS_DIGIT.search(token) or token in _NOT_TERMS else _stem(token)


def _terms_of(texts: Sequence[str]) -> list[frozenset[str]]:
    """Content terms of each text. One `tokenize` call for all: each costs ~30 us of set-up."""
    out: list[frozenset[str]] = []
    terms: set[str] = set()
    for token in tokenize(f" {_SEPARATOR} ".join(texts)):
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
class _Value:
    kind: Literal["number", "date"]
    slot: Slot  # what is measured: ("date",), ("time",), ("$", "month"), ("day",)
    readings: tuple[Reading, ...]
    start: int  # span in the canonical sentence, unit and period included
    end: int


@dataclass(frozen=True, slots=True)
class _Sentence:
    text: str  # verbatim
    canon: str
    terms: frozenset[str]
    values: tuple[_Value, ...]
    negations: tuple[tuple[int, int], ...]  # spans in canon
    about: frozenset[str]  # terms, and the previous sentence's if this one opens with "It"


@dataclass(frozen=True, slots=True)
class _Analysed:
    sentences: tuple[_Sentence, ...]
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
            return "@" + _stem(word)
    return "@"


def _number(quantity: Quantity, canon: str, words: str, start: int) -> _Value:
    value, unit = quantity.values[0]
    number = _NUMBER_PART.match(quantity.text)
    rest = quantity.text[number.end() :] if number else ""
    end = start + len(quantity.text)
    if unit is None and rest in STOP_WORDS:  # "5 to 10 days": "to" is no unit
        end -= len(rest)
        rest = ""
    slot = [unit or (_stem(rest) if rest else _previous_word(words, start))]
    periods: list[str] = []
    while match := _PER.match(canon, end) or _ADVERB_PERIOD.match(canon, end):
        word = match.group(1)
        periods.append(_PERIOD_OF.get(word, _stem(word)))
        end = match.end()
    return _Value("number", (*slot, *sorted(periods)), ((value,),), start, end)


def _read(statements: Sequence[str]) -> list[_Sentence]:
    canons = [canonical(statement) for statement in statements]
    scanned = [scan(canon) for canon in canons]
    negations = [tuple(m.span() for m in _NEGATION.finditer(canon)) for canon in canons]
    terms = _terms_of(list(map(_without, (blanked for _, blanked in scanned), negations)))
    return list(map(_sentence, statements, canons, scanned, negations, terms))


def _sentence(
    text: str, canon: str, scanned: Scanned, negations: tuple[tuple[int, int], ...], terms: Terms
) -> _Sentence:
    """`text` read: `canon` is `canonical(text)`, `scanned` is `scan(canon)`."""
    found, blanked = scanned
    taken: set[int] = set()
    values: list[_Value] = []
    for quantity in found:
        where = blanked if quantity.values else canon  # dates and times are blanked out
        start = _locate(where, quantity.text, taken)
        if start < 0:
            continue
        end = start + len(quantity.text)
        if quantity.values:
            values.append(_number(quantity, canon, where, start))
        elif quantity.dates:
            values.append(_Value("date", ("date",), quantity.dates, start, end))
        else:
            values.append(_Value("date", ("time",), quantity.times, start, end))
    return _Sentence(text, canon, terms, tuple(values), negations, terms)


def _statement_spans(text: str) -> list[tuple[int, int]]:
    """Sentences, and lines: a line break ends a statement unless the next line goes on in
    lower case (a hard wrap), so list items, headings and table rows stand alone. A regex, not
    blingfire: its offsets wrapper costs ~0.5 ms per 300 words, more than everything else."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _BREAK.finditer(text):
        cut, after = match.span()
        if after >= len(text):
            break
        mark = text[cut]
        if mark == "\n":
            if text[after].islower():
                continue
        elif mark in ".!?":
            word = _LAST_WORD.search(text, max(0, cut - 12), cut)
            if word and (len(word.group()) == 1 or word.group().casefold() in _ABBREVIATIONS):
                continue  # "e.g. the", "J. Smith", "approx. 30"
            cut = match.start() + len(match.group().rstrip())
        else:
            cut += 1  # a CJK full stop, exclamation or question mark
        spans.append((start, cut))
        start = after
    spans.append((start, len(text)))
    return [_trim(text, s, e) for s, e in spans if text[s:e].strip()]


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while text[start].isspace():
        start += 1
    while text[end - 1].isspace():
        end -= 1
    return start, end


@lru_cache(maxsize=1024)
def _analyse(text: str) -> _Analysed:
    sentences = _read([text[s:e] for s, e in _statement_spans(text)])
    names: set[str] = set()
    for i, sentence in enumerate(sentences):
        words = _WORDS.findall(sentence.text)
        for word in words[1:]:
            if word[0].isupper() and (word := normalise(word)) not in STOP_WORDS:
                names.add(_stem(word))
        if i and words and (normalise(words[0]) in _PRONOUNS or words[0][0] in _PRONOUNS):
            # "It includes 20 GB of storage." is about the Pro plan of the sentence before.
            about = sentence.terms | sentences[i - 1].terms
            sentences[i] = replace(sentence, about=about)
    return _Analysed(tuple(sentences), frozenset(names))


def _written(original: str, canon: str, start: int, end: int) -> str:
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


# --- comparing two sentences -----------------------------------------------------------------


def _agree(x: _Value, y: _Value) -> bool:
    """Some reading of `x` equals some reading of `y`; an unstated part (year) matches any."""
    return any(
        all(p == q or p is None or q is None for p, q in zip(rx, ry, strict=True))
        for rx in x.readings
        for ry in y.readings
        if len(rx) == len(ry)
    )


def _unmatched(a: _Sentence, b: _Sentence) -> tuple[list[_Value], list[_Value]]:
    """Values of `a` and of `b` with no agreeing value on the same slot in the other."""
    slots = {v.slot for v in a.values} & {v.slot for v in b.values}
    return _lonely(a.values, b.values, slots), _lonely(b.values, a.values, slots)


def _lonely(values: Sequence[_Value], others: Sequence[_Value], slots: set[Slot]) -> list[_Value]:
    return [
        v
        for v in values
        if v.slot in slots and not any(v.slot == o.slot and _agree(v, o) for o in others)
    ]


def _shown(sentence: _Sentence, values: Sequence[_Value]) -> tuple[str, ...]:
    shown = (_written(sentence.text, sentence.canon, v.start, v.end) for v in values)
    return tuple(dict.fromkeys(shown))


class LexicalConflictDetector:
    """Deterministic and cheap: sentence pairs from different documents that largely say the
    same thing (high overlap of content terms once numbers/negations are set aside) but differ
    in a number, date/quantity, or negation.

    Relevant: a sentence shares >= `min_question_terms` terms with the question, and as many as
    the best-matching sentence with a number or negation in the top blocks. Same subject: both
    hold the same question terms, share >= `min_shared` terms with Jaccard >= `min_overlap`, and
    only one of them has terms the other lacks (or up to `max_substitutions`, never a name).
    """

    def __init__(
        self,
        *,
        top_n: int = 4,
        min_overlap: float = 0.6,
        min_shared: int = 3,
        max_substitutions: int = 0,
        max_conflicts: int = 10,
        min_question_terms: int = 2,
    ) -> None:
        at_least_one = min(min_shared, max_conflicts, min_question_terms)
        if top_n < 2 or not 0.0 < min_overlap <= 1.0 or at_least_one < 1 or max_substitutions < 0:
            raise ValueError(
                "need top_n >= 2, 0 < min_overlap <= 1, max_substitutions >= 0, others >= 1"
            )
        self.top_n = top_n
        self.min_overlap = min_overlap
        self.min_shared = min_shared
        self.max_substitutions = max_substitutions
        self.max_conflicts = max_conflicts
        self.min_question_terms = min_question_terms

    def find(self, question: str, blocks: Sequence[Block]) -> list[Conflict]:
        top = list(blocks[: self.top_n])
        if len({block.doc_id for block in top}) < 2:
            return []
        asked = _read([question])[0].terms - _FILLER
        need = min(self.min_question_terms, len(asked))
        if not need:
            return []
        analysed = [_analyse(block.text) for block in top]
        # The answer would rest on the statements that match the question best: count only
        # those that match it as well as any statement with a number or negation does.
        told = [s for a in analysed for s in a.sentences if s.values or s.negations]
        need = max([need] + [len(s.about & asked) for s in told])
        kind = slot_kind(question)
        relevant = [
            [_scoped(s, asked, kind) for s in a.sentences if len(s.about & asked) >= need]
            for a in analysed
        ]
        conflicts: list[Conflict] = []
        seen: set[tuple[str, str, str, str]] = set()
        for i, j in combinations(range(len(top)), 2):
            a, b = top[i], top[j]
            if a.doc_id == b.doc_id:
                continue
            names = analysed[i].names, analysed[j].names
            for sa in relevant[i]:
                for sb in relevant[j]:
                    key = (a.doc_id, b.doc_id, sa.text, sb.text)
                    if key in seen or not self._same_subject(sa, sb, asked, *names):
                        continue
                    if conflict := _contradiction(a, sa, b, sb):
                        seen.add(key)
                        conflicts.append(conflict)
                        if len(conflicts) == self.max_conflicts:
                            return conflicts
        return conflicts

    def _same_subject(
        self,
        sa: _Sentence,
        sb: _Sentence,
        asked: frozenset[str],
        names_a: frozenset[str],
        names_b: frozenset[str],
    ) -> bool:
        if not (sa.values and sb.values) and bool(sa.negations) == bool(sb.negations):
            return False  # nothing that could differ
        if sa.about & asked != sb.about & asked:
            return False  # one speaks of something the question asks about and the other not
        shared = len(sa.terms & sb.terms)
        if shared < self.min_shared or shared < self.min_overlap * len(sa.terms | sb.terms):
            return False
        only_a, only_b = sa.terms - sb.terms, sb.terms - sa.terms
        if only_a and only_b:  # a substitution: "Free plan" vs "Pro plan", "annual" vs "monthly"
            too_many = max(len(only_a), len(only_b)) > self.max_substitutions
            return not (too_many or only_a & names_a or only_b & names_b)
        return True


@lru_cache(maxsize=65536)
def _clause_terms(clause: str) -> frozenset[str]:
    return _terms_of([clause])[0]


def _scoped(sentence: _Sentence, asked: frozenset[str], kind: SlotKind | None) -> _Sentence:
    """`sentence` with only the values and negations the question asks about: those in a
    clause that shares a term with the question, of a kind that fits what it asks for."""
    spans = clause_spans(sentence.canon)
    carried = sentence.about - sentence.terms  # "It costs..." is about the sentence before

    def asked_at(position: int) -> bool:
        start, end = clause_at(spans, position)
        return bool((_clause_terms(sentence.canon[start:end]) | carried) & asked)

    values = tuple(
        v for v in sentence.values if fits(kind, v.kind, v.slot[0]) and asked_at(v.start)
    )
    negations = tuple(span for span in sentence.negations if asked_at(span[0]))
    if values == sentence.values and negations == sentence.negations:
        return sentence
    return replace(sentence, values=values, negations=negations)


def _contradiction(a: Block, sa: _Sentence, b: Block, sb: _Sentence) -> Conflict | None:
    only_a, only_b = _unmatched(sa, sb)
    if only_a and only_b:
        kind: ConflictKind = "number" if any(v.kind == "number" for v in only_a) else "date"
        return Conflict(a, b, sa.text, sb.text, _shown(sa, only_a), _shown(sb, only_b), kind)
    if bool(sa.negations) != bool(sb.negations):
        va = tuple(_written(sa.text, sa.canon, s, e) for s, e in sa.negations)
        vb = tuple(_written(sb.text, sb.canon, s, e) for s, e in sb.negations)
        return Conflict(a, b, sa.text, sb.text, va, vb, "negation")
    return None
