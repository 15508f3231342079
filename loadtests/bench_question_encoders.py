"""Cheaper question encoders for search, against the int8 MiniLM the service uses: retrieval
quality on a BEIR set and each one's CPU per question (in process).

    python -m loadtests.bench_question_encoders --beir ../shared/data/cranfield \
        [--variants int8,strip,late:3,first:4,skip:3] [--fit-sentences 6000] [--timing]

Documents are embedded by the full fp32 model as `stream-rag eval retrieval` does (and its
metrics come from the same `evaluate_retrieval`); only the questions' encoder changes:
- `int8`: the service's question model (the reference); `fp32`: the full-precision one;
- `strip`: the question's stop words (the BM25 list, `text.STOP_WORDS`) and punctuation left
  out before the model;
- `late:J`: every word piece through the first J layers, then only the pieces of words that are
  not stop words or punctuation ([CLS] and [SEP] kept) through the rest, mean-pooled over those
  (two onnxruntime sessions here; one graph with a Gather was ~0.05 ms cheaper);
- `first:K`: the first K layers, mean-pooled, then a linear map (ridge least squares, with a
  bias) onto the full int8 model's vectors, fitted on sentences of the collection's documents
  (never its questions), as an index could fit it;
- `skip:S`: the model without layer S.
`--timing` then asks every question of each variant in turn, 4 ms apart (an idle core between
requests, as at one client), and prints the p50 and mean of the thread CPU per question,
tokens and embedding layer included. docs/decisions.md has the figures and why none is used.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.embed.ort import OrtEncoder
from stream_rag.retrieve.evaluate import evaluate_retrieval
from stream_rag.retrieve.metrics import BeirSet, load_beir
from stream_rag.text import STOP_WORDS

F32 = npt.NDArray[np.float32]
Encode = Callable[[str], F32]

_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")


class Questions:
    """An `Embedder` whose rows come from a one-text function."""

    dim = 384

    def __init__(self, name: str, encode: Encode) -> None:
        self.name = name
        self._encode = encode

    def embed(self, texts: Sequence[str]) -> F32:
        return np.stack([self._encode(t) for t in texts]).astype(np.float32)


class Once:
    """`embedder`, embedding the same list of texts once (the documents, for every variant)."""

    def __init__(self, embedder: MiniLMEmbedder) -> None:
        self.name, self.dim = embedder.name, embedder.dim
        self._embedder = embedder
        self._done: dict[tuple[str, ...], F32] = {}

    def embed(self, texts: Sequence[str]) -> F32:
        key = tuple(texts)
        if key not in self._done:
            self._done[key] = self._embedder.embed(texts)
        return self._done[key]


class Towers:
    """The variants' encoders, built from one loaded MiniLM."""

    def __init__(self, full: MiniLMEmbedder | None = None) -> None:
        self.full = full or MiniLMEmbedder()
        self.int8 = self.full.with_precision("int8")
        self.bert = self.full._bert
        vocab = self.full._tokenizer.get_vocab()
        size = max(vocab.values()) + 1
        self.function = np.zeros(size, dtype=bool)  # a stop word or punctuation, whole
        self.continued = np.zeros(size, dtype=bool)  # a "##" piece
        for piece, i in vocab.items():
            if piece.startswith("##"):
                self.continued[i] = True
            elif piece in STOP_WORDS or not any(c.isalnum() for c in piece):
                self.function[i] = True

    def session(self, layers: Sequence[object]) -> OrtEncoder:
        return OrtEncoder(layers, self.bert.heads, float(self.bert.eps), "int8")  # type: ignore[arg-type]

    def pooled(self, encoder: OrtEncoder, text: str) -> F32:
        ids = self.int8.tokenize([text])[0]
        vector: F32 = encoder._run(["vector"], {"x": self.bert.embedded(ids)[None]}, None)[0][0]
        return vector

    def kept(self, ids: list[int]) -> npt.NDArray[np.intp]:
        """Positions of the pieces `late` keeps: all but whole stop words and punctuation."""
        a = np.asarray(ids)
        drop = self.function[a] & ~np.append(self.continued[a[1:]], False)
        drop[0] = drop[-1] = False
        keep = np.flatnonzero(~drop)
        return keep if len(keep) > 2 else np.arange(len(ids))

    def late(self, j: int) -> Encode:
        head, tail = self.session(self.bert.layers[:j]), self.session(self.bert.layers[j:])

        def encode(text: str) -> F32:
            ids = self.int8.tokenize([text])[0]
            x = self.bert.embedded(ids)[None]
            hidden = head._run(["hidden"], {"x": x}, None)[0][0] if j else x[0]
            rows = np.ascontiguousarray(hidden[self.kept(ids)])[None]
            vector: F32 = tail._run(["vector"], {"x": rows}, None)[0][0]
            return vector

        return encode

    def first(self, k: int, sentences: list[str], teacher: F32) -> tuple[Encode, F32]:
        """The first `k` layers and a map fitted on `sentences` (unit rows of `teacher`)."""
        encoder = self.session(self.bert.layers[:k])
        x = np.stack([self.pooled(encoder, t) for t in sentences]).astype(np.float64)
        x = np.hstack([x, np.ones((len(x), 1))])
        gram = x.T @ x + 1e-2 * np.eye(x.shape[1])
        w = np.linalg.solve(gram, x.T @ teacher.astype(np.float64)).astype(np.float32)

        def encode(text: str) -> F32:
            v: F32 = np.append(self.pooled(encoder, text), np.float32(1)) @ w
            unit: F32 = v / np.linalg.norm(v)
            return unit

        fitted = np.stack([encode(t) for t in sentences[:500]])
        return encode, (fitted * teacher[:500]).sum(axis=1)

    def skip(self, s: int) -> Encode:
        encoder = self.session([x for i, x in enumerate(self.bert.layers) if i != s])
        return lambda text: self.pooled(encoder, text)

    def strip(self) -> Encode:
        def encode(text: str) -> F32:
            words = [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]
            vector: F32 = self.int8.embed([" ".join(words) if words else text])[0]
            return vector

        return encode


def collection_sentences(data: BeirSet, limit: int) -> list[str]:
    """Up to `limit` sentences (3-60 words) of the documents, a seeded sample."""
    found = [
        s
        for doc in data.corpus.values()
        for s in _SENTENCE_END.split(doc)
        if 3 <= len(s.split()) <= 60
    ]
    picked = np.random.default_rng(0).permutation(len(found))[:limit]
    return [found[i] for i in sorted(picked)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--beir", type=Path, default=Path("../shared/data/cranfield"))
    parser.add_argument("--variants", default="int8,strip,late:3,first:4,skip:3")
    parser.add_argument("--fit-sentences", type=int, default=6000)
    parser.add_argument("--timing", action="store_true")
    args = parser.parse_args()
    data = load_beir(args.beir)
    towers = Towers()
    settings = Settings()
    weights = {"dense": settings.dense_weight, "bm25": settings.bm25_weight}
    weights["title"] = settings.title_weight
    questions = list(data.queries.values())
    sentences: list[str] = []
    teacher = np.empty((0, 384), dtype=np.float32)
    encoders: dict[str, Encode] = {}
    documents = Once(towers.full)
    for variant in args.variants.split(","):
        kind, _, arg = variant.partition(":")
        if kind == "int8":
            encoders[variant] = lambda t: towers.int8.prepare([t])()[0]
        elif kind == "fp32":
            encoders[variant] = lambda t: towers.full.embed([t])[0]
        elif kind == "strip":
            encoders[variant] = towers.strip()
        elif kind == "late":
            encoders[variant] = towers.late(int(arg))
        elif kind == "skip":
            encoders[variant] = towers.skip(int(arg))
        elif kind == "first":
            if not sentences:
                sentences = collection_sentences(data, args.fit_sentences)
                teacher = towers.int8.embed(sentences)
            encoders[variant], cos = towers.first(int(arg), sentences, teacher)
            print(
                f"# {variant}: fitted on {len(sentences)} sentences of the documents; "
                f"cosine to int8 on 500 of them: mean {cos.mean():.4f} min {cos.min():.4f}"
            )
        else:
            parser.error(f"unknown variant {variant!r}")
    pieces = [len(towers.int8.tokenize([q])[0]) for q in questions]
    kept = [len(towers.kept(towers.int8.tokenize([q])[0])) for q in questions]
    print(
        f"# {len(questions)} questions: word pieces p50 {statistics.median(pieces)}, "
        f"after late's drop p50 {statistics.median(kept)}"
    )
    print(f"{'variant':12s} {'mode':7s} nDCG@10  MRR@10  R@10    R@100")
    for variant, encode in encoders.items():
        reports = evaluate_retrieval(
            data,
            ["dense", "hybrid"],
            documents,
            query_embedder=Questions(variant, encode),
            weights=weights,
            reference=False,
        )
        for r in reports:
            if r.mode in ("dense", "hybrid"):
                print(
                    f"{variant:12s} {r.mode:7s} {r.ndcg10:.4f}   {r.mrr10:.4f}  "
                    f"{r.recall10:.4f}  {r.recall100:.4f}",
                    flush=True,
                )
    if not args.timing:
        return
    cpu: dict[str, list[float]] = {v: [] for v in encoders}
    for q in questions[:20]:  # warm-up
        for encode in encoders.values():
            encode(q)
    for turn in range(2):
        for q in questions:
            order = list(encoders.items())
            for variant, encode in order[:: -1 if turn else 1]:
                time.sleep(0.004)
                start = time.thread_time()
                encode(q)
                cpu[variant].append((time.thread_time() - start) * 1000)
    for variant, ms in cpu.items():
        print(
            f"{variant:12s} thread CPU per question p50 {statistics.median(ms):.3f} ms, "
            f"mean {statistics.fmean(ms):.3f} ms ({len(ms)} questions)"
        )


if __name__ == "__main__":
    main()
