"""Fit the semantic stage's logistic combination on gate-eval JSONL files, with k-fold figures.

    python -m loadtests.calibrate_gate ../shared/data/attribution/wice_dev.jsonl begin.jsonl

Only grey-zone sentences (failed by the lexical stage for overlap alone) are features; the
rest keep their lexical verdict. Prints, per data set, pass/reject of each step (lexical only,
the cosine >= 0.85 prototype, then one logistic model on a growing set of signals, then the
committed two models, one for one-sentence and one for several-sentence evidence, after the
first-person rule of gate/voice.py) as
out-of-fold (k-fold, folds stratified by data set and label, fitted on both sets pooled, each
of the two models on its rows) figures, and the coefficients fitted on everything, to paste
into `stream_rag/gate/semantic.py`.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from loadtests.gate_fit import F64, fit_models, fit_monotone, predict, predict_models
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.embed.sentences import SentenceEncoder, SentenceVectors, embed_sentences
from stream_rag.gate.citations import Citation
from stream_rag.gate.evaluate import Example, load
from stream_rag.gate.semantic import (
    SENTENCE_PRECISION,
    Features,
    SemanticStage,
    anchored,
    several,
)
from stream_rag.gate.semantic import features as compute_features
from stream_rag.gate.voice import speaks_for_itself

STEPS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("+ cosine (best window)", (0, 1)),
    ("+ window overlap (lemmas)", (0, 1, 2)),
    ("+ block overlap (lemmas)", (0, 1, 2, 3)),
    ("+ unsupported weight", (0, 1, 2, 3, 4)),
    ("+ worst clause", (0, 1, 2, 3, 4, 5)),
    ("+ soft unsupported (word vectors)", (0, 1, 2, 3, 4, 5, 6, 7)),
    ("+ token alignment (stored states)", (0, 1, 2, 3, 4, 5, 6, 7, 8)),
    ("+ worst missing term (aligned)", (0, 1, 2, 3, 4, 5, 6, 7, 8, 9)),
    ("+ weakest part (aligned)", (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)),
    ("+ foreign name (aligned)", (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)),
    ("+ weakest long part (aligned)", (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)),
)


@dataclass(slots=True)
class Row:
    dataset: str
    label: bool
    lexical_ok: bool
    grey: bool
    features: Features | None
    # Rows with the same key share a fold: a sentence judged against its evidence padded
    # (`begin_to_jsonl --pad`) and unpadded is one example, never on both sides of a split.
    key: str = ""
    # The sentence speaks in the first person and its cited blocks never do: the stage drops
    # it before any model (gate/voice.py), so the two models' verdicts leave it out.
    own_voice: bool = False
    # Rows with the same group (the evidence they cite: BEGIN's passage, WiCE's article) share
    # a fold: a passage several responses cite is never on both sides of a split.
    group: str = ""


def stored_vectors(embedder: SentenceEncoder) -> Callable[[str], SentenceVectors]:
    """A block's sentence vectors as a request reads them: embedded once per block text and
    round-tripped through the stored float16 form (the word-piece states are already in
    their stored int8 form)."""
    cache: dict[str, SentenceVectors] = {}

    def stored(text: str) -> SentenceVectors:
        if text not in cache:
            computed = embed_sentences([text], embedder)[0]
            stored = SentenceVectors.from_blob(
                embedder.name, computed.spans, computed.to_blob(), embedder.dim
            )
            cache[text] = replace(stored, tokens=computed.tokens)
        return cache[text]

    return stored


def featurise(
    examples: Sequence[Example],
    dataset: str,
    embedder: MiniLMEmbedder,
    precision: str = SENTENCE_PRECISION,
    mode: str = "strict",
) -> list[Row]:
    """Each example's lexical verdict (the claim checks at gate `mode`) and, in the grey
    zone, its signals: the blocks as ingest stores them and the sentence as a request embeds
    it, both at `precision`."""
    from stream_rag.gate.lexical import GateContext

    stage = SemanticStage(embedder, precision=precision)
    stored = stored_vectors(stage.encoder)
    rows = []
    for ex in examples:
        ctx = GateContext(ex.blocks, mode=mode)
        verdict = ctx.check(ex.sentence, [Citation(n) for n in ex.cited])
        feats = None
        own_voice = False
        if verdict.grey:
            own_voice = speaks_for_itself(ex.sentence, [ex.blocks[n - 1] for n in ex.cited])
            vectors, (pieces,) = stage.sentence_encoder.embed_tokens([ex.sentence])
            feats = compute_features(
                ex.sentence,
                verdict,
                ctx,
                lambda n, ex=ex: stored(ex.blocks[n - 1]),  # type: ignore[misc]
                vectors[0],
                stage.word_vectors,
                pieces,
            )
        evidence = "\n".join(ex.blocks[n - 1] for n in sorted(set(ex.cited)))
        rows.append(
            Row(
                dataset, ex.label, verdict.ok, verdict.grey, feats, ex.sentence, own_voice, evidence
            )
        )
    return rows


def folds(rows: Sequence[Row], k: int, seed: int) -> list[int]:
    """Fold of each row: rows citing the same evidence (`Row.group`) share one, groups
    stratified by data set and the label of their first row; a row whose key an earlier row
    has gets that row's fold."""
    assignment = [0] * len(rows)
    rng = random.Random(seed)
    strata: dict[tuple[str, bool], list[tuple[str, str]]] = {}
    members: dict[tuple[str, str], list[int]] = {}
    first: dict[str, int] = {}
    for i, row in enumerate(rows):
        if not row.key or first.setdefault(row.key, i) == i:
            unit = (row.dataset, row.group or f"row {i}")
            if unit not in members:
                strata.setdefault((row.dataset, row.label), []).append(unit)
            members.setdefault(unit, []).append(i)
    start = 0  # each stratum carries on where the last left off, so that folds even out
    for units in strata.values():
        rng.shuffle(units)
        for j, unit in enumerate(units, start):
            for i in members[unit]:
                assignment[i] = j % k
        start += len(units)
    for i, row in enumerate(rows):
        if row.key and first[row.key] != i:
            assignment[i] = assignment[first[row.key]]
    return assignment


def rates(rows: Sequence[Row], passed: Sequence[bool], dataset: str) -> tuple[float, float]:
    pos = [p for r, p in zip(rows, passed, strict=True) if r.dataset == dataset and r.label]
    neg = [p for r, p in zip(rows, passed, strict=True) if r.dataset == dataset and not r.label]
    return sum(pos) / max(1, len(pos)), 1 - sum(neg) / max(1, len(neg))


# What the cutoff is chosen for: the lowest that keeps these rejection rates on the folds it
# is chosen on (names are the data files' stems).
REJECT_FLOOR = {"wice_dev": 0.93, "begin": 0.85}
CUTOFFS = tuple(round(0.3 + 0.01 * i, 2) for i in range(66))


def nested_cutoffs(
    rows: Sequence[Row],
    grey: Sequence[int],
    x: F64,
    y: F64,
    multi: npt.NDArray[np.bool_],
    fold: Sequence[int],
    weight_positive: float,
    fitted: npt.NDArray[np.bool_],
    grey_floor: float | None = None,
) -> tuple[list[float], dict[int, bool]]:
    """Out-of-fold verdicts with the cutoff itself chosen by cross-validation: for each
    outer fold, the other folds' own out-of-fold probabilities (each left out in turn) pick
    the lowest cutoff keeping `REJECT_FLOOR` there (with `grey_floor`: rejecting that share of
    each fitted data set's unsupported grey-zone rows); the held-out fold is judged with it.
    Only `fitted` rows train the models."""
    folds_ = sorted(set(fold))
    chosen, rescued = [], {}
    for k in folds_:
        train = np.array([f != k for f in fold])
        inner = np.zeros(len(grey))
        for j in folds_:
            if j == k:
                continue
            fit_rows = np.array([f not in (j, k) for f in fold]) & fitted
            test = np.array([f == j for f in fold])
            models = fit_models(x[fit_rows], y[fit_rows], multi[fit_rows], weight_positive)
            inner[test] = predict_models(models, x[test], multi[test])
        held = {i for i, f in zip(grey, fold, strict=True) if f == k}
        # Rows outside the grey zone keep their lexical verdict; the held-out fold's grey
        # rows are left out of the choice.
        kept = [i for i in range(len(rows)) if i not in held]
        cutoff = CUTOFFS[-1]
        for c in CUTOFFS:
            verdict = {
                i: bool(inner[j] >= c) and not rows[i].own_voice
                for j, i in enumerate(grey)
                if train[j]
            }
            if grey_floor is not None:
                judged = list(verdict)
                passed = [verdict[i] for i in judged]
                subset = [rows[i] for i in judged]
                names = {rows[i].dataset for j, i in enumerate(grey) if fitted[j]}
                floors = dict.fromkeys(names, grey_floor)
            else:
                passed = [rows[i].lexical_ok or verdict.get(i, False) for i in kept]
                subset = [rows[i] for i in kept]
                floors = REJECT_FLOOR
            if all(rates(subset, passed, name)[1] >= floor for name, floor in floors.items()):
                cutoff = c
                break
        chosen.append(cutoff)
        fit_rows = train & fitted
        models = fit_models(x[fit_rows], y[fit_rows], multi[fit_rows], weight_positive)
        held_p = predict_models(models, x[~train], multi[~train])
        for row, p in zip(np.flatnonzero(~train), held_p, strict=True):
            i = grey[int(row)]
            rescued[i] = bool(p >= cutoff) and not rows[i].own_voice
    return chosen, rescued


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, nargs="+")
    parser.add_argument(
        "--report",
        type=Path,
        action="append",
        default=[],
        help="a gate-eval file judged out of fold but never fitted on (repeatable), e.g. "
        "`begin_to_jsonl --pad 2` (its rows share folds with their unpadded copies)",
    )
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--cutoff", type=float, default=0.5)
    parser.add_argument("--weight-positive", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument(
        "--mode",
        choices=("strict", "balanced"),
        default="strict",
        help="the claim checks' operating point (default strict)",
    )
    parser.add_argument(
        "--grey-floor",
        type=float,
        action="append",
        default=[],
        help="also choose the cutoff in each fold as the lowest rejecting this share of each "
        "fitted set's unsupported grey-zone sentences (repeatable; the strict point: 0.95)",
    )
    parser.add_argument(
        "--precision",
        default=SENTENCE_PRECISION,
        help=f"the MiniLM of both sides, fp32 or int8 (default {SENTENCE_PRECISION})",
    )
    args = parser.parse_args(argv)
    embedder = MiniLMEmbedder()
    rows: list[Row] = []
    names = []
    for path in [*args.data, *args.report]:
        names.append(path.stem)
        rows.extend(featurise(load(path), path.stem, embedder, args.precision, args.mode))
    reported = {path.stem for path in args.report}
    # Only anchored grey-zone sentences reach the model; the others are dropped unasked.
    grey = [i for i, r in enumerate(rows) if r.features is not None and anchored(r.features)]
    x = np.array([f.vector() for i in grey if (f := rows[i].features) is not None])
    y = np.array([1.0 if rows[i].label else 0.0 for i in grey])
    multi = np.array([several(f) for i in grey if (f := rows[i].features) is not None])
    fold = folds([rows[i] for i in grey], args.folds, args.seed)
    fitted = np.array([rows[i].dataset not in reported for i in grey])
    print(f"anchored grey zone: {len(grey)} of {len(rows)} sentences")
    print(
        f"  of them in the first person, their blocks not: {sum(rows[i].own_voice for i in grey)}"
    )
    for name in names:
        n = sum(r.dataset == name for r in rows)
        g = sum(r.dataset == name and r.grey for r in rows)
        print(f"  {name}: {g}/{n} = {g / n:.3f} reach the semantic stage")
    header = "step".ljust(32) + "".join(f"{n:>24}" for n in names)
    print(header + "\n" + " " * 32 + "".join(f"{'pass  reject  bal':>24}" for _ in names))

    def show(label: str, rescued: dict[int, bool], voice_rule: bool = True) -> None:
        # The two models' lines drop what the stage drops before them (`Row.own_voice`).
        passed = [
            r.lexical_ok or (rescued.get(i, False) and not (voice_rule and r.own_voice))
            for i, r in enumerate(rows)
        ]
        cells = []
        for name in names:
            p, rj = rates(rows, passed, name)
            cells.append(f"{p:.3f}  {rj:.3f}  {(p + rj) / 2:.3f}".rjust(24))
        print(label.ljust(32) + "".join(cells))

    show("lexical only", {}, voice_rule=False)
    show(
        "prototype cos>=0.85, lex>=0.3",
        {
            i: f.cosine >= 0.85 and f.lexical >= 0.3
            for i in grey
            if (f := rows[i].features) is not None
        },
        voice_rule=False,
    )
    for label, columns in STEPS:
        cols = list(columns)
        out = np.zeros(len(grey))
        for k in range(args.folds):
            train = np.array([f != k for f in fold]) & fitted
            w = fit_monotone(x[train], y[train], cols, args.weight_positive)
            held = np.array([f == k for f in fold])
            out[held] = predict(w, x[held][:, cols])
        show(
            f"{label} (cv)",
            {i: bool(out[j] >= args.cutoff) for j, i in enumerate(grey)},
            voice_rule=False,
        )
    for k in range(args.folds):
        held = np.array([f == k for f in fold])
        train = ~held & fitted
        models = fit_models(x[train], y[train], multi[train], args.weight_positive)
        out[held] = predict_models(models, x[held], multi[held])
    show(
        "two models by evidence (cv)", {i: bool(out[j] >= args.cutoff) for j, i in enumerate(grey)}
    )
    print("cutoff sweep, two models (cv):")
    for step in (30, 35, 40, *range(44, 66), 70, 75, 80, 85, 90):
        show(
            f"  cutoff {step / 100:.2f}",
            {i: bool(out[j] >= step / 100) for j, i in enumerate(grey)},
        )
    cutoffs, rescued = nested_cutoffs(rows, grey, x, y, multi, fold, args.weight_positive, fitted)
    show("cutoff chosen in each fold (cv)", rescued)
    print("  chosen: " + ", ".join(f"{c:.2f}" for c in cutoffs))
    for floor in args.grey_floor:
        cutoffs, rescued = nested_cutoffs(
            rows, grey, x, y, multi, fold, args.weight_positive, fitted, floor
        )
        show(f"grey floor {floor:.2f}, in each fold (cv)", rescued)
        print("  chosen: " + ", ".join(f"{c:.2f}" for c in cutoffs))
        greys = [rows[i] for i in grey]
        passed = [rescued[i] for i in grey]
        print(
            "  grey zone pass / reject: "
            + ", ".join(
                "{}: {:.3f} / {:.3f}".format(name, *rates(greys, passed, name)) for name in names
            )
        )
    models = fit_models(x[fitted], y[fitted], multi[fitted], args.weight_positive)
    show(
        "two models (in-sample)",
        {
            i: bool(p >= args.cutoff)
            for i, p in zip(grey, predict_models(models, x, multi), strict=True)
        },
    )
    for prefix, w in zip(("", "MULTI_"), models, strict=True):
        print(f"{prefix}INTERCEPT = {w[0]:.4f}")
        print(f"{prefix}COEFFICIENTS = ({', '.join(f'{c:.4f}' for c in w[1:])})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
