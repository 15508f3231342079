"""The calibration data tools: BEGIN padded into chunks, folds grouped by sentence."""

from __future__ import annotations

import json

from loadtests.begin_to_jsonl import convert
from loadtests.calibrate_gate import Row, folds

ROWS = [
    {"knowledge": f"Passage number {i} is about topic {i}", "response": f"r{i}", "begin_label": lab}
    for i, lab in enumerate(["Fully attributable", "Generic", "Unsupported"] * 4)
]


def test_pad_puts_the_passage_among_others_in_the_cited_block() -> None:
    records = [json.loads(line) for line in convert(ROWS, pad=3, seed=5)]
    for row, record in zip(ROWS, records, strict=True):
        (block,) = record["blocks"]
        assert record["cited"] == [1]
        assert row["knowledge"] + "." in block
        others = [r["knowledge"] for r in ROWS if r["knowledge"] + "." in block]
        assert len(others) == 4  # the passage and three distinct others
        assert record["label"] == (row["begin_label"] == "Fully attributable")
    assert records == [json.loads(line) for line in convert(ROWS, pad=3, seed=5)]
    assert records != [json.loads(line) for line in convert(ROWS, pad=3, seed=6)]
    assert convert(ROWS) == convert(ROWS, pad=0)


def test_rows_with_the_same_sentence_share_a_fold() -> None:
    base = [Row("begin", i % 2 == 0, False, True, None, f"s{i}") for i in range(40)]
    padded = [Row("begin_pad2", r.label, False, True, None, r.key) for r in reversed(base)]
    assignment = folds(base + padded, 5, seed=13)
    by_key = dict(zip((r.key for r in base), assignment[:40], strict=True))
    assert all(by_key[r.key] == f for r, f in zip(padded, assignment[40:], strict=True))
    assert assignment[:40] == folds(base, 5, seed=13)
    assert sorted(set(assignment)) == [0, 1, 2, 3, 4]


def test_rows_citing_the_same_evidence_share_a_fold() -> None:
    rows = [
        Row("begin", i % 3 == 0, False, True, None, f"s{i}", group=f"passage {i % 7}")
        for i in range(60)
    ]
    assignment = folds(rows, 5, seed=13)
    by_group: dict[str, set[int]] = {}
    for row, fold in zip(rows, assignment, strict=True):
        by_group.setdefault(row.group, set()).add(fold)
    assert all(len(f) == 1 for f in by_group.values())
    assert len(set(assignment)) == 5


def test_the_longform_set_cites_its_kb_file_among_the_others() -> None:
    from loadtests.longform_to_jsonl import KBS, SPEC
    from loadtests.longform_to_jsonl import convert as longform

    specs = [json.loads(line) for line in SPEC.read_text(encoding="utf-8").splitlines()]
    records = [json.loads(line) for line in longform()]
    assert len(records) == len(specs) >= 50
    assert {r["label"] for r in records} == {True, False}
    for spec, record in zip(specs, records, strict=True):
        (n,) = record["cited"]
        cited = (KBS / spec["kb"] / spec["cited"]).read_text(encoding="utf-8").strip()
        assert record["blocks"][n - 1] == cited
        assert len(record["blocks"]) == 1 + len(spec["others"])
    assert records == [json.loads(line) for line in longform()]
