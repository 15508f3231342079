"""The learned grey-zone harness (tools/greyzone/): which claim checks count as soft, and the
cutoff rules."""

from __future__ import annotations

import numpy as np

from stream_rag.gate.citations import Citation
from stream_rag.gate.lexical import GateContext
from tools.greyzone.train import Learned, Row, choose, soft_check


def _detail(block: str, sentence: str) -> str:
    verdict = GateContext([block]).check(sentence, [Citation(1)])
    assert not verdict.ok
    return verdict.detail


def test_soft_checks_are_read_from_the_gates_own_details() -> None:
    block = "The shop opens at nine. Parcels leave the warehouse on weekdays."
    # A scope word the block never says, and a cause it never gives: soft.
    assert soft_check(_detail(block, "Parcels always leave the warehouse on weekdays.")) == 3
    assert soft_check(_detail(block, "Parcels leave the warehouse because the shop opens.")) == 2
    # A number the block does not state is a hard check: never soft.
    assert soft_check(_detail(block, "The shop opens at ten.")) == 0


def _row(dataset: str, label: bool, lexical_ok: bool = False) -> Row:
    return Row(dataset, label, lexical_ok, not lexical_ok, "", "")


def test_grey95_is_the_lowest_cutoff_rejecting_95_percent_of_unsupported_grey_rows() -> None:
    rows = [_row("a", False) for _ in range(20)] + [_row("a", True)]
    p = {i: 0.1 for i in range(19)} | {19: 0.8, 20: 0.6}
    # One unsupported row of 20 may pass: 0.80 passes it, anything above 0.80 does not need to.
    assert choose("grey95", p, rows, ["a"], frozenset(range(21))) == 0.11


def test_total5_counts_the_lexical_passes_of_the_training_rows() -> None:
    rows = [_row("a", False) for _ in range(20)] + [_row("a", False, lexical_ok=True)]
    p = {0: 0.3}
    # With the lexical pass, one grey pass more is 2 of 21: over 5%, so it must not pass.
    assert choose("total5", p, rows, ["a"], frozenset(range(21))) == 0.31
    # Counted over a split without that row, it is 1 of 20 and may pass.
    assert choose("total5", p, rows, ["a"], frozenset(range(20))) == 0.05


def test_learned_model_standardises_its_columns() -> None:
    model = Learned(np.array([0.0, 2.0]), np.array([10.0]), np.array([5.0]))
    assert model.predict(np.array([[10.0], [15.0]])).round(3).tolist() == [0.5, 0.881]
