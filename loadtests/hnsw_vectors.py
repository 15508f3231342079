"""bench_hnsw's vector sets: real texts (Cranfield abstracts, the web articles WiCE cites)
embedded with the local MiniLM, and synthetic sets drawn from them or from the sphere (a
mixture of two real embeddings with noise, uniform unit vectors, a fitted Gaussian)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
VASWANI = 11_429


def real_texts(data: Path, n: int) -> tuple[list[str], list[str]]:
    import blingfire

    corpus = [json.loads(line) for line in (data / "cranfield" / "corpus.jsonl").open()]
    texts = [s.strip() for d in corpus for s in re.split(r" \. ", d["text"]) if len(s) > 40]
    rows = [json.loads(line) for line in (data / "attribution" / "wice_dev.jsonl").open()]
    for block in dict.fromkeys(b for r in rows for b in r["blocks"]):
        texts += [s for s in blingfire.text_to_sentences(block).split("\n") if len(s) > 40]
    queries = [json.loads(line)["text"] for line in (data / "cranfield" / "queries.jsonl").open()]
    queries += [r["sentence"] for r in rows]
    return list(dict.fromkeys(texts))[:n], queries


def embed(texts: list[str], cache: Path) -> F32:
    if cache.exists():
        loaded: F32 = np.load(cache)
        if len(loaded) == len(texts):
            return loaded
    from stream_rag.embed.minilm import MiniLMEmbedder

    vectors = MiniLMEmbedder().embed(texts)
    np.save(cache, vectors)
    return vectors


def unit(vectors: F32) -> F32:
    out: F32 = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    return out


def mixture(real: F32, n: int, rng: np.random.Generator) -> F32:
    first, second = rng.integers(0, len(real), n), rng.integers(0, len(real), n)
    weight = rng.uniform(0.5, 1.0, (n, 1)).astype(np.float32)
    noise = 0.03 * rng.standard_normal((n, real.shape[1])).astype(np.float32)
    return unit(weight * real[first] + (1 - weight) * real[second] + noise)


def uniform(n: int, dim: int, rng: np.random.Generator) -> F32:
    return unit(rng.standard_normal((n, dim)).astype(np.float32))


def gaussian(real: F32, n: int, rng: np.random.Generator) -> F32:
    cov = np.cov(real, rowvar=False)
    return unit(rng.multivariate_normal(real.mean(axis=0), cov, size=n).astype(np.float32))
