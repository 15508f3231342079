"""`/v1/chat/completions` with the official `openai` client, for a question asking two things
of which the sources cover one: a chat front-end shows only `content`, so the part no source
covers is said there, in its own paragraph after the verified sentences, as the widget and
`ask` say it; the structured form stays in `stream_rag` (`uncovered` of the /v1/answer body;
streamed, on the note's own chunk and in `done`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openai import OpenAI

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app

from .helpers import running_server
from .test_chat_http import upload
from .test_entry_evidence import FAQ, RULES

GAP = [{"question": "is there a gym?", "missing": ["gym"]}]
NOTE = "\n\nThe sources do not cover: is there a gym?"


def ask(client: OpenAI, question: str) -> tuple[str, dict[str, Any]]:
    completion = client.chat.completions.create(
        model="stream-rag", messages=[{"role": "user", "content": question}]
    )
    extension = (completion.model_extra or {})["stream_rag"]
    return completion.choices[0].message.content or "", extension


def ask_streamed(client: OpenAI, question: str) -> tuple[str, dict[str, Any]]:
    stream = client.chat.completions.create(
        model="stream-rag", messages=[{"role": "user", "content": question}], stream=True
    )
    content, last = "", {}
    for chunk in stream:
        text = chunk.choices[0].delta.content or ""
        last = (chunk.model_extra or {})["stream_rag"]
        if "do not cover" in text:
            # Its own chunk, before the one that finishes, with the parts in structured form.
            assert chunk.choices[0].finish_reason is None
            assert last == {"uncovered": GAP}
        content += text
    return content, last["done"]


def test_the_part_no_source_covers_is_in_the_content_and_the_extension(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    with running_server(create_app(settings, embedder=minilm)) as base_url:
        upload(base_url, "faq.md", FAQ)
        upload(base_url, "house-rules.txt", RULES)
        client = OpenAI(base_url=f"{base_url}/v1", api_key="unused", max_retries=0)

        for asked in (ask, ask_streamed):
            content, extension = asked(client, "When are you open and is there a gym?")
            assert "7:00 to 22:00" in content
            assert content.endswith(NOTE), (asked.__name__, content)
            assert content.count("do not cover") == 1
            assert extension["uncovered"] == GAP

            content, extension = asked(client, "When are you open and can I bring my dog?")
            assert "do not cover" not in content
            assert not extension.get("uncovered")
