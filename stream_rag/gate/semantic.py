"""The gate's second stage: a sentence the lexical check would drop only for `low_overlap`
gets a calibrated second look against the best-matching window of the blocks it cites.

The signals (signals.py): the MiniLM cosine between the sentence and each window of its
cited blocks, term overlaps, the weight of terms no cited block has, and the contextual
alignment of the sentence's word pieces to the nearest block sentences' (alignment.py; the
block side stored at ingest, the sentence's from its own pass). A small logistic model with
committed coefficients (fitted by `loadtests/calibrate_gate.py` on the shared dev sets)
combines them. Block-side vectors are stored at ingest
(embed/sentences.py, embed/tokens.py); a request embeds at most the sentence itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from ..embed.blas import SINGLE_THREADED_BLAS
from ..embed.sentences import SentenceEncoder
from ..language.terms import term_keys
from .lexical import GateContext, Verdict
from .signals import (
    BlockVectors,
    Features,
    WordVectors,
    block_windows,
    evidence_sentences,
    features,
    with_cosine,
)

__all__ = [
    "COEFFICIENTS",
    "DEFAULT_CUTOFF",
    "INTERCEPT",
    "MIN_COSINE",
    "MIN_OVERLAP",
    "MODE_CUTOFFS",
    "MULTI_COEFFICIENTS",
    "MULTI_INTERCEPT",
    "ONE_WINDOW_GAP",
    "SENTENCE_PRECISION",
    "STRICT_CUTOFF",
    "BlockVectors",
    "Features",
    "SemanticStage",
    "anchored",
    "best_case",
    "block_windows",
    "features",
    "probability",
    "several",
    "with_cosine",
]

# Two models, by the evidence a sentence's match rests on (docs/decisions/, WiCE section and
# "One window or several"): one window (BEGIN's knowledge snippets, or one sentence of a chunk
# that accounts for the whole match), where the whole-sentence and term signals decide, and
# several (a claim drawn from several sentences of an article, WiCE), where a claim must match
# part by part (parts of 3 or more word pieces) and a name no issued block has is an added
# fact. Fitted by `python -m loadtests.calibrate_gate` on WiCE dev + BEGIN dev, each on its
# rows of the pooled folds; the order is that of `Features.vector()`. Refit whenever a signal
# or the routing changes.
COEFFICIENTS: tuple[float, ...] = (
    *(0, 2.8328, 0, 0, 0, 0, -0.5790, -3.4043, 0, -5.9410, 1.4338, 0, 0),
)
INTERCEPT = 3.1183
MULTI_COEFFICIENTS: tuple[float, ...] = (0, 3.6932, 0, 0, 0, 0, 0, 0, 0, 0, 0, -4.3536, 9.2402)
MULTI_INTERCEPT = -8.1748
# The generated sentence and the blocks' sentences (stored at ingest) are embedded at this
# precision: the same model on both sides of the comparison.
SENTENCE_PRECISION = "int8"
# Probability a grey-zone sentence needs to pass at each operating point (gate mode), unless
# STREAM_RAG_GATE_SEMANTIC_CUTOFF sets one for both. Balanced: the lowest keeping WiCE's
# rejection >= 0.93 and BEGIN's >= 0.85 (wice-was-tried-grey-zone.md). Strict: the lowest at
# which, with these models, the stage itself rejects >= 0.95 of each dev set's unsupported
# grey-zone sentences (chosen in grouped folds with refitted models: 0.60-0.93), and the
# highest keeping the fake model's paraphrases (gate-verifier-operating-point.md).
DEFAULT_CUTOFF = 0.57
STRICT_CUTOFF = 0.70
MODE_CUTOFFS = {"strict": STRICT_CUTOFF, "balanced": DEFAULT_CUTOFF}
# Anchors, checked before the model: the sentence must resemble a window of its cited blocks
# and share a fifth of its weighted terms with them. A model fitted on grey-zone sentences
# has seen few that share nothing, so it must not be asked about them (a sentence cited to
# the wrong block would otherwise pass on a high intercept). Defaults, from the dev sets'
# supported grey-zone sentences (about 5-10% of them fall below either).
MIN_COSINE = 0.5
MIN_OVERLAP = 0.2
# Several-sentence evidence goes to the one-window model when the best window's sentences
# alone align to the sentence within this much of the 8 nearest sentences' alignment (0.02-0.05
# measured alike; docs/decisions/, "One window or several").
ONE_WINDOW_GAP = 0.05
# Block vectors are stored as float16, so a cosine can come out a little above 1.
_MAX_COSINE = 1.01


def anchored(f: Features) -> bool:
    return f.cosine >= MIN_COSINE and f.block_overlap >= MIN_OVERLAP


def several(f: Features) -> bool:
    """Whether the several-sentence model weighs `f`: its cited blocks have several
    sentences and no one window accounts for its alignment (without alignment, by count)."""
    if f.sentences <= 1:
        return False
    return f.window_alignment <= 0.0 or f.alignment - f.window_alignment > ONE_WINDOW_GAP


def probability(
    f: Features,
    coefficients: Sequence[float] | None = None,
    intercept: float | None = None,
    *,
    multi: bool | None = None,
) -> float:
    """The calibrated probability that an anchored grey-zone sentence is supported (by the
    model `several` picks, or `multi` says, unless `coefficients` and `intercept` are given)."""
    if coefficients is None or intercept is None:
        multi = several(f) if multi is None else multi
        coefficients = MULTI_COEFFICIENTS if multi else COEFFICIENTS
        intercept = MULTI_INTERCEPT if multi else INTERCEPT
    z = intercept + sum(c * x for c, x in zip(coefficients, f.vector(), strict=True))
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


def best_case(f: Features) -> float:
    """The most `probability` can be for `f`, whatever its embedding signals turn out to be
    (cosine at least MIN_COSINE, as anchored, and at most 1; window overlap and alignment in
    [0, 1], and so are the weakest parts'; the contextual missing weight and the foreign name at
    least 0, and their coefficients are never positive; either model for several sentences)."""
    return max(
        probability(
            replace(
                f,
                cosine=cos,
                window_overlap=overlap,
                alignment=aligned,
                missing_worst=0.0,
                weakest_part=part,
                weakest_long_part=part,
                foreign_name=0.0,
            ),
            multi=multi,
        )
        for multi in ((False, True) if f.sentences > 1 else (False,))
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
        cutoff: float | None = None,
        precision: str = SENTENCE_PRECISION,
    ) -> None:
        # Both sides at `precision`: int8 MiniLM where the model has it (onnxruntime), about
        # 3x cheaper per sentence at request time and half the block-side pass at ingest.
        self.encoder = _at_precision(encoder, precision)  # the blocks' side (ingest)
        self.sentence_encoder = self.encoder  # the generated sentence's side
        # One cutoff per gate mode, or `cutoff` for every mode.
        self.cutoffs = dict(MODE_CUTOFFS if cutoff is None else dict.fromkeys(MODE_CUTOFFS, cutoff))
        self.word_vectors = WordVectors(encoder)
        term_keys("went")  # load the lemma tables now (0.35 s), not on a live sentence

    @property
    def name(self) -> str:
        return self.encoder.name

    @property
    def cutoff(self) -> float:
        """The cutoff of the default (strict) operating point."""
        return self.cutoffs["strict"]

    def cutoff_for(self, mode: str) -> float:
        return self.cutoffs.get(mode, self.cutoff)

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
        # are dropped without paying for the sentence's embedding (docs/decisions/).
        cutoff = self.cutoff_for(ctx.mode)
        f = features(sentence, verdict, ctx, vectors, None, self.word_vectors)
        if f.block_overlap < MIN_OVERLAP:
            detail = (
                f"semantic: not anchored in {_refs(verdict.cited)} (overlap "
                f"{f.block_overlap:.2f}); lexical: {verdict.detail}"
            )
            return self._drop(verdict, detail, f.to_json(embedded=False))
        # Which model weighs it: a read of the cited blocks' stored rows, which the
        # embedding's signals need anyway.
        f = replace(f, sentences=evidence_sentences(verdict.cited, vectors))
        ceiling = best_case(f)
        if ceiling < cutoff:
            scores = {**f.to_json(embedded=False), "p_max": round(ceiling, 4)}
            detail = (
                f"semantic p <= {ceiling:.2f} < {cutoff:.2f} whatever the cosine; "
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
        if p >= cutoff:
            detail = f"semantic p {p:.2f} >= {cutoff:.2f} (cosine {f.cosine:.2f})"
            return Verdict(
                True, "ok", verdict.cited, verdict.score, detail, True, "semantic", scores
            )
        detail = f"semantic p {p:.2f} < {cutoff:.2f}; lexical: {verdict.detail}"
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
