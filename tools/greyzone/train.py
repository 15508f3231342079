"""A learned grey-zone decision over the gate's own signals, measured out of fold against the
semantic stage's two models (issue 27; docs/decisions/gate-learned-grey-zone.md).

    python -m tools.greyzone.train wice_dev.jsonl begin.jsonl --report longform.jsonl \
        --seed 13 --seed 7 --seed 21 --l2 1 --l2 10 [--soft] [--mode balanced]

Each file's sentences are judged by the lexical stage and its claim checks at `--mode`; the
anchored grey-zone ones (with `--soft`, also those a soft claim check dropped: `SOFT`) get the
semantic stage's 13 signals, four more (second-best window cosine, clause count, words no
cited block has, length against the best window), the several-sentence flag and which soft
check fired. One logistic model (standardised, L2) is compared with the two committed ones
refitted in the same folds (grouped by cited evidence: `calibrate_gate.folds`). Cutoffs by
three rules, each chosen on the training folds' own out-of-fold probabilities: "fixed" (the
mode's committed cutoff), "grey95" (the stage rejects >= 0.95 of each fitted set's unsupported
grey rows) and "total5" (each fitted set's unsupported emitted, lexical passes included, <=
5%). `--report` files are judged, never fitted on nor used to choose a cutoff.
"""

from __future__ import annotations

import argparse
import math
import pickle
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from loadtests.calibrate_gate import Row as FoldRow
from loadtests.calibrate_gate import folds, stored_vectors
from loadtests.gate_fit import fit, fit_models, predict_models
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.embed.sentences import SentenceVectors
from stream_rag.gate.citations import Citation
from stream_rag.gate.evaluate import load
from stream_rag.gate.lexical import GateContext
from stream_rag.gate.semantic import MODE_CUTOFFS, SemanticStage, anchored, block_windows, several
from stream_rag.gate.semantic import features as compute_features
from stream_rag.gate.voice import speaks_for_itself
from stream_rag.language.quantities import canonical, scan
from stream_rag.language.terms import term_keys

F64 = npt.NDArray[np.float64]
F32 = npt.NDArray[np.float32]
# The claim checks that judge how a clause is worded rather than what it states (a number, a
# polarity, a name, a swap, a marker always refuse), read from the verdict's detail.
SOFT = (
    ("clause share", re.compile(r"shares \d\.\d\d of its words")),
    ("cause link", re.compile(r"links by a cause")),
    ("scope word", re.compile(r"never says \(nor its like\)|is not in the span$")),
    ("judgement", re.compile(r"^judges \(")),
    ("list addition", re.compile(r"is added to what the span lists")),
)
# Clause boundaries for the clause count (as the semantic stage's worst-clause signal).
_CLAUSE = re.compile(
    r"[,;:()\u2013\u2014]|\s(?:and|but|while|whereas|which|who|although|though|because)\s"
)
CUTS = tuple(round(0.05 + 0.01 * i, 2) for i in range(95))


@dataclass(slots=True)
class Row:
    dataset: str
    label: bool
    lexical_ok: bool
    grey: bool
    group: str  # the cited evidence: rows sharing it share a fold
    key: str
    soft: int = 0  # 1 + the index in SOFT of the soft claim check that dropped it, else 0
    own_voice: bool = False
    anchored: bool = False
    multi: bool = False
    base: tuple[float, ...] = ()  # Features.vector()
    extra: tuple[float, ...] = ()


def soft_check(detail: str) -> int:
    """1 + the index of the soft check `detail` comes from, 0 for any other."""
    return next((i + 1 for i, (_, pattern) in enumerate(SOFT) if pattern.search(detail)), 0)


def _terms(text: str) -> list[frozenset[str]]:
    _, words = scan(canonical(text))
    return [keys | {stem} for stem, keys, _ in term_keys(words)]


def featurise(path: Path, embedder: MiniLMEmbedder, mode: str) -> list[Row]:
    """Each sentence's lexical verdict and, in the grey zone or after a soft check, its signals
    (blocks as ingest stores them, the sentence as a request embeds it)."""
    stage = SemanticStage(embedder)
    stored = stored_vectors(stage.encoder)
    rows = []
    for ex in load(path):
        ctx = GateContext(ex.blocks, mode=mode)
        verdict = ctx.check(ex.sentence, [Citation(n) for n in ex.cited])
        evidence = "\n".join(ex.blocks[n - 1] for n in sorted(set(ex.cited)))
        row = Row(path.stem, ex.label, verdict.ok, verdict.grey, evidence, ex.sentence)
        rows.append(row)
        if verdict.reason == "claim_mismatch":
            row.soft = soft_check(verdict.detail)
        if not verdict.grey and not row.soft:
            continue
        row.own_voice = speaks_for_itself(ex.sentence, [ex.blocks[n - 1] for n in ex.cited])
        vectors, (pieces,) = stage.sentence_encoder.embed_tokens([ex.sentence])

        def blocks(n: int, blocks: tuple[str, ...] = ex.blocks) -> SentenceVectors:
            return stored(blocks[n - 1])

        f = compute_features(
            ex.sentence, verdict, ctx, blocks, vectors[0], stage.word_vectors, pieces
        )
        row.base, row.multi, row.anchored = f.vector(), several(f), anchored(f)
        row.extra = _extra(ex.sentence, verdict.cited, ctx, blocks, vectors[0])
    return rows


def _extra(
    sentence: str,
    cited: Sequence[int],
    ctx: GateContext,
    blocks: Callable[[int], SentenceVectors],
    vector: F32,
) -> tuple[float, ...]:
    """Second-best window cosine (a window not overlapping the best), clause count, log of
    the count of words no cited block has, log length ratio against the best window."""
    parts = [block_windows(n, blocks(n)) for n in sorted(set(cited))]
    windows = [w for part in parts for w in part[0]]
    sims = np.vstack([part[1] for part in parts]) @ vector
    order = np.argsort(-sims)
    best = windows[int(order[0])]
    second = 0.0
    for i in order[1:]:
        w = windows[int(i)]
        if w.block != best.block or w.end <= best.start or w.start >= best.end:
            second = float(sims[int(i)])
            break
    terms = _terms(sentence)
    keys = ctx.block_keys(tuple(sorted(set(cited))))
    novel = sum(1 for k in terms if not k & keys)
    clauses = sum(1 for c in _CLAUSE.split(sentence) if len(_terms(c)) >= 2)
    window_terms = _terms(ctx.block_text(best.block)[best.start : best.end])
    ratio = math.log((len(terms) + 1) / (len(window_terms) + 1))
    return (second, float(clauses), math.log1p(novel), ratio)


# --- the models ----------------------------------------------------------------------------


def design(rows: Sequence[Row], kind: str) -> F64:
    base = np.array([r.base for r in rows])
    if kind == "current":
        return base
    extra = np.array([r.extra for r in rows])
    multi = np.array([[float(r.multi)] for r in rows])
    fired = np.array([[float(r.soft == k + 1) for k in range(len(SOFT))] for r in rows])
    return np.hstack([base, extra, multi, fired])


@dataclass(frozen=True, slots=True)
class Learned:
    w: F64  # [intercept, coefficients...] over standardised columns
    mean: F64
    std: F64

    def predict(self, x: F64) -> F64:
        z = self.w[0] + ((x - self.mean) / self.std) @ self.w[1:]
        out: F64 = 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))
        return out


def fit_predict(
    kind: str,
    l2: float,
    x: F64,
    y: F64,
    m: npt.NDArray[np.bool_],
    test: F64,
    tm: npt.NDArray[np.bool_],
) -> F64:
    """Fit on (x, y) and predict `test`: the two committed models refitted, or the learned one."""
    if kind == "current":
        return predict_models(fit_models(x, y, m), test, tm)
    mean, std = x.mean(0), x.std(0) + 1e-9
    return Learned(fit((x - mean) / std, y, l2=l2), mean, std).predict(test)


def choose(
    rule: str,
    p: dict[int, float],
    rows: Sequence[Row],
    names: Sequence[str],
    counted: frozenset[int],
) -> float:
    """The lowest cutoff meeting `rule` given grey rows' probabilities `p` (row -> p); for
    "total5" the `counted` rows outside `p` count with their lexical verdict."""
    for c in CUTS:
        ok = True
        for name in names:
            neg = [i for i in p if rows[i].dataset == name and not rows[i].label]
            passed = sum(p[i] >= c and not rows[i].own_voice for i in neg)
            if rule == "grey95":
                ok = ok and (not neg or 1 - passed / len(neg) >= 0.95)
            else:
                total = [i for i in counted if rows[i].dataset == name and not rows[i].label]
                lexical = sum(rows[i].lexical_ok for i in total if i not in p)
                ok = ok and (lexical + passed) / max(1, len(total)) <= 0.05
        if ok:
            return c
    return CUTS[-1]


@dataclass(frozen=True, slots=True)
class Outcome:
    passed: dict[str, dict[int, bool]]  # rule -> row -> passed (judged rows only)
    cutoffs: dict[str, list[float]]  # rule -> cutoff of each fold
    p: dict[int, float]  # row -> out-of-fold probability


def run(
    rows: Sequence[Row],
    fitted: Sequence[str],
    k: int,
    seed: int,
    kind: str,
    l2: float,
    fixed: float,
    soft: bool,
) -> Outcome:
    """Out-of-fold verdicts of one model on the judged rows, a cutoff per rule and fold."""
    judged = [
        i for i, r in enumerate(rows) if (r.grey or (soft and r.soft)) and r.anchored and r.base
    ]
    x = design([rows[i] for i in judged], kind)
    y = np.array([1.0 if rows[i].label else 0.0 for i in judged])
    m = np.array([rows[i].multi for i in judged])
    as_fold_rows = [
        FoldRow(r.dataset, r.label, r.lexical_ok, r.grey, None, r.key, False, r.group) for r in rows
    ]
    fold_of = folds(as_fold_rows, k, seed)
    fold = np.array([fold_of[i] for i in judged])
    fits = np.array([rows[i].dataset in fitted for i in judged])
    outcome = Outcome({"fixed": {}, "grey95": {}, "total5": {}}, {}, {})
    for held in range(k):
        inner = np.zeros(len(judged))
        for j in range(k):
            if j != held:
                tr = (fold != held) & (fold != j) & fits
                te = fold == j
                inner[te] = fit_predict(kind, l2, x[tr], y[tr], m[tr], x[te], m[te])
        train = (fold != held) & fits
        test = fold == held
        p = fit_predict(kind, l2, x[train], y[train], m[train], x[test], m[test])
        inner_p = {judged[int(t)]: float(inner[t]) for t in np.flatnonzero(train)}
        counted = frozenset(
            i for i, r in enumerate(rows) if fold_of[i] != held and r.dataset in fitted
        )
        cuts = {
            "fixed": fixed,
            "grey95": choose("grey95", inner_p, rows, fitted, counted),
            "total5": choose("total5", inner_p, rows, fitted, counted),
        }
        for rule, cut in cuts.items():
            outcome.cutoffs.setdefault(rule, []).append(cut)
            for t, pi in zip(np.flatnonzero(test), p, strict=True):
                i = judged[int(t)]
                outcome.p[i] = float(pi)
                outcome.passed[rule][i] = bool(pi >= cut) and not rows[i].own_voice
    return outcome


def auc(rows: Sequence[Row], p: dict[int, float], name: str) -> float:
    pos = [p[i] for i in p if rows[i].dataset == name and rows[i].label]
    neg = [p[i] for i in p if rows[i].dataset == name and not rows[i].label]
    if not pos or not neg:
        return float("nan")
    return sum((a > b) + 0.5 * (a == b) for a in pos for b in neg) / (len(pos) * len(neg))


def figures(rows: Sequence[Row], passed: dict[int, bool], names: Sequence[str]) -> str:
    """Kept / unsupported emitted per set (counts), lexical passes included."""
    cells = []
    for name in names:
        pos = [i for i, r in enumerate(rows) if r.dataset == name and r.label]
        neg = [i for i, r in enumerate(rows) if r.dataset == name and not r.label]
        kept = sum(rows[i].lexical_ok or passed.get(i, False) for i in pos)
        emitted = sum(rows[i].lexical_ok or passed.get(i, False) for i in neg)
        cells.append(f"{name} {kept / len(pos):.3f}/{emitted / len(neg):.3f} ({kept},{emitted})")
    return "  ".join(cells)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("data", type=Path, nargs="+")
    parser.add_argument("--report", type=Path, action="append", default=[])
    parser.add_argument("--mode", choices=("strict", "balanced"), default="strict")
    parser.add_argument("--seed", type=int, action="append", default=[])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--l2", type=float, action="append", default=[])
    parser.add_argument(
        "--soft", action="store_true", help="the learned model also judges soft-check drops"
    )
    parser.add_argument("--cache", type=Path, help="the features, pickled here or read back")
    args = parser.parse_args(argv)
    if args.cache and args.cache.exists():
        rows: list[Row] = pickle.loads(args.cache.read_bytes())
    else:
        embedder = MiniLMEmbedder()
        rows = [r for p in [*args.data, *args.report] for r in featurise(p, embedder, args.mode)]
        if args.cache:
            args.cache.write_bytes(pickle.dumps(rows))
    fitted = [p.stem for p in args.data]
    names = fitted + [p.stem for p in args.report]
    for name in names:
        grey = [r for r in rows if r.dataset == name and r.grey and r.anchored]
        print(f"{name}: {len(grey)} anchored grey rows, {sum(r.label for r in grey)} supported")
        for k, (check, _) in enumerate(SOFT):
            hit = [r for r in rows if r.dataset == name and r.soft == k + 1]
            print(
                f"  dropped by {check}: {sum(r.label for r in hit)} supported, "
                f"{sum(not r.label for r in hit)} not (anchored: "
                f"{sum(r.label and r.anchored for r in hit)}, "
                f"{sum(not r.label and r.anchored for r in hit)})"
            )
    print(f"{'lexical only':<30}", figures(rows, {}, names))
    for seed in args.seed or [13]:
        for kind, l2 in [("current", 0.0), *(("learned", v) for v in args.l2 or [1.0])]:
            out = run(
                rows,
                fitted,
                args.folds,
                seed,
                kind,
                l2,
                MODE_CUTOFFS[args.mode],
                args.soft and kind == "learned",
            )
            aucs = " ".join(f"{n} {auc(rows, out.p, n):.3f}" for n in names)
            name = kind if kind == "current" else f"learned l2={l2:g}"
            print(f"seed {seed} {name}: AUC (out of fold, judged rows) {aucs}")
            for rule, passed in out.passed.items():
                cuts = ",".join(f"{c:.2f}" for c in out.cutoffs[rule])
                print(f"  {rule:<28}", figures(rows, passed, names), f" cutoffs {cuts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
