"""What a term weighs among one request's blocks (IDF over them), and how much of a sentence's
weight the blocks it cites hold: the lexical gate's overlap score (gate/lexical.py)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["IDF_MIN_BLOCKS", "TermWeights", "substance"]

# IDF is computed as if at least this many blocks were issued (the missing ones lacking every
# term), so a threshold means the same with 1 block as with a typical 8.
IDF_MIN_BLOCKS = 8


def _idf(n_blocks: int, df: int) -> float:
    n = max(n_blocks, IDF_MIN_BLOCKS)
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


@dataclass(frozen=True, slots=True)
class TermWeights:
    """Each term's weight (`weights`; a term in no block weighs `unseen`), and the terms
    `dropped` as evidence for being in most blocks."""

    weights: dict[str, float]
    unseen: float
    dropped: frozenset[str]

    @staticmethod
    def of(blocks: Sequence[frozenset[str]]) -> TermWeights:
        """The weights of the terms of `blocks` (each block's terms)."""
        df: Counter[str] = Counter()
        for terms in blocks:
            df.update(terms)  # counted in C, not term by term in Python
        n = len(blocks)
        idf = [_idf(n, count) for count in range(n + 1)]  # a weight per document frequency
        # In a topical request the query's words are in most blocks: citing a block for them
        # proves nothing. With 1 or 2 blocks "most" would be every block, so nothing is dropped.
        return TermWeights(
            {term: idf[count] for term, count in df.items()},
            idf[0],
            frozenset(t for t, c in df.items() if n >= 3 and c > n / 2),
        )


def substance(
    terms: list[str], evidence: frozenset[str], weights: TermWeights
) -> tuple[float, list[str]]:
    """IDF-weighted share of `terms` found in `evidence` (the cited blocks' terms), and the
    terms not found."""
    if not terms:
        return 1.0, []  # only numbers: the quantity checks judge them
    found = [t for t in terms if t in evidence]
    missing = [t for t in terms if t not in evidence]
    weight = weights.weights
    # A dropped term is no evidence when present, but still counts against when absent.
    kept = [t for t in found if t not in weights.dropped]
    support = sum(weight[t] for t in kept)
    total = support + sum(weight.get(t, weights.unseen) for t in missing)
    if total == 0.0:  # every term is one that most blocks share: fall back to a plain share
        return len(found) / len(terms), missing
    return support / total, missing
