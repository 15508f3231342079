from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_rag.errors import InvalidFieldError
from stream_rag.retrieve.fusion import (
    FusionMethod,
    check_weights,
    fuse,
    minmax,
    reciprocal_ranks,
)

DENSE = [("a", 0.9), ("b", 0.7), ("c", 0.5)]
BM25 = [("c", 12.0), ("d", 6.0), ("a", 3.0)]
BOTH = {"dense": 0.5, "bm25": 0.5}


def test_minmax_maps_to_unit_range() -> None:
    assert minmax(DENSE) == pytest.approx({"a": 1.0, "b": 0.5, "c": 0.0})


@pytest.mark.parametrize("hits", [[], [("a", 3.0)], [("a", 2.0), ("b", 2.0)]])
def test_branch_without_signal_contributes_zero(hits: list[tuple[str, float]]) -> None:
    assert minmax(hits) == {}
    assert reciprocal_ranks(hits) == {}
    fused = fuse({"dense": DENSE, "bm25": hits}, BOTH)
    # Exactly the dense branch's contribution, not lifted by a constant from the other.
    assert {f.id: f.score for f in fused if f.id in "abc"} == pytest.approx(
        {"a": 0.5, "b": 0.25, "c": 0.0}
    )


def test_no_signal_branch_does_not_reorder_the_other() -> None:
    flat = [("c", 1.0), ("b", 1.0)]
    fused = fuse({"dense": DENSE, "bm25": flat}, BOTH)
    assert [f.id for f in fused] == ["a", "b", "c"]


def test_weighted_sum_and_raw_scores_kept() -> None:
    fused = fuse({"dense": DENSE, "bm25": BM25}, BOTH)
    scores = {f.id: f.score for f in fused}
    assert scores == pytest.approx({"a": 0.5, "b": 0.25, "c": 0.5, "d": 0.5 * 3 / 9})
    assert fused[0].raw == {"dense": 0.9, "bm25": 3.0}
    assert next(f for f in fused if f.id == "d").raw == {"bm25": 6.0}


def test_weights_change_the_order() -> None:
    dense_heavy = fuse({"dense": DENSE, "bm25": BM25}, {"dense": 0.9, "bm25": 0.1})
    bm25_heavy = fuse({"dense": DENSE, "bm25": BM25}, {"dense": 0.1, "bm25": 0.9})
    assert dense_heavy[0].id == "a"
    assert bm25_heavy[0].id == "c"
    only_bm25 = fuse({"dense": DENSE, "bm25": BM25}, {"dense": 0.0, "bm25": 1.0})
    assert [f.id for f in only_bm25][:2] == ["c", "d"]


def test_rrf() -> None:
    fused = fuse({"dense": DENSE, "bm25": BM25}, {"dense": 1.0, "bm25": 1.0}, "rrf")
    scores = {f.id: f.score for f in fused}
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 63)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["d"] == pytest.approx(1 / 62)
    assert [f.id for f in fused][-1] == "d" or scores["b"] < scores["d"]


def test_bad_weights_and_method() -> None:
    with pytest.raises(InvalidFieldError, match="unknown"):
        check_weights({"sparse": 1.0}, ["dense", "bm25"])
    for bad in (-1.0, 1e308, float("nan"), float("inf"), 10**400):
        with pytest.raises(InvalidFieldError, match="from 0 to 1000"):
            check_weights({"dense": bad}, ["dense", "bm25"])
    with pytest.raises(InvalidFieldError, match="positive"):
        check_weights({"dense": 0.0, "bm25": 0.0}, ["dense", "bm25"])
    assert check_weights({"dense": 2}, ["dense", "bm25"]) == {"dense": 2.0, "bm25": 0.0}
    with pytest.raises(InvalidFieldError, match="fusion"):
        fuse({"dense": DENSE}, BOTH, "max")  # type: ignore[arg-type]


def fuse_by_definition(
    branches: dict[str, list[tuple[str, float]]], weights: dict[str, float], method: FusionMethod
) -> list[tuple[str, float, dict[str, float]]]:
    """`fuse` as first written (a sum over branches per candidate), kept by hand as the model."""
    contributions = {
        name: minmax(hits) if method == "weighted" else reciprocal_ranks(hits)
        for name, hits in branches.items()
    }
    raw: dict[str, dict[str, float]] = {}
    best_rank: dict[str, int] = {}
    for name, hits in branches.items():
        for rank, (key, score) in enumerate(sorted(hits, key=lambda hit: -hit[1])):
            raw.setdefault(key, {})[name] = score
            best_rank[key] = min(best_rank.get(key, rank), rank)
    fused = [
        (key, sum(weights.get(n, 0.0) * contributions[n].get(key, 0.0) for n in branches), s)
        for key, s in raw.items()
    ]
    fused.sort(key=lambda item: (-item[1], best_rank[item[0]], item[0]))
    return fused


hits_strategy = st.lists(
    st.tuples(st.sampled_from("abcdefghij"), st.sampled_from([0.0, 0.25, 0.5, 1.0, 3.0, 7.5])),
    max_size=8,
)


@settings(deadline=None, max_examples=300)
@given(
    dense=hits_strategy,
    bm25=hits_strategy,
    title=hits_strategy,
    weights=st.tuples(*(st.sampled_from([0.0, 0.35, 0.65, 1.0, 2.0]),) * 3),
    method=st.sampled_from(["weighted", "rrf"]),
)
def test_fuse_matches_its_definition_bit_for_bit(
    dense: list[tuple[str, float]],
    bm25: list[tuple[str, float]],
    title: list[tuple[str, float]],
    weights: tuple[float, float, float],
    method: FusionMethod,
) -> None:
    # Repeated ids and tied scores included: same order, same float scores, same raw scores.
    branches = {"dense": dense, "bm25": bm25, "title": title}
    named = dict(zip(("dense", "bm25", "title"), weights, strict=True))
    found = [(f.id, f.score, dict(f.raw)) for f in fuse(branches, named, method)]
    assert found == fuse_by_definition(branches, named, method)
