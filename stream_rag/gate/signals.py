"""The signals the semantic stage weighs (semantic.py combines them): the MiniLM cosine
between a grey-zone sentence and each window of its cited blocks (one block sentence, or two
adjacent ones), the term overlap with lemmas as well as stems against the best window and the
cited blocks, the weight of terms no cited block has (overall, softened by the nearest block
word's static vector, and in the worst clause), and the contextual alignment of the
sentence's word pieces to the nearest block sentences' (alignment.py).
"""

from __future__ import annotations

import functools
import math
import re
import threading
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from ..embed.sentences import SentenceEncoder, SentenceVectors
from ..language.quantities import canonical, scan
from ..language.terms import NEGATION, term_keys
from .alignment import align
from .lexical import GateContext, Verdict

__all__ = [
    "BlockVectors",
    "Features",
    "Pieces",
    "Window",
    "WordVectors",
    "aligned_match",
    "block_windows",
    "content_keys",
    "evidence_sentences",
    "features",
    "with_cosine",
]

F32 = npt.NDArray[np.float32]
BlockVectors = Callable[[int], SentenceVectors]
Pieces = tuple[list[str], F32]  # a sentence's word pieces and their last hidden states


@dataclass(frozen=True, slots=True)
class Window:
    block: int  # 1-based block number
    start: int  # character span in the block text
    end: int


def block_windows(n: int, stored: SentenceVectors) -> tuple[list[Window], F32]:
    """Every window of one or two adjacent sentences of block `n`, with its unit vector (a
    pair's vector is the normalised sum of its sentences', so no pair is embedded)."""
    spans = stored.spans
    windows = [Window(n, s, e) for s, e in spans]
    rows = [stored.vectors]
    if len(spans) > 1:
        pairs = stored.vectors[:-1] + stored.vectors[1:]
        pairs /= np.maximum(np.linalg.norm(pairs, axis=1, keepdims=True), np.float32(1e-12))
        rows.append(pairs)
        windows.extend(Window(n, spans[i][0], spans[i + 1][1]) for i in range(len(spans) - 1))
    return windows, np.vstack(rows).astype(np.float32, copy=False)


@dataclass(frozen=True, slots=True)
class Features:
    """The signals the combination weighs."""

    lexical: float  # the lexical stage's IDF-weighted overlap (stems, whole cited blocks)
    cosine: float  # best sentence-to-window cosine
    window_overlap: float  # IDF-weighted overlap, stems or lemmas, with the best window
    block_overlap: float  # the same against the whole cited blocks
    unsupported: float  # weight of terms in no cited block, in unseen-term units
    clause_gap: float  # the worst clause's unsupported share
    soft_unsupported: float  # `unsupported`, each term discounted by its nearest block word
    worst_term: float  # the largest single discounted unsupported term
    alignment: float = 0.0  # mean best match of its word pieces in the nearest sentences
    # The largest weight of a term no cited block has, discounted by its word's best match
    # in the alignment (a missing detail keeps its weight; a reworded word loses it).
    missing_worst: float = 0.0
    weakest_part: float = 0.0  # the alignment of the sentence's least matched part
    # A name (a capitalised word after another word) that no issued block has, cited or
    # not: 1 - its word's best aligned match, the largest over such names (0 if none).
    foreign_name: float = 0.0
    weakest_long_part: float = 0.0  # `weakest_part` over parts of 3 or more word pieces
    sentences: int = 0  # how many sentences the cited blocks have (which model weighs it)
    # The alignment against the best window's sentences alone (0 without alignment): when it
    # is about `alignment`, one window accounts for the match (semantic.py, `one_window`).
    window_alignment: float = 0.0

    def vector(self) -> tuple[float, ...]:
        return (
            self.lexical,
            self.cosine,
            self.window_overlap,
            self.block_overlap,
            math.log1p(self.unsupported),
            self.clause_gap,
            math.log1p(self.soft_unsupported),
            self.worst_term,
            self.alignment,
            self.missing_worst,
            self.weakest_part,
            self.foreign_name,
            self.weakest_long_part,
        )

    def to_json(self, *, embedded: bool = True) -> dict[str, float]:
        """The scores shown with a verdict; the embedding's only if it was computed."""
        dense = (
            {
                "cosine": round(self.cosine, 4),
                "window_overlap": round(self.window_overlap, 4),
                "alignment": round(self.alignment, 4),
                "missing_worst": round(self.missing_worst, 4),
                "weakest_part": round(self.weakest_part, 4),
                "foreign_name": round(self.foreign_name, 4),
                "weakest_long_part": round(self.weakest_long_part, 4),
                "window_alignment": round(self.window_alignment, 4),
            }
            if embedded
            else {}
        )
        return {
            **dense,
            "block_overlap": round(self.block_overlap, 4),
            "unsupported": round(self.unsupported, 4),
            "clause_gap": round(self.clause_gap, 4),
            "soft_unsupported": round(self.soft_unsupported, 4),
        }


# A capitalised word right after a word and a space or comma (so not the sentence's first): a
# name, mostly. One after ", " or "(" is not read; reading those too moved a claim or two
# either way (docs/decisions/, WiCE section).
_NAME = re.compile(r"(?<=\w[ ,])([A-Z][\w'.-]+)")
# Clause boundaries: punctuation, and the conjunctions and relatives that add a claim.
_CLAUSE = re.compile(
    r"[,;:()\u2013\u2014]|\s(?:and|but|while|whereas|which|who|although|though|because)\s"
)


@functools.lru_cache(maxsize=1024)
def content_keys(text: str) -> tuple[tuple[str, frozenset[str], str], ...]:
    """(stem, lemma keys, surface form) of each content term of raw `text` (cached: a
    sentence's are read several times)."""
    _, words = scan(canonical(text))
    return tuple(item for item in term_keys(words) if item[0] != NEGATION)


def _overlap(
    terms: Sequence[tuple[str, frozenset[str], str]], evidence: frozenset[str], ctx: GateContext
) -> tuple[float, float]:
    """IDF-weighted share of `terms` with a key in `evidence`, and the missing weight in
    unseen-term units."""
    support = missing = 0.0
    for term, keys, _ in terms:
        weight = ctx.weights.get(term, ctx.unseen_weight)
        if keys & evidence:
            if term not in ctx.dropped:
                support += weight
        else:
            missing += weight
    total = support + missing
    return (support / total if total else 1.0), missing / ctx.unseen_weight


class WordVectors:
    """Static word vectors with a bounded cache (block words recur across requests)."""

    LIMIT = 8192

    def __init__(self, encoder: SentenceEncoder) -> None:
        self.encoder = encoder
        self._cache: dict[str, F32] = {}
        self._lock = threading.Lock()

    def __call__(self, words: Sequence[str]) -> F32:
        with self._lock:
            missing = [w for w in dict.fromkeys(words) if w not in self._cache]
        if missing:
            computed = self.encoder.static_vectors(missing)
            with self._lock:
                if len(self._cache) + len(missing) > self.LIMIT:
                    self._cache.clear()
                self._cache.update(zip(missing, computed, strict=True))
                return np.array([self._cache.get(w, computed[0]) for w in words], np.float32)
        with self._lock:
            return np.array([self._cache[w] for w in words], np.float32)


def features(
    sentence: str,
    verdict: Verdict,
    ctx: GateContext,
    vectors: BlockVectors,
    sentence_vector: F32 | None,
    word_vectors: Callable[[Sequence[str]], F32],
    pieces: Pieces | None = None,
) -> Features:
    """The signals for one grey-zone sentence against the windows of its cited blocks;
    without `sentence_vector`, the ones that need no embedding (cosine and window overlap 0);
    without `pieces` (its word-piece states), no alignment (0)."""
    cited = tuple(sorted(set(verdict.cited)))
    terms = content_keys(sentence)
    block_keys = ctx.block_keys(cited)
    block_overlap, unsupported = _overlap(terms, block_keys, ctx)
    gap = 0.0
    for clause in _CLAUSE.split(canonical(sentence)):
        clause_terms = content_keys(clause)
        if len(clause_terms) >= 2:
            gap = max(gap, 1.0 - _overlap(clause_terms, block_keys, ctx)[0])
    soft = worst = 0.0
    missing = [(t, token) for t, keys, token in terms if not keys & block_keys]
    if missing:
        block_words = sorted({tok for n in cited for tok in ctx.block_tokens(n)})
        if block_words:
            sims = (word_vectors([tok for _, tok in missing]) @ word_vectors(block_words).T).max(1)
        else:
            sims = np.zeros(len(missing), np.float32)
        for (term, _), sim in zip(missing, sims, strict=True):
            weight = ctx.weights.get(term, ctx.unseen_weight) / ctx.unseen_weight
            discounted = weight * (1.0 - max(0.0, float(sim)))
            soft += discounted
            worst = max(worst, discounted)
    f = Features(verdict.score, 0.0, 0.0, block_overlap, unsupported, gap, soft, worst)
    return (
        f
        if sentence_vector is None
        else with_cosine(f, sentence, cited, ctx, vectors, sentence_vector, pieces)
    )


def with_cosine(
    f: Features,
    sentence: str,
    cited: Sequence[int],
    ctx: GateContext,
    vectors: BlockVectors,
    sentence_vector: F32,
    pieces: Pieces | None = None,
) -> Features:
    """`f` with the signals of the sentence's embedding: best window cosine and overlap, and
    with `pieces`, the word pieces' alignment."""
    parts = [block_windows(n, vectors(n)) for n in sorted(set(cited))]
    windows = [w for part in parts for w in part[0]]
    if not windows:
        return f
    f = replace(f, sentences=evidence_sentences(cited, vectors))
    sims = np.vstack([part[1] for part in parts]) @ sentence_vector
    best = int(np.argmax(sims))
    w = windows[best]
    window_keys = ctx.window_keys(w.block, w.start, w.end)
    window_overlap, _ = _overlap(content_keys(sentence), window_keys, ctx)
    f = replace(f, cosine=float(sims[best]), window_overlap=window_overlap)
    spans = vectors(w.block).spans
    in_window = [(w.block, i) for i, (s, e) in enumerate(spans) if s >= w.start and e <= w.end]
    aligned = (
        None
        if pieces is None
        else align(*pieces, sentence_vector, cited, vectors, window=in_window)
    )
    if aligned is None:  # no word pieces (a block stored without them): alignment 0
        return f
    block_keys = ctx.block_keys(tuple(sorted(set(cited))))
    terms = content_keys(sentence)
    missing_worst = 0.0
    for term, keys, surface in terms:
        match = aligned_match(surface, aligned.words)
        if match is not None and not keys & block_keys:
            weight = ctx.weights.get(term, ctx.unseen_weight) / ctx.unseen_weight
            missing_worst = max(missing_worst, weight * (1.0 - max(0.0, match)))
    return replace(
        f,
        alignment=aligned.mean,
        missing_worst=missing_worst,
        weakest_part=aligned.weakest_part,
        weakest_long_part=aligned.weakest_long_part,
        window_alignment=aligned.window,
        foreign_name=_foreign_name(sentence, terms, ctx, block_keys, aligned.words),
    )


def evidence_sentences(cited: Sequence[int], vectors: BlockVectors) -> int:
    """How many sentences the cited blocks have, as stored."""
    return sum(len(vectors(n).spans) for n in sorted(set(cited)))


def _foreign_name(
    sentence: str,
    terms: Sequence[tuple[str, frozenset[str], str]],
    ctx: GateContext,
    cited_keys: frozenset[str],
    matches: dict[str, float],
) -> float:
    """1 - the aligned match of the least matched name in no issued block (0 if none). The
    uncited blocks are read only for a name the cited ones lack."""
    names = {m.group(1).lower() for m in _NAME.finditer(sentence)}
    if not names:
        return 0.0
    worst = 0.0
    for _, keys, surface in terms:
        word = surface.lower()
        if word not in names or keys & cited_keys:
            continue
        if any(keys & ctx.keys_of(n) for n in range(1, ctx.n_blocks + 1)):
            continue
        worst = max(worst, 1.0 - max(0.0, matches.get(word, 0.0)))
    return worst


def _is_cjk(char: str) -> bool:
    return "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff"


def aligned_match(surface: str, words: dict[str, float]) -> float | None:
    """The aligned match of a sentence word, looked up as the word-piece tokenizer spells it:
    lower-cased without accents ("été" is "ete"), CJK one character a word ("日本" is "日" and
    "本", the worse counting); None if it has no pieces there."""
    word = surface.lower()
    match = words.get(word)
    if match is not None:
        return match
    plain = "".join(
        c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn"
    )
    match = words.get(plain)
    if match is not None or not any(_is_cjk(c) for c in plain):
        return match
    found = [m for c in plain if (m := words.get(c)) is not None]
    return min(found) if found else None
