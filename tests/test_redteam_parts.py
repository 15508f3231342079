"""The fake's `parts_mix` knob (model/redteam_parts.py): on the statements tests/test_coordinated.py
generates, every mix it writes is refused and every control (one part restated) shown."""

from __future__ import annotations

import random

from hypothesis import given, settings

from stream_rag.model.redteam import Scene
from stream_rag.model.redteam_parts import parts_mix

from .test_coordinated import MOVED, shown, statements


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(statements())
def test_the_knob_writes_mixes_the_gate_refuses_and_controls_it_shows(
    case: tuple[str, list[str], list[str]],
) -> None:
    """The fake's knob on the same statements: every false option refused, every control shown."""
    statement = case[0]
    options = parts_mix(Scene(1, statement, [statement], {1: statement}, random.Random(0)))
    for option in options:
        ok, why = shown(statement, option.text)
        assert ok != option.false, (statement, option, why)


def test_the_knob_writes_a_mix_and_a_control() -> None:
    options = parts_mix(Scene(1, MOVED[0][0], [MOVED[0][0]], {1: MOVED[0][0]}, random.Random(0)))
    assert {(o.text, o.false) for o in options} == {
        ("The gym has cold pools.", True),
        ("The gym has heated showers.", True),
        ("The gym has cold showers.", False),
    }
