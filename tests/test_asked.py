"""What a question asks for: its slot kind, and the clauses values stand in."""

from __future__ import annotations

import pytest

from stream_rag.answer.asked import clause_at, clause_spans, fits, slot_kind


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How long is the refund window?", "duration"),
        ("How many days do I have to return it?", "duration"),
        ("How fast are refunds issued?", "duration"),
        ("How much does the Pro plan cost?", "money"),
        ("Is there a restocking fee?", "money"),
        ("How much storage does Pro include?", "count"),
        ("How many notebooks can I create?", "count"),
        ("When does the new price take effect?", "date"),
        ("Can I export my notes?", None),
        ("Where can I get spare parts?", "place"),
        ("Where is the shop?", "place"),
        ("Where do I pay the fee?", "place"),
        ("Where can I park, and for how long?", "duration"),  # it asks a duration too
        ("Where can I park and how much does it cost?", "money"),
    ],
)
def test_slot_kind(question: str, kind: str | None) -> None:
    assert slot_kind(question) == kind


def test_values_fit_the_slot() -> None:
    assert fits("duration", "number", "day")
    assert not fits("duration", "number", "€")
    assert fits("money", "number", "$")
    assert not fits("money", "number", "day")
    assert fits("count", "number", "notebook")
    assert not fits("count", "number", "day")
    assert fits("date", "date", "time")
    assert fits(None, "number", "day")
    assert fits("money", "number", "@cost")  # a unit not read is not held against a value
    # "where" asks a place: never a duration, a date or a price; a house number may be one
    assert not fits("place", "number", "year")
    assert not fits("place", "date", "time")
    assert not fits("place", "number", "€")
    assert fits("place", "number", "harbour")


def test_clauses_split_at_commas_and_conjunctions_but_keep_bare_values() -> None:
    text = "returns are free within 45 days, and there is no fee; open from 9:00 to 18:00, cet"
    spans = clause_spans(text)
    assert [text[s:e] for s, e in spans] == [
        "returns are free within 45 days",
        "there is no fee",
        "open from 9:00 to 18:00, cet",
    ]
    assert clause_at(spans, text.index("fee")) == spans[1]
