"""The page at / starts in the server's default collection (STREAM_RAG_DEFAULT_COLLECTION): it
said "default" whatever the server's, so an operator who stored everything in "loft" saw "No
documents in “default” yet" and every question was answered "Nothing in the knowledge base
matches", or refused 403 with a chat key bound to "loft"."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from stream_rag.embed.minilm import MiniLMEmbedder

from .browser import ask, running_stack, wait_done
from .helpers import HTTP_GUARD_S
from .test_entry_evidence import FAQ

if TYPE_CHECKING:
    from playwright.sync_api import Page


def test_the_page_starts_in_the_servers_default_collection(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page
) -> None:
    with running_stack(tmp_path / "d", minilm, default_collection="loft") as stack:
        stack.upload("faq.md", FAQ, collection="loft")
        html = httpx.get(stack.url + "/", timeout=HTTP_GUARD_S).text
        assert 'data-collection="loft"' in html
        page.goto(stack.url + "/")
        assert page.input_value("#collection") == "loft"
        page.locator("#documents li.doc").first.wait_for()
        assert "faq.md" in page.locator("#documents").inner_text()
        ask(page, "When are you open?")
        t = wait_done(page)
        assert "7:00 to 22:00" in t.inner_text()
        # Emptied, the field means the server's default, not a collection named "default".
        page.fill("#collection", "")
        page.dispatch_event("#collection", "change")
        ask(page, "When are you open?")
        t = wait_done(page, 2)
        assert "7:00 to 22:00" in t.inner_text()
        options = page.locator("#collections option")
        assert "default" not in [
            options.nth(i).get_attribute("value") for i in range(options.count())
        ]
