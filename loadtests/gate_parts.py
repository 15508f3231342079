"""Measure claim-decomposition and related candidate signals for the gate's semantic stage
against the committed ones, over several fold seeds (the issue 9 WiCE round).

    python -m loadtests.gate_parts ../shared/data/attribution/wice_dev.jsonl begin.jsonl

Each grey-zone sentence's content word pieces are matched once against every cited block
sentence (stored form); the candidates are computed from those matches: the weakest part's
alignment with other boundaries, part sizes and numbers of nearest sentences, the alignment
to the single best sentence or the union of the top k (evidence spread), a name no issued
block has, cosine x alignment, and an intercept for multi-sentence evidence. Each is added
alone to both of the committed models (one-sentence and several-sentence evidence) and
cross-validated as `calibrate_gate` does (5 folds stratified by data set and label, each model
fitted on its rows of the pooled folds, signs fixed; a sign of 0 is free).
"best" is the mean WiCE pass over the seeds at the lowest cutoff where every seed keeps
`calibrate_gate.REJECT_FLOOR` and BEGIN's balanced accuracy >= 0.88.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from loadtests.calibrate_gate import (
    MULTI_COLUMNS,
    REJECT_FLOOR,
    SIGNS,
    SINGLE_COLUMNS,
    fit_models,
    folds,
    predict_models,
    rates,
    stored_vectors,
)
from loadtests.calibrate_gate import Row as CalibrationRow
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.embed.sentences import SentenceVectors
from stream_rag.embed.tokens import content_pieces, project
from stream_rag.gate.alignment import NEAREST, PART_BOUNDARIES, align
from stream_rag.gate.citations import Citation
from stream_rag.gate.evaluate import load
from stream_rag.gate.lexical import GateContext
from stream_rag.gate.semantic import Features, SemanticStage, anchored
from stream_rag.gate.semantic import features as compute_features
from stream_rag.gate.signals import _content

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
# Cut at punctuation and conjunctions only (no relatives or prepositions).
SMALL_BOUNDARIES = frozenset(
    (",", ";", ":", "(", ")", "\u2013", "\u2014", "and", "but", "while", "whereas", "which")
) | frozenset(("who", "although", "though", "because"))
_NAME = re.compile(r"(?<=\w[ ,])([A-Z][\w'.-]+)")  # capitalised, not sentence-initial


@dataclass(slots=True)
class Grey:
    features: Features
    pieces: list[str]
    keep: list[int]
    matches: F32  # (pieces, block sentences): each piece's best match in each sentence
    cosines: F32  # each block sentence's cosine to the sentence
    names: list[tuple[float, float]]  # (weight, aligned match) of names in no cited block


def _featurise(
    path: Path, embedder: MiniLMEmbedder
) -> tuple[list[CalibrationRow], list[Grey | None]]:
    stage = SemanticStage(embedder)
    stored = stored_vectors(stage.encoder)  # the block side as ingest stores it
    rows, grey = [], []
    for ex in load(path):
        ctx = GateContext(ex.blocks)
        verdict = ctx.check(ex.sentence, [Citation(n) for n in ex.cited])
        item = None
        if verdict.grey:
            vectors, ((pieces, states),) = stage.sentence_encoder.embed_tokens([ex.sentence])

            def block(n: int, blocks: tuple[str, ...] = ex.blocks) -> SentenceVectors:
                return stored(blocks[n - 1])

            f = compute_features(
                ex.sentence,
                verdict,
                ctx,
                block,
                vectors[0],
                stage.word_vectors,
                (pieces, states),
            )
            cited = sorted(set(verdict.cited))
            projected = project(states)
            columns, cosines = [], []
            for n in cited:
                sv = stored(ex.blocks[n - 1])
                assert sv.tokens is not None
                cosines += (sv.vectors @ vectors[0]).tolist()
                for i in range(len(sv.spans)):
                    near = sv.tokens.rows([i])
                    empty = np.full(len(pieces), -1.0, np.float32)
                    columns.append((projected @ near.T).max(1) if len(near) else empty)
            aligned = align(pieces, states, vectors[0], cited, block)
            words = {} if aligned is None else aligned.words
            capitalised = {m.group(1).lower() for m in _NAME.finditer(ex.sentence)}
            block_keys = ctx.block_keys(tuple(cited))
            names = [
                (
                    ctx.weights.get(t, ctx.unseen_weight) / ctx.unseen_weight,
                    words.get(s.lower(), 0.0),
                )
                for t, keys, s in _content(ex.sentence)
                if s.lower() in capitalised and not keys & block_keys
            ]
            item = Grey(
                f,
                pieces,
                content_pieces(pieces) or list(range(len(pieces))),
                np.array(columns, np.float32).T,
                np.array(cosines, np.float32),
                names,
            )
        rows.append(CalibrationRow(path.stem, ex.label, verdict.ok, verdict.grey, None))
        grey.append(item)
    return rows, grey


def _parts(g: Grey, boundaries: frozenset[str], least: int) -> list[list[int]]:
    out: list[list[int]] = [[]]
    kept = set(g.keep)
    for i, piece in enumerate(g.pieces):
        if piece in boundaries:
            out.append([])
        elif i in kept:
            out[-1].append(i)
    return [p for p in out if len(p) >= least] or [g.keep]


def _weakest(boundaries: frozenset[str], least: int, nearest: int) -> Callable[[Grey], float]:
    def signal(g: Grey) -> float:
        near = np.argsort(-g.cosines)[:nearest]
        best = g.matches[:, near].max(1)
        return min(float(best[p].mean()) for p in _parts(g, boundaries, least))

    return signal


def _union(k: int) -> Callable[[Grey], float]:
    return lambda g: float(g.matches[g.keep][:, np.argsort(-g.cosines)[:k]].max(1).mean())


CANDIDATES: dict[str, tuple[int, Callable[[Grey], float]]] = {
    "weakest part, 3 pieces": (1, _weakest(PART_BOUNDARIES, 3, NEAREST)),
    "weakest part, 1 piece": (1, _weakest(PART_BOUNDARIES, 1, NEAREST)),
    "weakest part, 5 nearest": (1, _weakest(PART_BOUNDARIES, 2, 5)),
    "weakest part, every sentence": (1, _weakest(PART_BOUNDARIES, 2, 10**6)),
    "weakest part, punctuation+conj.": (1, _weakest(SMALL_BOUNDARIES, 2, NEAREST)),
    "single best sentence": (1, lambda g: float(g.matches[g.keep].mean(0).max())),
    "union of top 3": (1, _union(3)),
    "union of every sentence": (1, _union(10**6)),
    "name in no issued block": (-1, lambda g: max((w for w, _ in g.names if w >= 0.99), default=0)),
    "cosine x alignment": (0, lambda g: g.features.cosine * g.features.alignment),
    "multi-sentence evidence": (0, lambda g: float(len(g.cosines) > 1)),
}


def _auc(score: F64, label: F64) -> float:
    pos, neg = score[label > 0], score[label == 0]
    wins = (pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean()
    return float(wins)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, nargs="+")
    parser.add_argument("--seeds", type=int, nargs="+", default=[13, 7, 21])
    args = parser.parse_args(argv)
    embedder = MiniLMEmbedder()
    rows: list[CalibrationRow] = []
    greys: list[Grey | None] = []
    for path in args.data:
        part_rows, part_grey = _featurise(path, embedder)
        rows += part_rows
        greys += part_grey
    index = [i for i, g in enumerate(greys) if g is not None and anchored(g.features)]
    zone = [g for g in greys if g is not None and anchored(g.features)]
    y = np.array([1.0 if rows[i].label else 0.0 for i in index])
    sets = np.array([rows[i].dataset for i in index])
    names = sorted(set(sets))
    target = "wice_dev" if "wice_dev" in names else names[0]
    base = np.array([g.features.vector() for g in zone])
    multi = np.array([g.features.sentences > 1 for g in zone])
    cutoffs = [round(0.30 + 0.01 * i, 2) for i in range(41)]
    print(f"anchored grey zone: {len(zone)} of {len(rows)} sentences")
    for label, (sign, signal) in {"committed models": (1, None), **CANDIDATES}.items():
        x, signs = base, list(SIGNS)
        columns = (list(SINGLE_COLUMNS), list(MULTI_COLUMNS))
        if signal is not None:
            x = np.hstack([base, np.array([[signal(g)] for g in zone])])
            signs.append(sign)
            columns = (columns[0] + [len(SIGNS)], columns[1] + [len(SIGNS)])
        per_seed, aucs = [], {n: 0.0 for n in names}
        for seed in args.seeds:
            fold = folds([rows[i] for i in index], 5, seed)
            out = np.zeros(len(zone))
            for k in range(5):
                train = np.array([f != k for f in fold])
                models = fit_models(x[train], y[train], multi[train], 1.0, columns, signs)
                out[~train] = predict_models(models, x[~train], multi[~train])
            for n in names:
                aucs[n] += _auc(out[sets == n], y[sets == n]) / len(args.seeds)
            per_seed.append(out)
        best = None
        for cutoff in cutoffs:
            figures = []
            for out in per_seed:
                passed = [r.lexical_ok for r in rows]
                for j, i in enumerate(index):
                    passed[i] = passed[i] or bool(out[j] >= cutoff)
                figures.append({n: rates(rows, passed, n) for n in names})
            keeps = all(
                fig[n][1] >= REJECT_FLOOR.get(n, 0.0) for fig in figures for n in names
            ) and all(sum(fig["begin"]) / 2 >= 0.88 for fig in figures if "begin" in fig)
            if keeps:
                wice = [fig[target][0] for fig in figures]
                best = (float(np.mean(wice)), cutoff)
                break
        shown = ", ".join(f"AUC {n} {aucs[n]:.3f}" for n in names)
        found = "none" if best is None else f"{best[0]:.3f} at cutoff {best[1]:.2f}"
        print(f"{label:34s} {shown}; best {found}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
