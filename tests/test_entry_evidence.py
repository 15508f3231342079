"""The evidence score of a chunk holding several FAQ entries: a question about one entry, in
other words than the entry's, is answered (the chunk's vector averages every entry, so its
cosine alone undersold it); questions the FAQ does not cover are still refused. Over real
HTTP with the local generator and MiniLM."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from stream_rag.answer.evidence import entries
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app

from .helpers import running_server
from .test_chat_http import upload

# One Markdown FAQ, chunked into blocks of several entries each.
FAQ = b"""# Harbour Desk coworking: frequently asked questions

## What are the opening hours?
The space is open from 7:00 to 22:00 on weekdays and from 9:00 to 18:00 on Saturdays. It is
closed on Sundays and public holidays.

## Can I bring my dog?
Well-behaved dogs are welcome on the ground floor if they stay on a lead. Dogs are not allowed
in the meeting rooms or the kitchen.

## How do I book a meeting room?
Book meeting rooms in the Harbour Desk app up to 14 days ahead. Each member gets four free
hours of meeting room time per month; extra hours cost 15 euros.

## Is there parking?
There are twelve parking spaces behind the building, first come, first served. A monthly
parking permit costs 60 euros.

## Can I receive post at the space?
Resident members can use the space as their business address. Parcels are kept at reception
for up to seven days.

## How fast is the internet?
Every desk has a wired 1 Gbit/s connection, and the Wi-Fi reaches about 300 Mbit/s.

## Can I cancel my membership?
Memberships can be cancelled at the end of any month with 30 days' notice. Send the
cancellation from the app or by email to the front desk.
"""
RULES = b"""House rules

Phone calls belong in the phone booths, not at the desks. Keep the kitchen tidy and put your
dishes in the dishwasher.

Guests must sign in at reception and may stay for up to two hours for free.
"""


def ask(base_url: str, question: str) -> dict[str, Any]:
    response = httpx.post(f"{base_url}/v1/answer", json={"question": question}, timeout=120)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_entries_are_a_blocks_headings_with_their_text() -> None:
    text = "# FAQ\n\n## Is there parking?\nYes, behind the building.\n\n## Wi-Fi?\nIt is fast."
    assert entries(text) == [
        "## Is there parking?\nYes, behind the building.",
        "## Wi-Fi?\nIt is fast.",
    ]
    assert entries("## Only one?\nOne entry is the block itself.") == []
    assert entries("Plain text.\n\nNo headings at all.") == []


def test_a_question_about_one_entry_of_a_many_entry_chunk_is_answered_and_off_topic_refused(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    with running_server(create_app(settings, embedder=minilm)) as base_url:
        upload(base_url, "faq.md", FAQ)
        upload(base_url, "house-rules.txt", RULES)

        parcels = ask(base_url, "How long do you hold parcels?")
        assert parcels["refusal"] is None, parcels["refusal"]
        texts = [s["text"] for s in parcels["sentences"]]
        assert "Parcels are kept at reception for up to seven days." in texts
        assert {c["name"] for s in parcels["sentences"] for c in s["citations"]} == {"faq.md"}

        for question in (
            "How do I train my puppy to sit?",
            "What speed does fibre broadband usually reach at home?",
            "Is there a gym?",
            "How do I file my tax return?",
        ):
            refused = ask(base_url, question)
            assert refused["refusal"] is not None, (question, refused["sentences"])
            assert refused["refusal"]["reason"] == "low_evidence", question
