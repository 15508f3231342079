"""A document's date is read from what it says of itself (a "Last updated" line, front matter,
HTML meta), else from the properties its editor saved; never guessed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from stream_rag.ingest.dates import pdf_date, property_date, stated_date


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Price list\nLast updated: 15 January 2024\n\nDay rate: 55 euros.", "2024-01-15"),
        ("# Fees\n\nThese fees apply from 1 June 2023.\n\nLate return: 15 euros.", "2023-06-01"),
        ("Returns\nUpdated on March 3, 2025\nYou can return ...", "2025-03-03"),
        ("Terms\nRevised 2025-02-01\n", "2025-02-01"),
        ("Terms\nEffective from May 2024.\n", "2024-05-01"),
        ("Our policy.\n\nSome text.\n\nLast reviewed: 2 Feb 2026", "2026-02-02"),
        # German and French month names and cues; numeric dates, day first where written so.
        ("Preisliste\nStand: 15. Januar 2024\n\nTagesmiete: 55 Euro.", "2024-01-15"),
        ("Zuletzt aktualisiert am 3. März 2025", "2025-03-03"),
        ("Gebühren\nGültig ab 1. Juni 2023", "2023-06-01"),
        ("Stand: 15.01.2024", "2024-01-15"),
        ("Tarifs\nMis à jour le 3 mars 2025", "2025-03-03"),
        ("Dernière mise à jour : 1er février 2026", "2026-02-01"),
        ("En vigueur à partir du 01/06/2023", "2023-06-01"),
        ("Last updated: 15/01/2024", "2024-01-15"),
        ("Last updated: 01/15/2024", "2024-01-15"),
        ("Prices valid from 15.01.2024", "2024-01-15"),
        ("Last updated: 03/04/2024", None),  # March or April: a reader cannot tell
        ("Der Stand ist gut: 15.01.2024", None),
        # A date that is not when the document was updated, or no date at all.
        ("We updated 3 things in 2024.", None),
        ("The offer ends on 15 January 2024.", None),
        ("Last updated: soon", None),
        ("Last updated: 2024-13-45", None),
    ],
)
def test_a_line_saying_when_the_document_was_updated(text: str, found: str | None) -> None:
    assert stated_date(text) == found


def test_front_matter_and_meta_give_the_date_before_the_text() -> None:
    md = "---\ntitle: Tariffs\nupdated: 2026-03-01\n---\n\n# Tariffs\n\nLast updated: 1 May 2020\n"
    assert stated_date("# Tariffs\n\nLast updated: 1 May 2020", md, "text/markdown") == (
        "2026-03-01"
    )
    assert stated_date("x", "---\ndate: '2025-07-04'\n---\nx", "text/markdown") == "2025-07-04"
    html = (
        '<html><head><meta charset="utf-8"><meta name="last-modified" content="2026-02-10">'
        '<meta property="article:published_time" content="2025-01-01T10:00:00Z"></head>'
    )
    assert stated_date("Fees", html, "text/html; charset=utf-8") == "2026-02-10"
    published = '<meta property="article:published_time" content="2025-01-01T10:00:00Z">'
    assert stated_date("Fees", published, "text/html") == "2025-01-01"
    # Front matter in a text file is text, not metadata.
    assert stated_date("x", md, "text/plain") is None


def test_saved_properties() -> None:
    assert property_date(datetime(2023, 5, 2, 9, 30, tzinfo=UTC)) == "2023-05-02"
    assert property_date(None) is None
    assert pdf_date("D:20260120103000Z") == "2026-01-20"
    assert pdf_date(datetime(2026, 1, 20, tzinfo=UTC)) == "2026-01-20"
    assert pdf_date("D:2026") == "2026-01-01"
    assert pdf_date("yesterday") is None
    assert pdf_date(None) is None
