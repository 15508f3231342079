"""A support knowledge base as an operator uploads it (an FAQ in one Markdown file, an HTML help
page with a table, a PDF with headings), asked over real HTTP with the local generator: which
entry is quoted, and whether every citation resolves to the bytes it names."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import httpx

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app

from .helpers import HTTP_GUARD_S, running_server
from .test_chat_http import upload
from .test_extract import lines_pdf

FAQ = b"""# Account FAQ

## How do I change my email address?
Open Settings, choose Profile, and edit the Email field. We send a confirmation message to the
new address.

## How do I change my billing address?
Open Settings, choose Billing, and edit the Address field. Invoices issued after the change show
the new address.

## How much does the Team plan cost?
The Team plan costs $25 per user per month and includes single sign-on.

## How much does the Pro plan cost?
The Pro plan costs $12 per user per month.
"""
HELP = b"""<html><body><h1>Sync client</h1><p>The tray icon shows how syncing goes.</p>
<table><tr><th>Status icon</th><th>Meaning</th></tr>
<tr><td>Green tick</td><td>All files are up to date</td></tr>
<tr><td>Red cross</td><td>Sync stopped because of an error</td></tr></table></body></html>"""
QA = b"""Security questions
Q: How do I turn on two-factor authentication?
A: Open Settings, choose Security, and click Enable two-factor. Scan the code with an
authenticator app.
Q: What happens if I lose my phone?
A: Use one of your recovery codes to sign in, then turn two-factor off and on again.
"""
ROUTER = lines_pdf(
    [
        "Router X200 Quick Start",
        "Power the router with the supplied 12 V adapter.",
        "Warranty",
        "The router has a 2-year limited warranty.",
    ]
)


def answer(base_url: str, question: str, **extra: Any) -> dict[str, Any]:
    response = httpx.post(
        f"{base_url}/v1/answer", json={"question": question, **extra}, timeout=120
    )
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_an_operators_documents_are_quoted_from_the_right_entry_and_cited_to_their_bytes(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    with running_server(create_app(settings, embedder=minilm)) as base_url:
        faq_id = upload(base_url, "faq.md", FAQ)
        upload(base_url, "help.html", HELP)
        upload(base_url, "router.pdf", ROUTER)
        upload(base_url, "security.txt", QA)

        billing = answer(base_url, "How do I change my billing address?")
        texts = [s["text"] for s in billing["sentences"]]
        assert texts == [
            "Open Settings, choose Billing, and edit the Address field.",
            "Invoices issued after the change show the new address.",
        ]
        team = answer(base_url, "How much does the Team plan cost?")
        assert [s["text"] for s in team["sentences"]] == [
            "The Team plan costs $25 per user per month and includes single sign-on."
        ]
        follow_up = answer(
            base_url,
            "And the Pro plan?",
            history=[{"question": "How much does the Team plan cost?", "answer": ""}],
        )
        assert [s["text"] for s in follow_up["sentences"]] == [
            "The Pro plan costs $12 per user per month."
        ]
        icon = answer(base_url, "What does the red cross icon mean?")
        assert [s["text"] for s in icon["sentences"]] == [
            "Red cross: Sync stopped because of an error."
        ]
        lost = answer(base_url, "I lost my phone, how do I sign in?")
        assert [s["text"] for s in lost["sentences"]] == [
            "Use one of your recovery codes to sign in, then turn two-factor off and on again."
        ]
        warranty = answer(base_url, "How long is the router warranty?")
        assert [s["text"] for s in warranty["sentences"]] == [
            "The router has a 2-year limited warranty."
        ]

        # Every citation names its document, version, hash and name, and its link by id
        # gives those bytes, also after the document gets a new version.
        billing_citation = billing["sentences"][0]["citations"][0]
        assert billing_citation["doc_id"] == faq_id
        assert (billing_citation["name"], billing_citation["version"]) == ("faq.md", 1)
        updated = FAQ.replace(b"$25", b"$27")
        response = httpx.post(
            f"{base_url}/v1/documents/{faq_id}/versions",
            files={"file": ("faq.md", updated)},
            timeout=HTTP_GUARD_S,
        )
        assert response.status_code == 201, response.text
        for result in (billing, team, follow_up, icon, lost, warranty):
            for sentence in result["sentences"]:
                for citation in sentence["citations"]:
                    body = httpx.get(f"{base_url}{citation['url']}", timeout=60).content
                    assert hashlib.sha256(body).hexdigest() == citation["sha256"]
                    assert (
                        f"/{citation['doc_id']}/versions/{citation['version']}/"
                        in (citation["url"])
                    )
