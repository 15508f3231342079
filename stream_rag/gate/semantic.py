"""The gate's second stage: a sentence the lexical check would drop only for `low_overlap`
gets a calibrated second look against the best-matching window of the blocks it cites.

Signals: the MiniLM cosine between the sentence and each window (one block sentence, or two
adjacent ones), the term overlap with lemmas as well as stems against the best window and
the cited blocks, the weight of terms no cited block has (overall, softened by the nearest
block word's static vector, and in the worst clause: an added clause is a new claim), and
the contextual alignment of the sentence's word pieces to the nearest block sentences'
(alignment.py; the block side stored at ingest, the sentence's from its own pass). A
small logistic model with committed coefficients (fitted by `loadtests/calibrate_gate.py` on
the shared dev sets) combines them. Block-side vectors are stored at ingest
(embed/sentences.py, embed/tokens.py); a request embeds at most the sentence itself.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from ..embed.blas import SINGLE_THREADED_BLAS
from ..embed.sentences import SentenceEncoder, SentenceVectors
from ..language.quantities import canonical, scan
from ..language.terms import NEGATION, term_keys
from .alignment import align
from .lexical import GateContext, Verdict

__all__ = [
    "COEFFICIENTS",
    "DEFAULT_CUTOFF",
    "MIN_COSINE",
    "MIN_OVERLAP",
    "SENTENCE_PRECISION",
    "Features",
    "SemanticStage",
    "anchored",
    "block_windows",
    "features",
    "probability",
]

F32 = npt.NDArray[np.float32]
BlockVectors = Callable[[int], SentenceVectors]
Pieces = tuple[list[str], F32]  # a sentence's word pieces and their last hidden states

# Fitted by `python -m loadtests.calibrate_gate` on WiCE dev + BEGIN dev (docs/decisions.md);
# the order is that of `Features.vector()`. Refit whenever a signal changes.
COEFFICIENTS: tuple[float, ...] = (0.0, 0.8706, 0, 0, 0, 0, 0, -2.4409, 5.0407, -4.787, 1.792)
INTERCEPT = -1.2497
# The generated sentence and the blocks' sentences (stored at ingest) are embedded at this
# precision: the same model on both sides of the comparison.
SENTENCE_PRECISION = "int8"
# Probability a grey-zone sentence needs to pass (default; chosen for rejection).
DEFAULT_CUTOFF = 0.49
# Anchors, checked before the model: the sentence must resemble a window of its cited blocks
# and share a fifth of its weighted terms with them. A model fitted on grey-zone sentences
# has seen few that share nothing, so it must not be asked about them (a sentence cited to
# the wrong block would otherwise pass on a high intercept). Defaults, from the dev sets'
# supported grey-zone sentences (about 5-10% of them fall below either).
MIN_COSINE = 0.5
MIN_OVERLAP = 0.2
# Block vectors are stored as float16, so a cosine can come out a little above 1.
_MAX_COSINE = 1.01


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


def anchored(f: Features) -> bool:
    return f.cosine >= MIN_COSINE and f.block_overlap >= MIN_OVERLAP


def probability(
    f: Features, coefficients: Sequence[float] = COEFFICIENTS, intercept: float = INTERCEPT
) -> float:
    """The calibrated probability that an anchored grey-zone sentence is supported."""
    z = intercept + sum(c * x for c, x in zip(coefficients, f.vector(), strict=True))
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


# Clause boundaries: punctuation, and the conjunctions and relatives that add a claim.
_CLAUSE = re.compile(
    r"[,;:()\u2013\u2014]|\s(?:and|but|while|whereas|which|who|although|though|because)\s"
)


def _content(text: str) -> list[tuple[str, frozenset[str], str]]:
    """(stem, lemma keys, surface form) of each content term of raw `text`."""
    _, words = scan(canonical(text))
    return [item for item in term_keys(words) if item[0] != NEGATION]


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


class _WordVectors:
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
    terms = _content(sentence)
    block_keys = ctx.block_keys(cited)
    block_overlap, unsupported = _overlap(terms, block_keys, ctx)
    gap = 0.0
    for clause in _CLAUSE.split(canonical(sentence)):
        clause_terms = _content(clause)
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
    sims = np.vstack([part[1] for part in parts]) @ sentence_vector
    best = int(np.argmax(sims))
    w = windows[best]
    window_keys = ctx.window_keys(w.block, w.start, w.end)
    window_overlap, _ = _overlap(_content(sentence), window_keys, ctx)
    f = replace(f, cosine=float(sims[best]), window_overlap=window_overlap)
    aligned = None if pieces is None else align(*pieces, sentence_vector, cited, vectors)
    if aligned is None:  # no word pieces (a block stored without them): alignment 0
        return f
    block_keys = ctx.block_keys(tuple(sorted(set(cited))))
    missing_worst = 0.0
    for term, keys, surface in _content(sentence):
        match = aligned.words.get(surface.lower())
        if match is not None and not keys & block_keys:
            weight = ctx.weights.get(term, ctx.unseen_weight) / ctx.unseen_weight
            missing_worst = max(missing_worst, weight * (1.0 - max(0.0, match)))
    return replace(
        f,
        alignment=aligned.mean,
        missing_worst=missing_worst,
        weakest_part=aligned.weakest_part,
    )


def best_case(f: Features) -> float:
    """The most `probability` can be for `f`, whatever its embedding signals turn out to be
    (cosine at least MIN_COSINE, as anchored, and at most 1; window overlap and alignment in
    [0, 1], and so is the weakest part's; the contextual missing weight at least 0, and its
    coefficient is never positive)."""
    return max(
        probability(
            replace(
                f,
                cosine=cos,
                window_overlap=overlap,
                alignment=aligned,
                missing_worst=0.0,
                weakest_part=part,
            )
        )
        for cos in (MIN_COSINE, _MAX_COSINE)
        for overlap in (0.0, 1.0)
        for aligned in (0.0, 1.0)
        for part in (0.0, 1.0)
    )


class SemanticStage:
    """Judges grey-zone verdicts; blocking (one model call), so run it in a worker thread."""

    def __init__(
        self,
        encoder: SentenceEncoder,
        cutoff: float = DEFAULT_CUTOFF,
        precision: str = SENTENCE_PRECISION,
    ) -> None:
        # Both sides at `precision`: int8 MiniLM where the model has it (onnxruntime), about
        # 3x cheaper per sentence at request time and half the block-side pass at ingest.
        self.encoder = _at_precision(encoder, precision)  # the blocks' side (ingest)
        self.sentence_encoder = self.encoder  # the generated sentence's side
        self.cutoff = cutoff
        self.word_vectors = _WordVectors(encoder)
        term_keys("went")  # load the lemma tables now (0.35 s), not on a live sentence

    @property
    def name(self) -> str:
        return self.encoder.name

    def judge(
        self, sentence: str, verdict: Verdict, ctx: GateContext, vectors: BlockVectors
    ) -> Verdict:
        """A new verdict for a grey one; anything else is returned unchanged."""
        if not verdict.grey:
            return verdict
        # Its matrix products are small: with OpenBLAS's threads they had a tail of 15-50 ms
        # on a busy machine (waiting for a second core), against ~1.5 ms on one thread.
        with SINGLE_THREADED_BLAS:
            return self._judge(sentence, verdict, ctx, vectors)

    def _judge(
        self, sentence: str, verdict: Verdict, ctx: GateContext, vectors: BlockVectors
    ) -> Verdict:
        # The signals that need no embedding first: most grey sentences that fail, fail
        # whatever their cosine (too little overlap to anchor, or too much unsupported), and
        # are dropped without paying for the sentence's embedding (docs/decisions.md).
        f = features(sentence, verdict, ctx, vectors, None, self.word_vectors)
        if f.block_overlap < MIN_OVERLAP:
            detail = (
                f"semantic: not anchored in {_refs(verdict.cited)} (overlap "
                f"{f.block_overlap:.2f}); lexical: {verdict.detail}"
            )
            return self._drop(verdict, detail, f.to_json(embedded=False))
        ceiling = best_case(f)
        if ceiling < self.cutoff:
            scores = {**f.to_json(embedded=False), "p_max": round(ceiling, 4)}
            detail = (
                f"semantic p <= {ceiling:.2f} < {self.cutoff:.2f} whatever the cosine; "
                f"lexical: {verdict.detail}"
            )
            return self._drop(verdict, detail, scores)
        embedded, ((pieces, states),) = self.sentence_encoder.embed_tokens([sentence])
        f = with_cosine(f, sentence, verdict.cited, ctx, vectors, embedded[0], (pieces, states))
        if not anchored(f):
            detail = (
                f"semantic: not anchored in {_refs(verdict.cited)} (cosine {f.cosine:.2f}, "
                f"overlap {f.block_overlap:.2f}); lexical: {verdict.detail}"
            )
            return Verdict(
                False,
                "low_overlap",
                verdict.cited,
                verdict.score,
                detail,
                True,
                "semantic",
                f.to_json(),
            )
        p = probability(f)
        scores = {**f.to_json(), "p": round(p, 4)}
        if p >= self.cutoff:
            detail = f"semantic p {p:.2f} >= {self.cutoff:.2f} (cosine {f.cosine:.2f})"
            return Verdict(
                True, "ok", verdict.cited, verdict.score, detail, True, "semantic", scores
            )
        detail = f"semantic p {p:.2f} < {self.cutoff:.2f}; lexical: {verdict.detail}"
        return Verdict(
            False, "low_overlap", verdict.cited, verdict.score, detail, True, "semantic", scores
        )

    @staticmethod
    def _drop(verdict: Verdict, detail: str, scores: dict[str, float]) -> Verdict:
        return Verdict(
            False, "low_overlap", verdict.cited, verdict.score, detail, True, "semantic", scores
        )


def _at_precision(encoder: SentenceEncoder, precision: str) -> SentenceEncoder:
    """`encoder` at `precision` if it offers it (the local MiniLM with onnxruntime), else
    `encoder` itself."""
    with_precision = getattr(encoder, "with_precision", None)
    if not callable(with_precision):
        return encoder
    try:
        view: SentenceEncoder = with_precision(precision)
    except ValueError:  # int8 needs onnxruntime: fp32 then, within ~0.006 cosine
        return encoder
    return view


def _refs(numbers: Sequence[int]) -> str:
    return "".join(f"[{n}]" for n in numbers)
