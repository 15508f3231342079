"""`stream-rag eval retrieval`: index a BEIR-layout data set into a throwaway index and
measure each retrieval mode with the same code paths the service uses."""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..embed.backends import Embedder, Vectors
from ..index.base import IndexPoint
from ..index.bm25 import document_vector, query_vector
from ..index.edge import EdgeIndex
from ..index.questions import chunk_questions, embed_questions, question_hits
from ..text import tokenize
from .fusion import FusionMethod, fuse
from .metrics import BeirSet, mrr_at, ndcg_at, percentile, recall_at

MODES = ("dense", "bm25", "hybrid")
COLLECTION = "eval"
DEPTH = 100


@dataclass(frozen=True, slots=True)
class ModeReport:
    mode: str
    ndcg10: float
    mrr10: float
    recall10: float
    recall100: float
    p50_ms: float
    p95_ms: float
    queries: int
    note: str = ""


def evaluate_retrieval(
    data: BeirSet,
    modes: Sequence[str],
    embedder: Embedder | None,
    *,
    query_embedder: Embedder | None = None,
    weights: Mapping[str, float] | None = None,
    fusion: FusionMethod = "weighted",
    reference: bool = True,
    progress: Callable[[str], None] = lambda message: None,
) -> list[ModeReport]:
    """Metrics per mode; latency is the search alone (the query embedding is excluded and
    reported as its own row when the dense branch runs). `query_embedder` embeds the questions
    (default: `embedder`, which embeds the documents)."""
    weights = weights or {"dense": 0.5, "bm25": 0.5}
    titled = bool(weights.get("title")) and "hybrid" in modes
    ids = list(data.corpus)
    token_lists = [tokenize(data.corpus[i]) for i in ids]
    avgdl = sum(len(t) for t in token_lists) / max(len(token_lists), 1)
    needs_dense = any(m in ("dense", "hybrid") for m in modes)
    if needs_dense and embedder is None:
        raise ValueError("dense and hybrid modes need an embedder")
    vectors = None
    if needs_dense and embedder is not None:
        progress(f"embedding {len(ids)} documents with {embedder.name}")
        vectors = embedder.embed([data.corpus[i] for i in ids])
    asked: dict[str, Vectors] = {}
    if titled and embedder is not None:  # each document's FAQ questions, as the indexer does
        per_doc = [chunk_questions(data.corpus[i], []) for i in ids]
        found = embed_questions(embedder, per_doc)
        asked = {i: m for i, m, q in zip(ids, found, per_doc, strict=True) if q}
    reports: list[ModeReport] = []
    with tempfile.TemporaryDirectory(prefix="stream-rag-eval-") as tmp:
        index = EdgeIndex.open(Path(tmp) / "index", embedder.dim if embedder else 384)
        try:
            progress("indexing")
            index.upsert(
                [
                    IndexPoint(
                        chunk_id=doc_id,
                        doc_id=doc_id,
                        version=1,
                        collection=COLLECTION,
                        sparse=document_vector(tokens, avgdl),
                        dense=None if vectors is None else vectors[n],
                    )
                    for n, (doc_id, tokens) in enumerate(zip(ids, token_lists, strict=True))
                ]
            )
            queries = list(data.queries.items())
            query_vectors = None
            embed_ms: list[float] = []
            if vectors is not None and embedder is not None:
                query_vectors = []
                for _, text in queries:
                    t0 = time.perf_counter()
                    query_vectors.append((query_embedder or embedder).embed([text])[0])
                    embed_ms.append((time.perf_counter() - t0) * 1000)
            runs: dict[str, dict[str, list[str]]] = {m: {} for m in modes}
            latency: dict[str, list[float]] = {m: [] for m in modes}
            for n, (qid, text) in enumerate(queries):
                sparse = query_vector(tokenize(text))
                for mode in modes:
                    t0 = time.perf_counter()
                    branches: dict[str, list[tuple[str, float]]] = {}
                    if mode in ("dense", "hybrid") and query_vectors is not None:
                        hits = index.search_dense(query_vectors[n], COLLECTION, DEPTH)
                        branches["dense"] = [(h.chunk_id, h.score) for h in hits]
                    if mode in ("bm25", "hybrid"):
                        hits = index.search_sparse(sparse, COLLECTION, DEPTH)
                        branches["bm25"] = [(h.chunk_id, h.score) for h in hits]
                    if mode == "hybrid" and titled and query_vectors is not None:
                        seen = {doc for hits in branches.values() for doc, _ in hits}
                        branches["title"] = question_hits(
                            query_vectors[n],
                            {d: asked[d] for d in seen if d in asked},
                            branches.get("dense", []),
                        )
                    if mode == "hybrid":
                        ranked = [f.id for f in fuse(branches, weights, fusion)]
                    else:
                        ranked = [doc for doc, _ in branches[mode]]
                    latency[mode].append((time.perf_counter() - t0) * 1000)
                    runs[mode][qid] = ranked
            for mode in modes:
                reports.append(_report(mode, runs[mode], data, latency[mode]))
            if embed_ms:
                nan = float("nan")
                reports.append(
                    ModeReport(
                        mode="query embedding",
                        ndcg10=nan,
                        mrr10=nan,
                        recall10=nan,
                        recall100=nan,
                        p50_ms=statistics.median(embed_ms),
                        p95_ms=percentile(embed_ms, 0.95),
                        queries=len(embed_ms),
                    )
                )
            if reference and "bm25" in modes:
                reports.append(_rank_bm25(data, ids, token_lists, runs["bm25"]))
        finally:
            index.close()
    return reports


def _report(
    mode: str, run: Mapping[str, list[str]], data: BeirSet, latency: list[float], note: str = ""
) -> ModeReport:
    qids = [q for q in run if q in data.qrels]

    def mean(metric: Callable[[list[str], Mapping[str, int]], float]) -> float:
        return float(np.mean([metric(run[q], data.qrels[q]) for q in qids])) if qids else 0.0

    return ModeReport(
        mode=mode,
        ndcg10=mean(lambda r, j: ndcg_at(r, j, 10)),
        mrr10=mean(lambda r, j: mrr_at(r, j, 10)),
        recall10=mean(lambda r, j: recall_at(r, j, 10)),
        recall100=mean(lambda r, j: recall_at(r, j, 100)),
        p50_ms=statistics.median(latency) if latency else float("nan"),
        p95_ms=percentile(latency, 0.95),
        queries=len(qids),
        note=note,
    )


def _rank_bm25(
    data: BeirSet, ids: list[str], token_lists: list[list[str]], ours: Mapping[str, list[str]]
) -> ModeReport:
    """rank-bm25's BM25Okapi on the same tokens, and how often its top 10 matches ours."""
    from rank_bm25 import BM25Okapi

    model = BM25Okapi(token_lists)
    run: dict[str, list[str]] = {}
    latency: list[float] = []
    agreement: list[float] = []
    for qid, text in data.queries.items():
        t0 = time.perf_counter()
        scores = model.get_scores(tokenize(text))
        top = np.argsort(-scores, kind="stable")[:DEPTH]
        latency.append((time.perf_counter() - t0) * 1000)
        run[qid] = [ids[i] for i in top if scores[i] > 0]
        if qid in ours:
            agreement.append(len(set(run[qid][:10]) & set(ours[qid][:10])) / 10)
    note = f"top-10 overlap with the bm25 branch: {float(np.mean(agreement)):.3f}"
    return _report("rank-bm25 (reference)", run, data, latency, note)


def format_reports(reports: Sequence[ModeReport]) -> str:
    lines = [
        f"{'mode':<22} {'nDCG@10':>8} {'MRR@10':>8} {'R@10':>8} {'R@100':>8} "
        f"{'p50 ms':>8} {'p95 ms':>8} {'queries':>8}"
    ]
    for r in reports:
        cells = [r.ndcg10, r.mrr10, r.recall10, r.recall100]
        metrics = " ".join("       -" if np.isnan(v) else f"{v:8.4f}" for v in cells)
        lines.append(
            f"{r.mode:<22} {metrics} {r.p50_ms:8.2f} {r.p95_ms:8.2f} {r.queries:8d}"
            + (f"  {r.note}" if r.note else "")
        )
    return "\n".join(lines)
