"""The widget shows what a question asked that no source covers (`done`'s `uncovered`) under
the answer to the rest, and nothing when every part is covered."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from stream_rag.embed.minilm import MiniLMEmbedder

from .browser import ask, running_stack, wait_done
from .test_entry_evidence import FAQ

if TYPE_CHECKING:
    from playwright.sync_api import Page


def test_the_part_no_source_covers_is_shown_under_the_answer(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page
) -> None:
    with running_stack(tmp_path / "d", minilm) as stack:
        stack.upload("faq.md", FAQ)
        page.goto(stack.url + "/")
        ask(page, "When are you open and is there a gym?")
        t = wait_done(page)
        assert t.locator(".s").count() >= 1
        assert t.locator(".uncovered").inner_text() == ("The sources do not cover: is there a gym?")
        ask(page, "When are you open and can I bring my dog?")
        t = wait_done(page, 2)
        assert t.locator(".s").count() >= 1
        assert t.locator(".uncovered").count() == 0
