"""A time of day inside the statement a clause restates ("until 14:00") is no break between its
parts (gate/binding.py): the condition after it is still the statement's, so a clause dropping
it fails. Blocks of a domain no fixture or benchmark uses."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from .gating import verdict

_BLOCK = (
    "Repairs\nWe open at 9:00 and repair watches while you wait. A battery change before "
    "{time} costs {price} euros, {connective} the watch is water resistant."
)


@settings(max_examples=25, deadline=None)
@given(
    hour=st.integers(min_value=10, max_value=19),
    minute=st.sampled_from(["00", "15", "30", "45"]),
    price=st.integers(min_value=5, max_value=90),
    connective=st.sampled_from(["if", "unless", "provided", "except if"]),
)
def test_a_condition_after_a_time_of_day_is_kept(
    hour: int, minute: str, price: int, connective: str
) -> None:
    time = f"{hour}:{minute}"
    block = _BLOCK.format(time=time, price=price, connective=connective)
    claim = f"A battery change before {time} costs {price} euros"
    dropped, why = verdict([block], f"{claim}.", 1)
    assert not dropped, why
    assert "condition" in why, why
    kept, why = verdict([block], f"{claim}, {connective} the watch is water resistant.", 1)
    assert kept, why
