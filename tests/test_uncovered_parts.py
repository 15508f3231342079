"""A question asking several things, one of which the sources do not cover ("When are you
open and is there a gym?"): the covered part is answered, and the answer says, in structured
form, which part it left out (`done`'s `uncovered`, `/v1/answer`'s), with no uncited sentence.
Over real HTTP with the local generator and MiniLM."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.language.coverage import left_out

from .helpers import running_server
from .test_chat_http import read_events, upload
from .test_entry_evidence import FAQ, RULES


def chat(base_url: str, question: str) -> list[tuple[str, dict[str, Any]]]:
    with httpx.stream(
        "POST", f"{base_url}/v1/chat", json={"question": question}, timeout=120
    ) as response:
        assert response.status_code == 200
        return [(name, data) for name, data, _ in read_events(response) if name != "ping"]


def test_the_part_no_source_covers_is_named_in_done_and_in_the_answer(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    with running_server(create_app(settings, embedder=minilm)) as base_url:
        upload(base_url, "faq.md", FAQ)
        upload(base_url, "house-rules.txt", RULES)

        events = chat(base_url, "When are you open and is there a gym?")
        sentences = [data for name, data in events if name == "sentence"]
        assert sentences, events
        assert all(s["citations"] for s in sentences)
        assert any("7:00 to 22:00" in s["text"] for s in sentences), sentences
        assert not any("gym" in s["text"].lower() for s in sentences)
        name, done = events[-1]
        assert name == "done"
        assert done["uncovered"] == [{"question": "is there a gym?", "missing": ["gym"]}]

        body = httpx.post(
            f"{base_url}/v1/answer",
            json={"question": "When are you open and is there a gym?"},
            timeout=120,
        ).json()
        assert body["refusal"] is None
        assert body["uncovered"] == [{"question": "is there a gym?", "missing": ["gym"]}]

        # Both parts covered: nothing to say.
        events = chat(base_url, "When are you open and can I bring my dog?")
        assert [n for n, _ in events].count("sentence") >= 2, events
        assert "uncovered" not in events[-1][1]
        body = httpx.post(
            f"{base_url}/v1/answer",
            json={"question": "When are you open and can I bring my dog?"},
            timeout=120,
        ).json()
        assert body["uncovered"] == []


def test_left_out_names_parts_no_text_covers_when_another_is_covered() -> None:
    texts = ["The Pro plan costs $12 per month.", "The Basic plan is free."]
    titled = [f"{t}\npricing" for t in texts]
    assert left_out("What do the Pro and Enterprise plans cost?", texts, titled, 8) == [
        ("What do Enterprise plans cost?", ["Enterprise"])
    ]
    assert left_out("What do the Pro and Basic plans cost?", texts, titled, 8) == []
    # one thing asked, or nothing covered at all: no part is "left out"
    assert left_out("What does the Enterprise plan cost?", texts, titled, 8) == []
    assert left_out("Is there a gym and a sauna?", texts, titled, 8) == []
    assert left_out("Is there a gym? Do you sell coffee?", texts, titled, 8) == []
