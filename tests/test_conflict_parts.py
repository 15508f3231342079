"""A question asking several things is refused for conflicting sources only when what
disagrees is what one of its parts asks: "... and where do I get spare parts?" is not asking how
long they are kept. Over real HTTP with the local generator."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app

from .helpers import running_server
from .test_chat_http import upload

PARTS = b"""# Where can I buy spare parts?

Spare parts such as kettle lids and blender blades are sold in the Spare parts section of our
web shop. We keep spare parts available for at least seven years after a product is
discontinued.
"""
SUSTAINABILITY = b"""# Sustainability

We keep spare parts available for at least ten years after a product is discontinued.
"""
VOLTAGE = b"""# Can I use my appliance in another country?

Our appliances are built for 220 to 240 volts. Do not use them on 110-volt networks.
"""


@contextmanager
def serving(tmp_path: Path, minilm: MiniLMEmbedder, files: dict[str, bytes]) -> Iterator[str]:
    """The app on a real server with the local generator, `files` uploaded; its base URL."""
    settings = Settings(data_dir=tmp_path / "data")
    with running_server(create_app(settings, embedder=minilm)) as base_url:
        for name, content in files.items():
            upload(base_url, name, content)
        yield base_url


def ask(base_url: str, question: str) -> dict[str, Any]:
    response = httpx.post(f"{base_url}/v1/answer", json={"question": question}, timeout=120)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_a_conflict_counts_only_if_a_part_of_the_question_asks_about_it(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    with serving(
        tmp_path,
        minilm,
        {"spare-parts.md": PARTS, "sustainability.md": SUSTAINABILITY, "voltage.md": VOLTAGE},
    ) as base_url:
        both = ask(base_url, "Can I use the appliance in the US and where do I get spare parts?")
        assert both["refusal"] is None, both["refusal"]
        assert {c["name"] for s in both["sentences"] for c in s["citations"]} >= {"spare-parts.md"}
        for question in (
            "Where do I buy spare parts and how long do you keep them?",
            "How long do you keep spare parts and where do I buy them?",
        ):
            asked = ask(base_url, question)
            assert asked["refusal"] is not None, question
            assert asked["refusal"]["reason"] == "conflicting_sources"


def test_a_where_question_that_also_asks_how_long_still_sees_the_durations_disagree(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    # One part (no "and" opening a question): "where" took the slot, so the seven and ten
    # years it also asks about fit nothing and the disagreement was answered over.
    with serving(
        tmp_path, minilm, {"spare-parts.md": PARTS, "sustainability.md": SUSTAINABILITY}
    ) as base_url:
        asked = ask(base_url, "Where do I buy spare parts, and for how long do you keep them?")
        assert asked["refusal"] is not None, asked["sentences"]
        assert asked["refusal"]["reason"] == "conflicting_sources"


def test_a_fourth_thing_asked_is_still_checked_for_conflicting_sources(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    # The local generator answers at most three parts; the check for disagreeing sources
    # looked at those three only, so a disagreement the fourth asks about was answered over.
    with serving(
        tmp_path,
        minilm,
        {"spare-parts.md": PARTS, "sustainability.md": SUSTAINABILITY, "voltage.md": VOLTAGE},
    ) as base_url:
        asked = ask(
            base_url,
            "Can I use the appliance in the US? What voltage is it built for? Where do I buy "
            "spare parts? How long do you keep spare parts?",
        )
        assert asked["refusal"] is not None, asked["sentences"]
        assert asked["refusal"]["reason"] == "conflicting_sources"
