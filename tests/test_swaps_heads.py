"""A noun of another issued block in the place of the span's noun after the same word opening
a noun phrase ("for toddlers other than ..." for "for pupils ...", "per lesson and week" for
"... and hour"), no cited block writing it and no synonym of it (gate/swaps.py); a listed
synonym, and a noun no block writes (a synonym WordNet may not list), pass. Blocks of a domain
no fixture or benchmark uses."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from .gating import verdict

BLOCK = (
    "Ski school prices\nLessons for pupils other than beginners cost 40 euros per lesson and "
    "hour. Equipment is included for seniors on weekdays."
)
OTHER = (
    "Getting there\nThe shuttle bus takes toddlers, teachers and luggage up the hill every "
    "week. Its door stays open at night for health checks."
)
# (the span's word, a noun no cited block writes, a faithful restatement of it)
CASES = (
    ("Lessons for pupils other than beginners", "Lessons for {} other than beginners", "pupils"),
    ("per lesson and hour", "per lesson and {}", "hour"),
    ("included for seniors on weekdays", "included for {} on weekdays", "seniors"),
)
# ("morning" for "hour" passes: WordNet lists "time of day" above both)
NOUNS = ("toddlers", "teachers", "health", "luggage", "week", "door", "night")


def _sentence(template: str, phrase: str) -> str:
    return {
        "Lessons for {} other than beginners": "{} cost 40 euros per lesson and hour.",
        "per lesson and {}": "Lessons for pupils other than beginners cost 40 euros {}.",
        "included for {} on weekdays": "Equipment is {}.",
    }[template].format(phrase)


@settings(max_examples=30, deadline=None)
@given(case=st.sampled_from(CASES), noun=st.sampled_from(NOUNS))
def test_a_noun_no_cited_block_writes_in_the_spans_place_fails(
    case: tuple[str, str, str], noun: str
) -> None:
    _, template, word = case
    if noun == word:
        return
    edited = _sentence(template, template.format(noun))
    ok, why = verdict([BLOCK, OTHER], edited, 1)
    assert not ok, (edited, why)
    faithful = _sentence(template, template.format(word))
    ok, why = verdict([BLOCK, OTHER], faithful, 1)
    assert ok, (faithful, why)


def test_a_listed_synonym_or_a_noun_no_block_writes_passes() -> None:
    ok, why = verdict([BLOCK, OTHER], "Equipment is included for pensioners on weekdays.", 1)
    assert ok or why.startswith("overlap"), why  # grey: the semantic stage decides
    ok, why = verdict(
        [BLOCK, OTHER],
        "Lessons for students other than beginners cost 40 euros per lesson and hour.",
        1,
    )
    assert ok, why


def test_a_noun_after_an_adjective_of_the_span_fails() -> None:
    block = (
        "Boarding\nOn a full day, bikes of passengers in the last group may be stowed on "
        "the car deck."
    )
    other = "Music\nA violin may come on board as hand luggage."
    edited = "On a full violin, bikes of passengers in the last group may be stowed on the car deck"
    ok, why = verdict([block, other], edited + ".", 1)
    assert not ok, why
    ok, why = verdict([block, other], edited.replace("violin", "day") + ".", 1)
    assert ok, why
