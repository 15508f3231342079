from __future__ import annotations

import pytest

from stream_rag.errors import InvalidFieldError
from stream_rag.retrieve.fusion import check_weights, fuse, minmax, reciprocal_ranks

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
