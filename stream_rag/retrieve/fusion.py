"""Pure fusion of ranked branches (dense, BM25) into one ranking.

A branch with no signal (no hits, or all scores equal) contributes zero: it cannot tell its
candidates apart, so it must not lift them by a constant.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..errors import InvalidFieldError

FusionMethod = Literal["weighted", "rrf"]
FUSION_METHODS: tuple[FusionMethod, ...] = ("weighted", "rrf")
RRF_K = 60
_EPSILON = 1e-9


@dataclass(frozen=True, slots=True)
class Fused:
    """One candidate after fusion: its id, fused score and each branch's raw score."""

    id: str
    score: float
    raw: Mapping[str, float] = field(default_factory=dict)


def minmax(hits: Sequence[tuple[str, float]]) -> dict[str, float]:
    """Scores mapped to [0, 1]; empty when the branch has no signal."""
    if not hits:
        return {}
    scores = [s for _, s in hits]
    low, high = min(scores), max(scores)
    if high - low <= _EPSILON * max(1.0, abs(high)):
        return {}
    return {key: (score - low) / (high - low) for key, score in hits}


def reciprocal_ranks(hits: Sequence[tuple[str, float]], k: int = RRF_K) -> dict[str, float]:
    """`1 / (k + rank)`; empty when the branch has no signal."""
    if not minmax(hits):
        return {}
    ordered = sorted(hits, key=lambda hit: -hit[1])
    return {key: 1.0 / (k + rank) for rank, (key, _) in enumerate(ordered, start=1)}


MAX_WEIGHT = 1000.0


def check_weights(weights: Mapping[str, float], branches: Sequence[str]) -> dict[str, float]:
    unknown = set(weights) - set(branches)
    if unknown:
        raise InvalidFieldError(f"unknown weight(s) {sorted(unknown)}; branches: {list(branches)}")
    checked = {}
    for name in branches:
        try:
            value = float(weights.get(name, 0.0))
        except (OverflowError, TypeError, ValueError):
            value = math.inf
        # Bounded so that a weighted sum of scores in [0, 1] can never overflow to inf.
        if not 0 <= value <= MAX_WEIGHT:
            raise InvalidFieldError(f"weight {name!r} must be a number from 0 to {MAX_WEIGHT}")
        checked[name] = value
    if sum(checked.values()) <= 0:
        raise InvalidFieldError("at least one weight must be positive")
    return checked


def fuse(
    branches: Mapping[str, Sequence[tuple[str, float]]],
    weights: Mapping[str, float],
    method: FusionMethod = "weighted",
    rrf_k: int = RRF_K,
) -> list[Fused]:
    """Combine branches into one list, best first.

    `weighted`: sum of weight x min-max normalised score. `rrf`: sum of weight / (k + rank).
    Ties keep the order of each candidate's best rank in any branch.
    """
    if method not in FUSION_METHODS:
        raise InvalidFieldError(f"fusion must be one of {list(FUSION_METHODS)}")
    # One pass per branch, best first (per-candidate work is most of a search's fusion time).
    # Each score is the same sum, in branch order, as sum(weight x contribution): a branch that
    # lacks the candidate adds 0.0, which changes no float.
    fused: dict[str, float] = {}
    raw: dict[str, dict[str, float]] = {}
    best_rank: dict[str, int] = {}
    for name, hits in branches.items():
        ordered = sorted(hits, key=lambda hit: -hit[1])
        weight = weights.get(name, 0.0)
        contribution = (
            (minmax(hits) if method == "weighted" else reciprocal_ranks(hits, rrf_k))
            if weight
            else {}
        )
        for rank, (key, score) in enumerate(ordered):
            scores = raw.get(key)
            if scores is None:
                raw[key] = {name: score}
                best_rank[key] = rank
                fused[key] = weight * contribution.get(key, 0.0)
                continue
            if name not in scores and contribution:
                fused[key] += weight * contribution.get(key, 0.0)
            scores[name] = score
            if rank < best_rank[key]:
                best_rank[key] = rank
    order = sorted(raw, key=lambda key: (-fused[key], best_rank[key], key))
    return [Fused(key, fused[key], raw[key]) for key in order]
