from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from stream_rag.errors import InputError
from stream_rag.retrieve.metrics import load_beir, mrr_at, ndcg_at, percentile, recall_at

JUDGED = {"d1": 3, "d2": 1, "d3": 0}


def test_ndcg_linear_gain() -> None:
    ranked = ["d2", "x", "d1"]
    dcg = 1 / math.log2(2) + 3 / math.log2(4)
    idcg = 3 / math.log2(2) + 1 / math.log2(3)
    assert ndcg_at(ranked, JUDGED, 10) == pytest.approx(dcg / idcg)
    assert ndcg_at(["d1", "d2"], JUDGED, 10) == pytest.approx(1.0)
    assert ndcg_at(["x"], {}, 10) == 0.0


def test_mrr_and_recall() -> None:
    assert mrr_at(["x", "d3", "d2"], JUDGED, 10) == pytest.approx(1 / 3)
    assert mrr_at(["x", "d2"], JUDGED, 1) == 0.0
    assert recall_at(["d1", "x"], JUDGED, 10) == 0.5
    assert recall_at(["d1", "d2"], JUDGED, 1) == 0.5


def test_percentile() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50
    assert percentile(values, 0.95) == 95
    assert percentile([7.0], 0.99) == 7.0


def test_load_beir(tmp_path: Path) -> None:
    (tmp_path / "qrels").mkdir()
    corpus = [{"_id": "c1", "title": "Wings", "text": "Lift."}, {"_id": "c2", "text": "Drag."}]
    (tmp_path / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in corpus))
    queries = [{"_id": "q1", "text": "lift?"}, {"_id": "q2", "text": "unjudged"}]
    (tmp_path / "queries.jsonl").write_text("\n".join(json.dumps(r) for r in queries))
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tc1\t2\n")
    data = load_beir(tmp_path)
    assert data.corpus == {"c1": "Wings\n\nLift.", "c2": "Drag."}
    assert data.queries == {"q1": "lift?"}
    assert data.qrels == {"q1": {"c1": 2}}
    with pytest.raises(InputError, match="not a BEIR"):
        load_beir(tmp_path / "missing")
