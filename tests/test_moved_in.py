"""One word of a statement put in the place of another between the same words
(gate/coordinated.py `moved_in`): "Tents must have lamps at each peg at dusk." of "Tents must
have lamps at each entrance at dusk and must not cover a drain or a tent peg." is every word of
the statement, one of them where another stood. The statement's parts restated, its list in
another order and a word left out still pass. Blocks of a domain no fixture or benchmark
uses."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from .gating import verdict

OTHER = "Unrelated block about the weather in spring."

# (what a campsite rule requires of a thing at each of its places, what it must not block)
THINGS = st.sampled_from(["tents", "caravans", "vans", "trailers"])
MARKS = st.sampled_from(["lamps", "reflectors", "flags", "markers"])
PLACES = st.sampled_from(["entrance", "corner", "window", "door"])
BLOCKED = st.sampled_from(
    [("drain", "water tap"), ("path", "fire exit"), ("gate", "bin store"), ("hedge", "car park")]
)


def _statement(thing: str, mark: str, place: str, blocked: tuple[str, str]) -> str:
    return (
        f"{thing.capitalize()} must have {mark} at each {place} after dark and must not block "
        f"a {blocked[0]} or a {blocked[1]}."
    )


@settings(max_examples=30, deadline=None)
@given(thing=THINGS, mark=MARKS, place=PLACES, blocked=BLOCKED)
def test_a_word_of_another_part_in_a_words_place_fails(
    thing: str, mark: str, place: str, blocked: tuple[str, str]
) -> None:
    statement = _statement(thing, mark, place, blocked)
    for moved in (blocked[0], blocked[1].split()[-1]):
        sentence = f"{thing.capitalize()} must have {mark} at each {moved} after dark."
        ok, why = verdict((statement, OTHER), sentence, 1)
        assert not ok, (sentence, why)


@settings(max_examples=30, deadline=None)
@given(thing=THINGS, mark=MARKS, place=PLACES, blocked=BLOCKED)
def test_the_parts_restated_pass(
    thing: str, mark: str, place: str, blocked: tuple[str, str]
) -> None:
    statement = _statement(thing, mark, place, blocked)
    for sentence in (
        statement,
        f"{thing.capitalize()} must have {mark} at each {place} after dark.",
        f"{thing.capitalize()} must not block a {blocked[0]} or a {blocked[1]}.",
        f"{thing.capitalize()} must not block a {blocked[1]} or a {blocked[0]}.",
        f"{thing.capitalize()} must have {mark} at each {place}.",
    ):
        ok, why = verdict((statement, OTHER), sentence, 1)
        assert ok, (sentence, why)
