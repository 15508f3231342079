"""A keyed citation (the document fetched with the widget's key and shown from a blob) of each
kind a site uploads: PDF shown in its tab, DOCX and HTML saved without a tab flashing open, a
shown tab that still reloads minutes later, and Enter on a chip after a touch."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from stream_rag.embed.minilm import MiniLMEmbedder

from .browser import CHAT, POLICY, Console, ask, keyed_shop, new_context, wait_done
from .helpers import make_docx, make_pdf

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

FALCON = b"<html><body><p>Falcon boats are painted blue by the harbour crew.</p></body></html>"
HERON = "Heron kayaks carry a warranty of five years against cracks in the hull."
OWL = "Owl lanterns run for twelve hours on one charge of their battery."


def test_a_keyed_pdf_is_shown_and_docx_or_html_saved_without_a_tab(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext
) -> None:
    # No test opened a keyed PDF; and DOCX or HTML (saved, never shown) flashed a blank tab
    # open and shut, as the tab was opened before the download said its kind.
    pdf = make_pdf([OWL])
    docx = make_docx([HERON])
    with keyed_shop(tmp_path, minilm) as (shop, stack):
        stack.upload("lanterns.pdf", pdf, collection="support")
        stack.upload("kayaks.docx", docx, name="Kayak warranty", collection="support")
        stack.upload("falcon.html", FALCON, collection="support")
        page = context.new_page()
        page.goto(shop + "/")
        ask(page, "How long do Owl lanterns run on one charge?")
        chip = wait_done(page).locator(".chip").first
        # A plain click opens the reader (test_browser_visitor.py); Ctrl+click the file.
        with context.expect_page() as popup:
            chip.click(modifiers=["ControlOrMeta"])
        tab = popup.value
        tab.wait_for_url(re.compile(r"^blob:"))
        # Chromium shows a PDF in its viewer: the tab's document is the PDF itself.
        assert tab.evaluate("document.contentType") == "application/pdf"
        tab.close()
        tabs: list[Page] = []
        context.on("page", lambda p: tabs.append(p))
        for n, (question, body, saved_as) in enumerate(
            [
                ("How long is the warranty of Heron kayaks?", docx, "kayaks.docx"),
                ("What colour are Falcon boats painted?", FALCON, "falcon.html"),
            ],
            start=2,
        ):
            ask(page, question)
            link = wait_done(page, n).locator(".chip").first
            for button in ("left", "middle"):
                with page.expect_download() as download:
                    if button == "left":
                        link.click(modifiers=["ControlOrMeta"])
                    else:
                        link.click(button="middle")
                assert Path(download.value.path()).read_bytes() == body
                assert tabs == [], [t.url for t in tabs]
                # Saved as the server names it (its file's name): it was the document's name, which
                # may have no extension ("Kayak warranty").
                assert download.value.suggested_filename == saved_as


def test_a_shown_keyed_document_still_reloads_minutes_later(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext
) -> None:
    # Its blob URL was revoked a minute after it was opened: a reload then showed Chromium's
    # "file not found". The page's clock is advanced; no test waits out the minutes.
    with keyed_shop(tmp_path, minilm) as (shop, stack):
        stack.upload("policy.md", POLICY, collection="support")
        page = context.new_page()
        page.clock.install()
        page.goto(shop + "/")
        ask(page, "Refunds for annual plans?")
        chip = wait_done(page).locator(".chip").first
        with context.expect_page() as popup:
            chip.click(modifiers=["ControlOrMeta"])
        tab = popup.value
        tab.wait_for_url(re.compile(r"^blob:"))
        page.clock.run_for("10:00")
        tab.reload()
        assert "Refunds for annual plans are possible" in tab.locator("body").inner_text()
        # Opened again, the same version is the same blob: no second download, no second URL.
        with context.expect_page() as again:
            chip.click(modifiers=["ControlOrMeta"])
        again.value.wait_for_url(tab.url)


def test_enter_on_a_keyed_chip_after_a_touch_opens_the_reader(
    tmp_path: Path, minilm: MiniLMEmbedder, browser: Browser, console: Console
) -> None:
    from playwright.sync_api import expect

    # A tap pins the passage card (there is no hover); Enter from a keyboard afterwards (a
    # tablet with one) was still taken for a tap and pinned the card instead of opening.
    context = new_context(browser, viewport={"width": 800, "height": 760}, has_touch=True)
    context.on("page", console.watch)
    try:
        with keyed_shop(tmp_path, minilm) as (shop, stack):
            stack.upload("policy.md", POLICY, collection="support")
            page = context.new_page()
            page.goto(shop + "/")
            ask(page, "Refunds for annual plans?")
            t = wait_done(page)
            chip = t.locator(".chip").first
            card = page.locator(f"{CHAT} .tip")
            chip.tap()
            expect(card).to_have_role("dialog")
            t.locator(".q").tap()
            expect(card).to_be_hidden()
            chip.focus()
            page.keyboard.press("Enter")
            reader = page.locator(f"{CHAT} .reader")
            expect(reader.locator(".cited").first).to_contain_text("Refunds for annual plans")
            expect(card).to_be_hidden()
    finally:
        context.close()
    assert console.unexpected() == []
