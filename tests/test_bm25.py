from __future__ import annotations

import pytest

from stream_rag.index.bm25 import document_vector, query_vector, term_id


def test_term_ids_are_stable_32_bit() -> None:
    assert term_id("refund") == term_id("refund")
    assert term_id("refund") != term_id("refunds")
    assert 0 <= term_id("退款") < 2**32


def test_document_weights_saturate_and_normalise_length() -> None:
    short = document_vector(["refund", "days"], avgdl=4)
    long = document_vector(["refund", "days", "a1", "a2", "a3", "a4", "a5", "a6"], avgdl=4)
    weight = dict(zip(short.indices, short.values, strict=True))[term_id("refund")]
    longer = dict(zip(long.indices, long.values, strict=True))[term_id("refund")]
    # tf=1 at half the average length: 2.2 / (1 + 1.2 * (0.25 + 0.75 * 0.5))
    assert weight == pytest.approx(2.2 / (1 + 1.2 * 0.625))
    assert longer < weight
    repeated = document_vector(["refund"] * 50, avgdl=50)
    assert repeated.values[0] < 2.2  # saturates at k1 + 1


def test_indices_are_sorted_and_unique() -> None:
    vector = document_vector(["b", "a", "b", "c"], avgdl=4)
    assert list(vector.indices) == sorted(set(vector.indices))


def test_query_vector_counts_repeats() -> None:
    vector = query_vector(["refund", "refund", "days"])
    weights = dict(zip(vector.indices, vector.values, strict=True))
    assert weights[term_id("refund")] == 2.0
    assert weights[term_id("days")] == 1.0
    assert not query_vector([])
