"""BM25 as sparse vectors: document-side term weights with tf saturation and length
normalisation computed at ingest; IDF is applied by the index engine at query time."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

K1 = 1.2
B = 0.75


@dataclass(frozen=True, slots=True)
class SparseVector:
    indices: tuple[int, ...]
    values: tuple[float, ...]

    def __bool__(self) -> bool:
        return bool(self.indices)


@lru_cache(maxsize=262144)
def term_id(term: str) -> int:
    """A stable 32-bit id for a term (about one collision expected per 90k distinct terms)."""
    return int.from_bytes(hashlib.blake2b(term.encode(), digest_size=4).digest(), "big")


def document_vector(
    tokens: Sequence[str], avgdl: float, k1: float = K1, b: float = B
) -> SparseVector:
    """BM25's per-term document factor `tf*(k1+1) / (tf + k1*(1 - b + b*dl/avgdl))`."""
    counts = Counter(tokens)
    norm = k1 * (1 - b + b * len(tokens) / max(avgdl, 1e-9))
    weights: dict[int, float] = {}
    for term, tf in counts.items():
        # Colliding terms add up, as if they were one term.
        index = term_id(term)
        weights[index] = weights.get(index, 0.0) + tf * (k1 + 1) / (tf + norm)
    ordered = sorted(weights.items())
    return SparseVector(tuple(i for i, _ in ordered), tuple(w for _, w in ordered))


def query_vector(tokens: Sequence[str]) -> SparseVector:
    """Each query term once, weighted by how often the query repeats it."""
    weights: dict[int, float] = {}
    for term, count in Counter(tokens).items():
        index = term_id(term)
        weights[index] = weights.get(index, 0.0) + float(count)
    ordered = sorted(weights.items())
    return SparseVector(tuple(i for i, _ in ordered), tuple(w for _, w in ordered))
