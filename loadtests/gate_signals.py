"""Measure candidate signals for the gate's semantic stage against the signals committed
before token alignment went in (fp32 sentences), with the same k-fold protocol as
`calibrate_gate` (folds stratified by data set and label, one model fitted on both sets
pooled, coefficients of fixed sign, out-of-fold verdicts).

    python -m loadtests.gate_signals ../shared/data/attribution/wice_dev.jsonl begin.jsonl

Candidates (each added alone to those signals, then together):
- union_cover: IDF-weighted share of the sentence's terms (stems or lemmas) in the union of
  the 3 block sentences nearest to it (claims supported by two or three sentences together);
- union_unsupported: the weight of its terms in none of those 3 sentences (log1p);
- entity_cover: share of its capitalised words (names) that occur in the cited blocks;
- clause_cosine: mean over its clauses of the best window cosine (embeds each clause);
- token_align: contextual token alignment, the mean over its content word pieces of the best
  cosine to a word piece of the 8 nearest block sentences (BERTScore precision), block side
  fp32, every word piece (the first measurement's form);
- align_content: the same against the block sentences' content word pieces only;
- align_i8_384 / align_i8_128 / align_i8_64: content pieces, projected to that many dimensions
  by the fixed seeded rotation and stored as int8 (embed/tokens.py; 128 is what is stored);
- align_unmatched / align_worst: share of the sentence's pieces with no match >= 0.5, and the
  lowest best match (stored form);
- align_window: the stored form against the best window's sentences only.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from loadtests.calibrate_gate import fit_signed, folds, rates, stored_vectors
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.embed.sentences import SentenceVectors
from stream_rag.embed.tokens import DIMS, compress, content_pieces, project
from stream_rag.gate.alignment import NEAREST, align
from stream_rag.gate.citations import Citation
from stream_rag.gate.evaluate import load
from stream_rag.gate.lexical import GateContext, Verdict
from stream_rag.gate.semantic import Features, SemanticStage, anchored, block_windows
from stream_rag.gate.semantic import features as compute_features
from stream_rag.gate.signals import _CLAUSE, _content, _overlap

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
# The signals with non-zero coefficients before token alignment went in: the baseline each
# candidate is added to (the table in docs/decisions.md).
COMMITTED = ("cosine", "log_soft", "worst_term")
SIGNS = {"cosine": 1, "log_soft": -1, "worst_term": -1, "union_cover": 1}
SIGNS |= {"union_unsupported": -1, "entity_cover": 1, "clause_cosine": 1, "token_align": 1}
SIGNS |= {"align_content": 1, "align_i8_384": 1, "align_i8_128": 1, "align_i8_64": 1}
SIGNS |= {"align_unmatched": -1, "align_worst": 1, "align_window": 1}
_NAME = re.compile(r"(?<!^)(?<![.!?]\s)\b([A-Z][\w'-]+)")


@dataclass(slots=True)
class Row:
    dataset: str
    label: bool
    lexical_ok: bool
    grey: bool
    base: Features | None = None
    extra: dict[str, float] = field(default_factory=dict)

    def value(self, name: str) -> float:
        assert self.base is not None
        if name == "log_soft":
            return math.log1p(self.base.soft_unsupported)
        if name in self.extra:
            return self.extra[name]
        return float(getattr(self.base, name))


class TokenStates:
    """MiniLM's last hidden states per word piece, fp32 unit rows, cached by text."""

    def __init__(self, embedder: MiniLMEmbedder) -> None:
        self.embedder = embedder
        self.cache: dict[str, tuple[F32, list[str]]] = {}

    def __call__(self, text: str) -> tuple[F32, list[str]]:
        if text not in self.cache:
            _, ((pieces, hidden),) = self.embedder.embed_tokens([text])
            hidden = hidden / np.maximum(np.linalg.norm(hidden, axis=1, keepdims=True), 1e-12)
            self.cache[text] = (hidden, pieces)
        return self.cache[text]


def _stored_form(states: F32, pieces: list[str], dims: int) -> F32:
    """Content pieces' states as the store keeps them at `dims` (int8, dequantised)."""
    return compress([(pieces, states)], dims).states


def _best(query: F32, near: F32) -> F64:
    best: F64 = (query @ near.T).max(axis=1).astype(np.float64)
    return best


def extras(
    sentence: str,
    verdict: Verdict,
    ctx: GateContext,
    vectors: Callable[[int], SentenceVectors],
    vector: F32,
    embedder: MiniLMEmbedder,
    tokens: TokenStates | None,
) -> dict[str, float]:
    cited = tuple(sorted(set(verdict.cited)))
    singles: list[tuple[float, str]] = []
    for n in cited:
        stored, text = vectors(n), ctx.block_text(n)
        sims = stored.vectors @ vector
        singles += [(float(s), text[a:b]) for s, (a, b) in zip(sims, stored.spans, strict=True)]
    singles.sort(key=lambda item: -item[0])
    terms = _content(sentence)
    union = frozenset().union(*(ctx.text_keys(text) for _, text in singles[:3]))
    cover, missing = _overlap(terms, union, ctx)
    out = {"union_cover": cover, "union_unsupported": math.log1p(missing)}
    names = {m.group(1).lower() for m in _NAME.finditer(sentence)}
    blocks = " ".join(ctx.block_text(n) for n in cited).lower()
    found = sum(bool(re.search(rf"\b{re.escape(name)}\b", blocks)) for name in names)
    out["entity_cover"] = found / len(names) if names else 1.0
    windows = np.vstack([block_windows(n, vectors(n))[1] for n in cited])
    clauses = [c.strip() for c in _CLAUSE.split(sentence) if c and len(_content(c)) >= 3]
    if len(clauses) >= 2:
        out["clause_cosine"] = float((embedder.embed(clauses) @ windows.T).max(1).mean())
    else:
        out["clause_cosine"] = float((windows @ vector).max())
    if tokens is not None:
        states, pieces = tokens(sentence)
        keep = content_pieces(pieces) or list(range(len(pieces)))
        nearest = [tokens(text) for _, text in singles[:NEAREST]]
        near = np.vstack([h for h, _ in nearest])
        out["token_align"] = float(_best(states[keep], near).mean())
        content = np.vstack([h[content_pieces(p)] for h, p in nearest])
        out["align_content"] = float(_best(states[keep], content).mean())
        for dims in (384, 128, 64):
            near_q = np.vstack([_stored_form(h, p, dims) for h, p in nearest])
            out[f"align_i8_{dims}"] = float(_best(project(states[keep], dims), near_q).mean())
        aligned = align(pieces, states, vector, cited, vectors)
        assert aligned is not None
        near_q = np.vstack([_stored_form(h, p, DIMS) for h, p in nearest])
        best = _best(project(states[keep], DIMS), near_q)
        out["align_unmatched"] = float((best < 0.5).mean())
        out["align_worst"] = float(best.min())
        sims = windows @ vector
        w = max(range(len(sims)), key=lambda i: sims[i])
        window_text = _window_text(w, cited, ctx, vectors)
        in_window = [t for t in (tokens(x) for x in window_text)]
        near_w = np.vstack([_stored_form(h, p, DIMS) for h, p in in_window])
        out["align_window"] = float(_best(project(states[keep], DIMS), near_w).mean())
    return out


def _window_text(
    index: int, cited: Sequence[int], ctx: GateContext, vectors: Callable[[int], SentenceVectors]
) -> list[str]:
    """The sentences of window `index` (numbered as `block_windows` over `cited`)."""
    for n in cited:
        stored = vectors(n)
        count = len(block_windows(n, stored)[0])
        if index < count:
            spans = stored.spans
            text = ctx.block_text(n)
            if index < len(spans):
                return [text[slice(*spans[index])]]
            i = index - len(spans)
            return [text[slice(*spans[i])], text[slice(*spans[i + 1])]]
        index -= count
    raise IndexError(index)


def featurise(
    path: Path, embedder: MiniLMEmbedder, tokens: TokenStates | None
) -> tuple[str, list[Row]]:
    stage = SemanticStage(embedder)
    stored = stored_vectors(embedder)
    rows = []
    for ex in load(path):
        ctx = GateContext(ex.blocks)
        verdict = ctx.check(ex.sentence, [Citation(n) for n in ex.cited])
        row = Row(path.stem, ex.label, verdict.ok, verdict.grey)
        if verdict.grey:
            vector = embedder.embed([ex.sentence])[0]

            def vectors(n: int, blocks: tuple[str, ...] = ex.blocks) -> SentenceVectors:
                return stored(blocks[n - 1])

            args = (ex.sentence, verdict, ctx, vectors, vector)
            row.base = compute_features(*args, stage.word_vectors)
            row.extra = extras(*args, embedder, tokens)
        rows.append(row)
    return path.stem, rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, nargs="+")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--cutoffs", type=float, nargs="+", default=[0.4, 0.45, 0.5])
    args = parser.parse_args(argv)
    embedder = MiniLMEmbedder()
    tokens = TokenStates(embedder)
    names, rows = [], []
    for path in args.data:
        name, part = featurise(path, embedder, tokens)
        names.append(name)
        rows += part
    grey = [i for i, r in enumerate(rows) if r.base is not None and anchored(r.base)]
    fold = folds([rows[i] for i in grey], args.folds, args.seed)  # type: ignore[misc]
    y = np.array([1.0 if rows[i].label else 0.0 for i in grey])
    candidates = [n for n in SIGNS if n not in COMMITTED and n in rows[grey[0]].extra]
    steps = [("signals before alignment", list(COMMITTED))]
    steps += [(f"+ {n}", [*COMMITTED, n]) for n in candidates]
    steps.append(("+ all candidates", [*COMMITTED, *candidates]))
    print(f"anchored grey zone: {len(grey)} of {len(rows)} sentences")
    print("step".ljust(34) + "cutoff" + "".join(f"{n:>22}" for n in names))
    for label, columns in steps:
        x = np.array([[rows[i].value(c) for c in columns] for i in grey])
        signs = [SIGNS[c] for c in columns]
        out = np.zeros(len(grey))
        for k in range(args.folds):
            train = np.array([f != k for f in fold])
            w = fit_signed(x[train], y[train], signs)
            out[~train] = 1.0 / (1.0 + np.exp(-np.clip(w[0] + x[~train] @ w[1:], -40, 40)))
        for cutoff in args.cutoffs:
            rescued = {i: bool(out[j] >= cutoff) for j, i in enumerate(grey)}
            passed = [r.lexical_ok or rescued.get(i, False) for i, r in enumerate(rows)]
            cells = []
            for name in names:
                p, rj = rates(rows, passed, name)  # type: ignore[arg-type]
                cells.append(f"{p:.3f} / {rj:.3f}".rjust(22))
            print(label.ljust(34) + f"{cutoff:.2f}".ljust(6) + "".join(cells))
            label = ""
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
