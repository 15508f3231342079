"""Refuse before generation when the sources an answer would rest on contradict each other.

A `ConflictDetector` reports pairs of statements from different documents that say the same
thing about the question but differ in a number, a date or time, or a negation.
`LexicalConflictDetector` does it with shared terms and `quantities`: ~1 ms of CPU per 300-word
block, and ~0.1 ms per call once its per-text analysis (`statements.py`) is cached.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from itertools import combinations
from typing import Protocol

from ..language.asking import asking
from ..language.terms import model_names
from ..retrieve.hybrid import Block
from .asked import slot_kind
from .contradiction import (
    Conflict,
    ConflictKind,
    contradiction,
    denies,
    denies_asked,
    names_apart,
    scoped,
)
from .labels import label_terms, same_label, subject_in_label
from .statements import FILLER, Analysed, Statement, analyse, read, terms_of

Loader = Callable[[Sequence[str]], Mapping[str, Analysed]]  # chunk ids -> stored readings

__all__ = ["Conflict", "ConflictDetector", "ConflictKind", "LexicalConflictDetector"]


class ConflictDetector(Protocol):
    def find(self, question: str, blocks: Sequence[Block]) -> list[Conflict]: ...


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
        around = [_heading_terms(block.framed) for block in top]
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
                if (len(s.about & asked) >= need and len(s.about & wanted) > share) or denies_asked(
                    s, asked
                ):
                    relevant[-1].append(scoped(s, asked, kind))
                elif s.values and label_terms(s.text) and len(s.about & asked) >= least:
                    labelled[-1].append(scoped(s, asked, kind))
        conflicts: list[Conflict] = []
        seen: set[tuple[str, str, str, str]] = set()
        for i, j in combinations(range(len(top)), 2):
            a, b = top[i], top[j]
            if a.doc_id == b.doc_id or names_apart(models, a, b):
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
                if not self._same_subject(sa, sb, asked, *names) and not (
                    subject_in_label(sa, sb, asked, around[j])
                    or subject_in_label(sb, sa, asked, around[i])
                ):
                    continue
                if conflict := contradiction(a, sa, b, sb, loose, kind):
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
        if denies(sa, sb, asked) or denies(sb, sa, asked):
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


@lru_cache(maxsize=4096)
def _heading_terms(text: str) -> frozenset[str]:
    """The terms of a block's heading lines, those it stands under included."""
    lines = [line.lstrip("#") for line in text.splitlines() if line.startswith("#")]
    return terms_of([" ".join(lines)])[0] if lines else frozenset()
