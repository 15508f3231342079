"""Grams are a mass unit like the others (language/opposites.py): "200 kg" of "200 g" is another
weight even when the block writes "kg" elsewhere. Blocks of a domain no fixture or benchmark
uses."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from .gating import verdict


@settings(max_examples=30, deadline=None)
@given(grams=st.integers(min_value=50, max_value=900), kilos=st.integers(min_value=2, max_value=20))
def test_kilograms_for_grams_fail_and_the_unit_kept_passes(grams: int, kilos: int) -> None:
    block = (
        f"Bakery orders\nA loaf of up to {grams} g is baked daily. Flour is sold in bags of "
        f"{kilos} kg at the counter."
    )
    ok, why = verdict([block], f"A loaf of up to {grams} kg is baked daily.", 1)
    assert not ok, why
    ok, why = verdict([block], f"Flour is sold in bags of {kilos} g at the counter.", 1)
    assert not ok, why
    ok, why = verdict([block], f"A loaf of up to {grams} g is baked daily.", 1)
    assert ok, why
