"""The local generator answers a question whose answer repeats its words and adds the value it
asks for, over real HTTP (a sentence that only restates the question is still not quoted)."""

from __future__ import annotations

from pathlib import Path

import httpx

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app

from .helpers import running_server
from .test_chat_http import read_events, upload

NOTE = b"The Zorblax device needs 12 volts. It is sold in blue and green.\n"


def test_the_sentence_giving_the_asked_value_is_quoted(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    with running_server(create_app(settings, embedder=minilm)) as base_url:
        upload(base_url, "test1.txt", NOTE)
        question = "How many volts does the Zorblax device need?"
        with httpx.stream(
            "POST", f"{base_url}/v1/chat", json={"question": question}, timeout=120
        ) as response:
            events = [(name, data) for name, data, _ in read_events(response) if name != "ping"]
    sentences = [data["text"] for name, data in events if name == "sentence"]
    # (Then the sentence that goes on from it with "It", as the generator quotes.)
    assert sentences[:1] == ["The Zorblax device needs 12 volts."], events
