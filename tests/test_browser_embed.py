"""The widget embedded in other sites' pages, in a real browser: cross-origin, with a chat key,
under the host page's CSS."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from stream_rag.access.keys import KeyStore
from stream_rag.embed.minilm import MiniLMEmbedder

from .browser import (
    CHAT,
    POLICY,
    Console,
    ask,
    host_page_app,
    running_stack,
    wait_done,
)
from .helpers import running_server

if TYPE_CHECKING:
    from playwright.sync_api import (
        BrowserContext,
        Page,
    )


# -- embedding --------------------------------------------------------------------------------


def test_cross_origin_embed_works_for_a_listed_origin_and_is_blocked_for_another(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext, console: Console
) -> None:
    api: dict[str, str] = {}
    with (
        running_server(host_page_app(api)) as listed,
        running_server(host_page_app(api)) as other,
        running_stack(tmp_path / "d", minilm, cors_origins=(listed,)) as stack,
    ):
        api["url"] = stack.url
        stack.upload("policy.md", POLICY)
        good = context.new_page()
        good.goto(listed + "/")
        ask(good, "Refunds for annual plans?")
        assert wait_done(good).locator(".s").count() >= 1
        assert stack.fake.state.stats.requests == 1
        # The unlisted origin's preflight is refused, so the question never reaches the model.
        console.allowed.append(re.compile(r"CORS|Failed to load resource|net::ERR_FAILED"))
        bad = context.new_page()
        bad.goto(other + "/")
        ask(bad, "Refunds for annual plans?")
        error = wait_done(bad).locator(".error")
        # A visitor reads what to do, not the browser's words (they are in the console).
        assert "Could not reach the service" in error.inner_text()
        assert bad.locator(f"{CHAT} .s").count() == 0
        assert stack.fake.state.stats.requests == 1
    assert any("CORS" in e for e in console.errors)


def test_embed_with_a_chat_key_answers_and_downloads_only_in_its_collection(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext, console: Console
) -> None:
    store = KeyStore(tmp_path / "d")
    admin = store.create(name="ops", scopes=["admin"])[1]
    chat = store.create(name="site", scopes=["chat"], collections=["support"])[1]
    api: dict[str, str] = {}
    with (
        running_server(host_page_app(api, "support", chat)) as shop,
        running_server(host_page_app(api, "internal", chat)) as intranet,
        running_stack(tmp_path / "d", minilm, cors_origins=(shop, intranet)) as stack,
    ):
        api["url"] = stack.url
        stack.headers["Authorization"] = f"Bearer {admin}"
        doc = stack.upload("policy.md", POLICY, collection="support")
        stack.upload(
            "secret.md", b"Refunds for annual plans are never possible.", collection="internal"
        )
        page = context.new_page()
        page.goto(shop + "/")
        ask(page, "Refunds for annual plans?")
        t = wait_done(page)
        assert t.locator(".s").count() >= 1
        assert "policy.md" in t.locator(".sources").inner_text()
        # The link cannot carry the key, so the widget fetches the bytes with it and shows
        # them (text; other kinds are saved: test_browser_citations.py), from the reader.
        t.locator(".chip").first.click()
        with (
            context.expect_event("response", lambda r: "/content" in r.url) as response,
            context.expect_page() as tab,
        ):
            page.locator(f"{CHAT} .reader a.download").click()
        tab.value.wait_for_url(re.compile(r"^blob:"))
        assert tab.value.locator("body").inner_text().strip() == POLICY.decode()
        assert doc["id"] in response.value.url
        # The same key on a page that asks another collection is refused, and says so.
        console.allowed.append(re.compile(r"status of 403"))
        other = context.new_page()
        other.goto(intranet + "/")
        ask(other, "Refunds for annual plans?")
        error = wait_done(other).locator(".error")
        assert "The chat is not available right now." in error.inner_text()
        assert other.locator(f"{CHAT} .s").count() == 0


def test_host_page_css_themes_the_widget_but_cannot_break_it(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page
) -> None:
    hostile = (
        "button, textarea, p, div { display: none !important; color: red !important; }"
        " html { font-size: 2px !important; }"
        " * { font-size: 2px !important; }"
        " stream-rag-chat { --srw-accent: rgb(107, 47, 179); --srw-radius: 0px; }"
    )
    api: dict[str, str] = {}
    with (
        running_server(host_page_app(api, css=hostile)) as host,
        running_stack(tmp_path / "d", minilm, cors_origins=(host,)) as stack,
    ):
        api["url"] = stack.url
        stack.upload("policy.md", POLICY)
        page.goto(host + "/")
        ask_button = page.locator(f"{CHAT} button[type=submit]")
        assert ask_button.is_visible()
        textarea = page.locator(f"{CHAT} textarea")
        assert textarea.is_visible()
        # Sizes do not follow the host's root font size (no rem inside the widget).
        assert textarea.evaluate("t => parseFloat(getComputedStyle(t).paddingLeft)") >= 5
        style = ask_button.evaluate(
            "b => { const s = getComputedStyle(b);"
            " const r = getComputedStyle(b.getRootNode().querySelector('.root'));"
            " return [s.backgroundColor, s.color, r.borderTopLeftRadius]; }"
        )
        ask(page, "Refunds for annual plans?")
        answer = wait_done(page).locator(".s").first
        assert answer.evaluate("s => parseFloat(getComputedStyle(s).fontSize)") >= 12
    assert style == ["rgb(107, 47, 179)", "rgb(255, 255, 255)", "0px"]
