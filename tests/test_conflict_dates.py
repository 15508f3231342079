"""The stale side of a conflict is named from the documents' own dates (a "Last updated"
line, front matter, HTML meta, DOCX/PDF properties), read at upload and stored with the
version; the refusal, the log and the admins' insights carry names, dates and versions."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import docx
import pytest
from starlette.testclient import TestClient

from loadtests.kb_fixtures import write_pdf
from stream_rag.access.keys import KeyStore
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.ingest.extract import DOCX, extract

from .conftest import wait_indexed

CURRENT = (
    "---\ntitle: Tariffs\nupdated: 2026-03-01\n---\n\n# Tariffs\n\n"
    "| Plan | Monthly fee | Per hour |\n| --- | --- | --- |\n"
    "| Regular | 12 euros | 6 euros |\n| Business | 45 euros | 5 euros |\n"
)
STALE = (
    "Price list\nLast updated: 15 January 2024\n\n"
    "Regular plan: 9 euros a month, 5.50 euros per hour.\n"
)


def test_each_format_gives_its_date(tmp_path: Path) -> None:
    md = tmp_path / "a.md"
    md.write_text(CURRENT)
    assert extract(md, "text/markdown").dated == "2026-03-01"
    txt = tmp_path / "b.txt"
    txt.write_text(STALE)
    assert extract(txt, "text/plain").dated == "2024-01-15"
    html = tmp_path / "c.html"
    html.write_text(
        '<html><head><meta name="last-modified" content="2026-02-10"></head>'
        "<body><p>Late return: 20 euros per started half hour.</p></body></html>"
    )
    assert extract(html, "text/html").dated == "2026-02-10"
    document = docx.Document()
    document.add_paragraph("Late return: 15 euros per started half hour.")
    document.core_properties.modified = datetime(2023, 5, 2, 9, 30, tzinfo=UTC)
    document.save(str(tmp_path / "d.docx"))
    assert extract(tmp_path / "d.docx", DOCX).dated == "2023-05-02"
    write_pdf(tmp_path / "e.pdf", [["Membership terms", "There is no deposit."]], "D:20260120")
    assert extract(tmp_path / "e.pdf", "application/pdf").dated == "2026-01-20"
    write_pdf(tmp_path / "f.pdf", [["Membership terms", "There is no deposit."]])
    assert extract(tmp_path / "f.pdf", "application/pdf").dated is None
    plain = tmp_path / "g.txt"
    plain.write_text("Regular plan: 9 euros a month.\n")
    assert extract(plain, "text/plain").dated is None


def _events(text: str) -> list[tuple[str, dict[str, Any]]]:
    events, name = [], "message"
    for line in text.splitlines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            events.append((name, json.loads(line[6:])))
    return events


def test_the_older_side_is_named_to_the_visitor_the_log_and_the_admins(
    tmp_path: Path, minilm: MiniLMEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    keys = KeyStore(data)
    admin = {"Authorization": "Bearer " + keys.create(name="a", scopes=["admin"])[1]}
    chat = {"Authorization": "Bearer " + keys.create(name="w", scopes=["chat"])[1]}
    with TestClient(create_app(Settings(data_dir=data), embedder=minilm)) as client:
        client.headers.update(admin)
        for name, text in (("tariffs.md", CURRENT), ("price-list-2024.txt", STALE)):
            made = client.post("/v1/documents", files={"file": (name, text.encode())})
            wait_indexed(client, made.json()["document"]["id"])
        del client.headers["Authorization"]
        with caplog.at_level(logging.WARNING, logger="stream_rag"):
            response = client.post(
                "/v1/chat", json={"question": "How much is the Regular plan a month?"}, headers=chat
            )
        assert response.status_code == 200, response.text
        refusal = next(data for name, data in _events(response.text) if name == "refusal")
        assert refusal["reason"] == "conflicting_sources"
        (conflict,) = refusal["details"]
        sides = {conflict["a"]["name"]: conflict["a"], conflict["b"]["name"]: conflict["b"]}
        assert sides["tariffs.md"]["dated"] == "2026-03-01"
        assert sides["price-list-2024.txt"]["dated"] == "2024-01-15"
        assert conflict[conflict["stale"]]["name"] == "price-list-2024.txt"
        assert "“price-list-2024.txt” is the older document." in refusal["message"]
        logged = [r.getMessage() for r in caplog.records if "conflicting sources" in r.getMessage()]
        assert logged
        assert "price-list-2024.txt v1 updated 2024-01-15 (older)" in logged[0]
        assert "tariffs.md v1 updated 2026-03-01" in logged[0]
        listed = client.get("/v1/insights", headers=admin).json()["conflicts"]
        (pair,) = listed
        assert {pair["a"]["dated"], pair["b"]["dated"]} == {"2024-01-15", "2026-03-01"}
        assert pair[pair["stale"]]["name"] == "price-list-2024.txt"
        assert {pair["a"]["version"], pair["b"]["version"]} == {1}
