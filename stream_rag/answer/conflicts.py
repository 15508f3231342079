"""Refuse before generation when the sources an answer would rest on contradict each other.

A `ConflictDetector` reports pairs of statements from different documents that say the same
thing about the question but differ in a number, a date or time, or a negation.
`LexicalConflictDetector` does it with shared terms and `quantities`: ~1 ms of CPU per 300-word
block, and ~0.1 ms per call once its per-text analysis (`statements.py`) is cached.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import combinations
from typing import Literal, Protocol

from ..language.question import asking
from ..language.terms import model_names, names_model
from ..retrieve.hybrid import Block
from .asked import SlotKind, clause_at, clause_spans, fits, slot_kind
from .labels import label_terms, same_label
from .statements import (
    FILLER,
    Analysed,
    Slot,
    Statement,
    Value,
    analyse,
    read,
    terms_of,
    written,
)

Loader = Callable[[Sequence[str]], Mapping[str, Analysed]]  # chunk ids -> stored readings

__all__ = ["Conflict", "ConflictDetector", "ConflictKind", "LexicalConflictDetector"]

ConflictKind = Literal["number", "date", "negation"]
# Kinds of value a question can ask that a statement states (not "place").
_VALUE_KINDS: frozenset[SlotKind | None] = frozenset(("duration", "money", "date", "count"))


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

    @property
    def stale(self) -> Literal["a", "b"] | None:
        """The side whose document says it was updated before the other's (ingest/dates.py);
        None when either says nothing or both say the same day."""
        da, db = self.a.dated, self.b.dated
        if not da or not db or da == db:
            return None
        return "a" if da < db else "b"

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "a": _side_json(self.a, self.sentence_a, self.values_a),
            "b": _side_json(self.b, self.sentence_b, self.values_b),
            "stale": self.stale,
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
        "dated": block.dated,
        "chunk_id": block.chunk_id,
        "url": block.url,
        "sentence": sentence,
        "start": start,
        "end": None if start is None else start + len(sentence),
        "values": list(values),
    }


class ConflictDetector(Protocol):
    def find(self, question: str, blocks: Sequence[Block]) -> list[Conflict]: ...


# --- comparing two sentences -----------------------------------------------------------------


def _agree(x: Value, y: Value) -> bool:
    """Some reading of `x` equals some reading of `y`; an unstated part (year) matches any."""
    return any(
        all(p == q or p is None or q is None for p, q in zip(rx, ry, strict=True))
        for rx in x.readings
        for ry in y.readings
        if len(rx) == len(ry)
    )


def _unmatched(a: Statement, b: Statement, loose: bool = False) -> tuple[list[Value], list[Value]]:
    """Values of `a` and of `b` with no agreeing value on the same slot in the other. `loose`
    (two lines of one label): a value whose period is unstated ("Monthly fee 12 euros", the
    period in the column's name) is on the slot of the same unit with any period."""
    return _lonely(a.values, b.values, loose), _lonely(b.values, a.values, loose)


def _lonely(values: Sequence[Value], others: Sequence[Value], loose: bool) -> list[Value]:
    out = []
    for v in values:
        alike = [o for o in others if _same_slot(v.slot, o.slot, loose)]
        if alike and not any(_agree(v, o) for o in alike):
            out.append(v)
    return out


def _same_slot(x: Slot, y: Slot, loose: bool) -> bool:
    return x == y or (loose and x[0] == y[0] and (len(x) == 1 or len(y) == 1))


def _shown(sentence: Statement, values: Sequence[Value]) -> tuple[str, ...]:
    shown = (written(sentence.text, sentence.canon, v.start, v.end) for v in values)
    return tuple(dict.fromkeys(shown))


class LexicalConflictDetector:
    """Deterministic and cheap: sentence pairs from different documents that largely say the
    same thing (high overlap of content terms once numbers/negations are set aside) but differ
    in a number, date/quantity, or negation.

    Relevant: a sentence shares >= `min_question_terms` terms with the question, as many as
    the best-matching sentence with a number or negation in the top blocks, and more than
    `min_question_share` of the terms of its asking sentence that the top blocks hold. Same
    subject: both hold the same question terms, share >= `min_shared` terms with Jaccard >=
    `min_overlap`, and only one of them has terms the other lacks (or up to
    `max_substitutions`, never a name).
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
        min_question_share: float = 0.5,
        load: Loader | None = None,
        capacity: int = 4096,
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
        self.min_question_share = min_question_share
        # Readings stored at ingest, loaded once per chunk and kept by chunk id (a chunk's
        # text never changes); without a loader, or for a chunk without one, read here.
        self.load = load
        self.capacity = capacity
        self._seen: OrderedDict[str, Analysed] = OrderedDict()
        self._lock = threading.Lock()

    def find(self, question: str, blocks: Sequence[Block]) -> list[Conflict]:
        top = list(blocks[: self.top_n])
        if len({block.doc_id for block in top}) < 2:
            return []
        models = model_names(question)
        asked = read([question])[0].terms - FILLER
        need = least = min(self.min_question_terms, len(asked))
        if not need:
            return []
        analysed = self._analysed(top)
        # The answer would rest on the statements that match the question best: count only
        # those that match it as well as any statement with a number or negation does.
        told = [s for a in analysed for s in a.sentences if s.values or s.negations]
        need = max([need] + [len(s.about & asked) for s in told])
        # And more than half of what the asking sentence asks that the blocks speak of: two
        # delivery prices do not conflict over "Can I take a bike out for a ride before I buy
        # it?" for sharing "bike" and "take", nor over "... Does that cost me anything if I
        # return it?" for sharing "cost".
        spoken = frozenset().union(*(s.about for a in analysed for s in a.sentences))
        wanted = read([asking(question)])[0].terms - FILLER & spoken
        share = self.min_question_share * len(wanted)
        kind = slot_kind(question)
        relevant: list[list[Statement]] = []
        # A labelled line holding fewer of the question's words ("Regular: Monthly fee 12
        # euros, ..." read from a table whose first column's header, "Plan", no row repeats)
        # is compared only with a relevant line of its label.
        labelled: list[list[Statement]] = []
        for reading in analysed:
            relevant.append([])
            labelled.append([])
            for s in reading.sentences:
                if (
                    len(s.about & asked) >= need and len(s.about & wanted) > share
                ) or _denies_asked(s, asked):
                    relevant[-1].append(_scoped(s, asked, kind))
                elif s.values and label_terms(s.text) and len(s.about & asked) >= least:
                    labelled[-1].append(_scoped(s, asked, kind))
        conflicts: list[Conflict] = []
        seen: set[tuple[str, str, str, str]] = set()
        for i, j in combinations(range(len(top)), 2):
            a, b = top[i], top[j]
            if a.doc_id == b.doc_id or _names_apart(models, a, b):
                continue
            names = analysed[i].names, analysed[j].names
            pairs = [
                *((sa, sb, False) for sa in relevant[i] for sb in relevant[j]),
                *((sa, sb, True) for sa in relevant[i] for sb in labelled[j]),
                *((sa, sb, True) for sa in labelled[i] for sb in relevant[j]),
            ]
            for sa, sb, by_label in pairs:
                key = (a.doc_id, b.doc_id, sa.text, sb.text)
                loose = same_label(sa, sb, asked)
                if key in seen or (by_label and not loose):
                    continue
                if not self._same_subject(sa, sb, asked, *names):
                    continue
                if conflict := _contradiction(a, sa, b, sb, loose, kind):
                    seen.add(key)
                    conflicts.append(conflict)
                    if len(conflicts) == self.max_conflicts:
                        return conflicts
        return conflicts

    def forget(self) -> None:
        """Drop the readings kept by chunk id (benchmarks measure the first look)."""
        with self._lock:
            self._seen.clear()

    def _analysed(self, blocks: Sequence[Block]) -> list[Analysed]:
        if self.load is None:
            return [analyse(block.text) for block in blocks]
        with self._lock:
            found = {b.chunk_id: a for b in blocks if (a := self._seen.get(b.chunk_id))}
        missing = [b.chunk_id for b in blocks if b.chunk_id not in found]
        if missing:
            found.update(self.load(missing))
        out = [found.get(b.chunk_id) or analyse(b.text) for b in blocks]
        with self._lock:
            for block, analysed in zip(blocks, out, strict=True):
                self._seen[block.chunk_id] = analysed
                self._seen.move_to_end(block.chunk_id)
            while len(self._seen) > self.capacity:
                self._seen.popitem(last=False)
        return out

    def _same_subject(
        self,
        sa: Statement,
        sb: Statement,
        asked: frozenset[str],
        names_a: frozenset[str],
        names_b: frozenset[str],
    ) -> bool:
        if not (sa.values and sb.values) and bool(sa.negations) == bool(sb.negations):
            return False  # nothing that could differ
        if _denies(sa, sb, asked) or _denies(sb, sa, asked):
            return True
        shared = len(sa.terms & sb.terms)
        if shared < self.min_shared:
            return False
        if same_label(sa, sb, asked):
            return True  # a line or a table row each: the other cells are other columns
        if sa.about & asked != sb.about & asked:
            return False  # one speaks of something the question asks about and the other not
        if shared < self.min_overlap * len(sa.terms | sb.terms):
            return False
        only_a, only_b = sa.terms - sb.terms, sb.terms - sa.terms
        if only_a and only_b:  # a substitution: "Free plan" vs "Pro plan", "annual" vs "monthly"
            too_many = max(len(only_a), len(only_b)) > self.max_substitutions
            return not (too_many or only_a & names_a or only_b & names_b)
        return True


# A thing said not to exist or not to be asked for, with at most two words before its head:
# "There is no deposit.", "No deposit is required.", "We do not charge a deposit."
_CLAUSE_END = r"(?=\s*(?:[.;,!?]|$))"
_DENIED = (
    re.compile(r"\bthere(?: is|'s| are| will be) no ((?:[^\W\d_]+ ){0,2}?[^\W\d_]+)" + _CLAUSE_END),
    re.compile(
        r"\bno ((?:[^\W\d_]+ ){0,2}?[^\W\d_]+) (?:is|are|will be) (?:charged|required|needed"
        r"|payable|taken|due|necessary|asked for|collected)" + _CLAUSE_END
    ),
    re.compile(
        r"\b(?:(?:do|does|will) not|don't|doesn't|won't) (?:charge|take|ask for|require|need"
        r"|collect|have) (?:a |an |any )?((?:[^\W\d_]+ ){0,2}?[^\W\d_]+)" + _CLAUSE_END
    ),
)


@lru_cache(maxsize=16384)
def _denied(canon: str) -> tuple[tuple[frozenset[str], frozenset[str], frozenset[str]], ...]:
    """Each thing a sentence says is not there: its words' terms, its head word's, and the
    terms of the whole denial ("no deposit is required")."""
    return tuple(
        (_clause_terms(m.group(1)), head, _clause_terms(m.group(0)))
        for pattern in _DENIED
        for m in pattern.finditer(canon)
        if (head := _clause_terms(m.group(1).rsplit(" ", 1)[-1]))
    )


def _denies_asked(sentence: Statement, asked: frozenset[str]) -> bool:
    """Whether `sentence` says a thing the question asks about is not there."""
    return bool(sentence.negations) and any(head & asked for _, head, _ in _denied(sentence.canon))


def _denies(no: Statement, yes: Statement, asked: frozenset[str]) -> bool:
    """Whether `no` says a thing the question asks about is not there ("There is no deposit.")
    and `yes` gives it a value in one clause ("a refundable deposit of 150 euros"): they share
    that one thing's words only, too few for the overlap test. `no` may add nothing `yes` does
    not say ("There is no deposit for members" is about members)."""
    if not no.negations or yes.negations or not yes.values:
        return False
    for thing, head, denial in _denied(no.canon):
        if not head & asked or not thing <= yes.terms or not no.terms - denial <= yes.terms:
            continue
        spans = _clause_spans(yes.canon)
        for value in yes.values:
            start, end = clause_at(spans, value.start)
            if head <= _clause_terms(yes.canon[start:end]):
                return True
    return False


def _names_apart(models: frozenset[str], a: Block, b: Block) -> bool:
    """The question names a model that one block (or its document's name) names and the other
    does not: they are about different products, and the question asks about one of them.
    (Statements read "X300" as a letter and a number, so it is not among their terms.)"""
    return any(names_model(m, a.text, a.name) != names_model(m, b.text, b.name) for m in models)


@lru_cache(maxsize=65536)
def _clause_terms(clause: str) -> frozenset[str]:
    return terms_of([clause])[0]


@lru_cache(maxsize=16384)
def _clause_spans(canon: str) -> list[tuple[int, int]]:
    """A stored sentence's clauses, split once: the same sentences come back request after
    request. (Read only; never changed by the caller.)"""
    return clause_spans(canon)


def _scoped(sentence: Statement, asked: frozenset[str], kind: SlotKind | None) -> Statement:
    """`sentence` with only the values and negations the question asks about: those in a
    clause that shares a term with the question, of a kind that fits what it asks for. A
    label ("Regular plan: 9 euros a month, 0.30 euros per km.") is the subject of every
    clause after it: a clause counts by its own words, or every one does when none has a
    word of the question but the label has ("How much is the late return fee?" of "Late
    return: 20 euros per started half hour.")."""
    spans = _clause_spans(sentence.canon)
    carried = sentence.about - sentence.terms  # "It costs..." is about the sentence before
    label = label_terms(sentence.text) or frozenset()
    own = asked - label
    reached = [
        bool((_clause_terms(sentence.canon[start:end]) - label | carried) & own)
        for start, end in spans
    ]
    every = bool(label & asked) and not any(reached)

    def asked_at(position: int) -> bool:
        start, end = clause_at(spans, position)
        if every:
            return True
        return bool((_clause_terms(sentence.canon[start:end]) - label | carried) & own)

    values = tuple(
        v for v in sentence.values if fits(kind, v.kind, v.slot[0]) and asked_at(v.start)
    )
    negations = tuple(span for span in sentence.negations if asked_at(span[0]))
    if values == sentence.values and negations == sentence.negations:
        return sentence
    return replace(sentence, values=values, negations=negations)


def _contradiction(
    a: Block,
    sa: Statement,
    b: Block,
    sb: Statement,
    loose: bool = False,
    asked: SlotKind | None = None,
) -> Conflict | None:
    """The conflict between `sa` and `sb`, if any; `asked`: the kind of value the question
    asks, which both stating alike settles whatever either denies beside it ("Lost key card:
    Amount 25 euros, When The key card is not returned." and "Lost key card: 25 euros.");
    `loose`: two lines of one label (`_unmatched`)."""
    only_a, only_b = _unmatched(sa, sb, loose)
    if only_a and only_b:
        kind: ConflictKind = "number" if any(v.kind == "number" for v in only_a) else "date"
        return Conflict(a, b, sa.text, sb.text, _shown(sa, only_a), _shown(sb, only_b), kind)
    if asked in _VALUE_KINDS and sa.values and sb.values:
        return None  # the value asked is stated alike on both sides
    if bool(sa.negations) != bool(sb.negations):
        va = tuple(written(sa.text, sa.canon, s, e) for s, e in sa.negations)
        vb = tuple(written(sb.text, sb.canon, s, e) for s, e in sb.negations)
        return Conflict(a, b, sa.text, sb.text, va, vb, "negation")
    return None
