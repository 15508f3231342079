"""The widget shows what a question asked that no source covers (`done`'s `uncovered`) under
the answer to the rest, and nothing when every part is covered; Copy answer copies it with
the answer (pasted into a ticket without it, the answer's silence on the part reads as a "no")."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from stream_rag.embed.minilm import MiniLMEmbedder

from .browser import ask, running_stack, wait_done
from .test_entry_evidence import FAQ

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page


def test_the_part_no_source_covers_is_shown_under_the_answer(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext, page: Page
) -> None:
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    with running_stack(tmp_path / "d", minilm) as stack:
        stack.upload("faq.md", FAQ)
        page.goto(stack.url + "/")
        ask(page, "When are you open and is there a gym?")
        t = wait_done(page)
        assert t.locator(".s").count() >= 1
        assert t.locator(".uncovered").inner_text() == ("The sources do not cover: is there a gym?")
        t.get_by_role("button", name="Copy answer").click()
        t.get_by_role("button", name="Copied").wait_for()
        copied = str(page.evaluate("navigator.clipboard.readText()"))
        answer, gap, sources = copied.split("\n\n")
        assert "7:00 to 22:00" in answer
        assert gap == "The sources do not cover: is there a gym?"
        assert sources.startswith("Sources:\n[1] faq.md")
        ask(page, "When are you open and can I bring my dog?")
        t = wait_done(page, 2)
        assert t.locator(".s").count() >= 1
        assert t.locator(".uncovered").count() == 0
