"""A citation in the reader's hands, in a real browser: opened with a chat key however it is
activated (click, Ctrl+click, middle-click, Enter), and its passage card on a touch screen."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from stream_rag.embed.minilm import MiniLMEmbedder

from .browser import (
    CHAT,
    POLICY,
    Console,
    ask,
    keyed_shop,
    new_context,
    running_stack,
    wait_done,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Response

FALCON = b"<html><body><p>Falcon boats are painted blue by the harbour crew.</p></body></html>"


def _opened_text(context: BrowserContext, activate: Callable[[], None]) -> str:
    """The text of the tab `activate` opens, once it shows a document."""
    with context.expect_page() as popup:
        activate()
    tab = popup.value
    tab.wait_for_url(re.compile(r"^blob:"))
    text = tab.locator("body").inner_text()
    tab.close()
    return text


def test_a_keyed_citation_opens_the_document_however_it_is_activated(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext
) -> None:
    # A link cannot carry the key: middle-click, Ctrl+click and "open in new tab" went to the
    # bare URL, and the new tab showed a 401 JSON error instead of the document.
    refused: list[str] = []

    def watch(response: Response) -> None:
        if response.status in (401, 403):
            refused.append(response.url)

    context.on("response", watch)
    with keyed_shop(tmp_path, minilm) as (shop, stack):
        stack.upload("policy.md", POLICY, collection="support")
        stack.upload("falcon.html", FALCON, collection="support")
        page = context.new_page()
        page.goto(shop + "/")
        ask(page, "Refunds for annual plans?")
        t = wait_done(page)
        chip = t.locator(".chip").first
        # No URL that answers 401 is offered (context menu: open in new tab, copy link).
        assert chip.get_attribute("href") is None
        download = page.locator(f"{CHAT} .reader a.download")

        def from_the_reader(how: Callable[[], None]) -> Callable[[], None]:
            def activate() -> None:
                chip.click()  # a plain click opens the reader, Download is in it
                how()

            return activate

        activations: list[Callable[[], None]] = [
            from_the_reader(lambda: download.click()),
            from_the_reader(lambda: download.press("Enter")),
            lambda: chip.click(modifiers=["ControlOrMeta"]),
            lambda: chip.click(button="middle"),
            lambda: t.locator(".sources a").first.click(button="middle"),
        ]
        for activate in activations:
            assert "Refunds for annual plans are possible" in _opened_text(context, activate)
            page.keyboard.press("Escape")  # the reader, where it opened
        # HTML is never shown from a blob (it would run as the host page): it is saved.
        ask(page, "What colour are Falcon boats painted?")
        falcon = wait_done(page, 2).locator(".chip").first
        for how in ("reader", "middle"):
            with page.expect_download() as download_event:
                if how == "reader":
                    falcon.click()
                    download.click()
                else:
                    falcon.click(button="middle")
            assert Path(download_event.value.path()).read_bytes() == FALCON
            page.keyboard.press("Escape")
    assert refused == []


def test_on_a_touch_screen_a_tap_shows_the_passage_and_a_second_opens_it(
    tmp_path: Path, minilm: MiniLMEmbedder, browser: Browser, console: Console
) -> None:
    from playwright.sync_api import expect

    # The passage card came on hover or focus only; a tap opened the document at once, so on a
    # phone the passage was never seen.
    context = new_context(
        browser, viewport={"width": 390, "height": 760}, has_touch=True, is_mobile=True
    )
    context.on("page", console.watch)
    try:
        with running_stack(tmp_path / "d", minilm) as stack:
            stack.upload("policy.md", POLICY)
            page = context.new_page()
            page.goto(stack.url + "/")
            ask(page, "Refunds for annual plans?")
            t = wait_done(page)
            chip = t.locator(".chip").first
            card = page.locator(f"{CHAT} .tip")
            chip.tap()
            expect(card).to_be_visible()
            expect(card).to_contain_text("Refunds for annual plans are possible within 30 days.")
            assert len(context.pages) == 1, "the tap opened the document"
            # A dialog named for its source, the chip saying it is open.
            expect(card).to_have_role("dialog")
            expect(card).to_have_accessible_name(re.compile(r"Source 1: policy\.md, version 1"))
            expect(chip).to_have_attribute("aria-expanded", "true")
            # Targets a finger can hit (WCAG 2.5.8: 24 px at least).
            for target in (chip, card.locator("a.open"), card.locator("button.close")):
                box = target.bounding_box()
                assert box is not None
                assert box["width"] >= 24, box
                assert box["height"] >= 24, box
            # A tap elsewhere dismisses it, and so does its Close button.
            t.locator(".q").tap()
            expect(card).to_be_hidden()
            expect(chip).not_to_have_attribute("aria-expanded", "true")
            chip.tap()
            card.get_by_role("button", name="Close").tap()
            expect(card).to_be_hidden()
            # Its Open button, or a second tap on the chip, opens the reader at the passage,
            # whose Download is the document.
            reader = page.locator(f"{CHAT} .reader")
            for second in ("card", "chip"):
                chip.tap()
                expect(card).to_be_visible()
                (card.get_by_role("link", name="Open") if second == "card" else chip).tap()
                expect(reader.locator(".cited").first).to_contain_text("within 30 days")
                assert len(context.pages) == 1
                with (
                    context.expect_event("response", lambda r: "/content" in r.url) as response,
                    context.expect_page() as tab,
                ):
                    reader.locator("a.download").tap()
                assert response.value.body() == POLICY
                tab.value.close()
                reader.get_by_role("button", name="Back to the chat").tap()
                expect(reader).to_be_hidden()
    finally:
        context.close()
    assert console.unexpected() == []
