"""Words put one for one in the place of another text's (gate/support.py `replaced`), the
alignment the place, binding, obligation and swap checks read."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from stream_rag.gate.support import replaced

WORDS = st.lists(
    st.text("abcdefghij", min_size=1, max_size=6), min_size=1, max_size=12, unique=True
)


def test_a_word_for_a_word_is_paired_with_it() -> None:
    mine = "the pro plan costs 8 a month".split()
    theirs = "the free plan costs 8 a year".split()
    assert list(replaced(mine, theirs)) == [(1, 1), (6, 6)]


def test_runs_of_unequal_length_or_longer_than_most_pair_nothing() -> None:
    theirs = "tours must be booked two days ahead".split()
    assert list(replaced("tours should surely be booked two days ahead".split(), theirs)) == []
    longer = "tours may not really be booked two days ahead".split()
    assert list(replaced(longer, "tours must be always booked two days ahead".split())) == []
    assert list(replaced("tours can be booked one week ahead".split(), theirs, most=1)) == [(1, 1)]
    assert list(replaced("tours can be booked one week ahead".split(), theirs)) == [
        (1, 1),
        (4, 4),
        (5, 5),
    ]


@given(WORDS, st.data())
def test_one_new_word_in_a_text_of_distinct_words_is_found_where_it_stands(
    words: list[str], data: st.DataObject
) -> None:
    at = data.draw(st.integers(0, len(words) - 1))
    changed = [*words[:at], "X", *words[at + 1 :]]
    assert list(replaced(changed, words, most=1)) == [(at, at)]
    assert list(replaced(words, words)) == []
