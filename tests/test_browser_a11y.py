"""The widget by keyboard alone, at 400 px wide, and its contrast in light and dark, in a real
browser."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pytest

from stream_rag.embed.minilm import MiniLMEmbedder

from .browser import (
    CHAT,
    POLICY,
    Console,
    ask,
    new_context,
    running_stack,
    wait_done,
)

if TYPE_CHECKING:
    from playwright.sync_api import (
        Browser,
        BrowserContext,
        Page,
    )


# -- keyboard, layout, contrast ------------------------------------------------------------


def _deep_active(page: Page) -> str:
    return str(
        page.evaluate(
            """() => { let a = document.activeElement;
              while (a && a.shadowRoot && a.shadowRoot.activeElement)
                a = a.shadowRoot.activeElement;
              return a ? a.tagName.toLowerCase() + '.' + a.className : ''; }"""
        )
    )


def _tab_to(page: Page, wanted: Callable[[str], bool], key: str = "Tab") -> str:
    for _ in range(30):
        page.keyboard.press(key)
        active = _deep_active(page)
        if wanted(active):
            return active
    raise AssertionError(f"never reached by {key}")


def test_keyboard_only_from_question_to_citation_and_copy(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext, page: Page
) -> None:
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    with running_stack(tmp_path / "d", minilm) as stack:
        doc = stack.upload("policy.md", POLICY)
        page.goto(stack.url + "/")
        _tab_to(page, lambda a: a.startswith("textarea"))
        page.keyboard.type("first line")
        page.keyboard.press("Shift+Enter")
        page.keyboard.type("second line")
        box = page.locator(f"{CHAT} textarea")
        assert box.input_value() == "first line\nsecond line"
        assert page.locator(f"{CHAT} .turn").count() == 0
        page.keyboard.press("Control+A")
        page.keyboard.type("Refunds for annual plans?")
        page.keyboard.press("Enter")
        t = wait_done(page)
        _tab_to(page, lambda a: "chip" in a, key="Shift+Tab")
        chip = t.locator(".chip").first
        outline = chip.evaluate("c => getComputedStyle(c).outlineStyle")
        assert outline != "none"
        tip = page.locator(f"{CHAT} .tip")
        assert tip.is_visible()
        tip_text = tip.inner_text()
        assert "policy.md" in tip_text
        assert "version 1" in tip_text
        assert "Refunds for annual plans are possible within 30 days." in tip_text
        page.keyboard.press("Escape")
        assert tip.is_hidden()
        # Enter opens the reader at the passage, its Back button focused; Download is before it.
        page.keyboard.press("Enter")
        reader = page.locator(f"{CHAT} .reader")
        reader.locator(".cited").first.wait_for()
        assert _focused_text(page) == "Back to the chat"
        page.keyboard.press("Shift+Tab")
        with context.expect_event("response", lambda r: "/content" in r.url) as response:
            with context.expect_page() as popup:
                page.keyboard.press("Enter")
            popup.value.close()
        assert response.value.url.endswith(f"/v1/documents/{doc['id']}/versions/1/content")
        page.bring_to_front()
        # Escape closes the reader and focus is back on the chip.
        page.keyboard.press("Escape")
        assert reader.is_hidden()
        assert _focused_text(page) == "1"
        page.keyboard.press("Escape")  # the chip's card, shown again by the focus
        _tab_to(page, lambda a: a.startswith("button") and "Copy" in _focused_text(page))
        page.keyboard.press("Enter")
        t.get_by_role("button", name="Copied").wait_for()
        copied = str(page.evaluate("navigator.clipboard.readText()"))
    assert copied.startswith("Refunds for annual plans are possible within 30 days.[1]")
    assert f"[1] policy.md, version 1 (sha256 {doc['versions'][0]['sha256']})" in copied


def _focused_text(page: Page) -> str:
    return str(
        page.evaluate(
            "() => { const r = document.querySelector('stream-rag-chat').shadowRoot;"
            " return r.activeElement ? r.activeElement.textContent : ''; }"
        )
    )


def test_400px_wide_has_no_horizontal_scrolling(
    tmp_path: Path, minilm: MiniLMEmbedder, browser: Browser, console: Console
) -> None:
    ctx = new_context(browser, viewport={"width": 400, "height": 900})
    ctx.on("page", console.watch)
    page = ctx.new_page()
    try:
        with running_stack(tmp_path / "d", minilm) as stack:
            stack.upload("test1.txt", b"The Pro plan costs 20 dollars per month.")
            stack.upload("test1.txt", b"The Pro plan costs 25 dollars per month.")
            stack.upload(
                "a-very-long-file-name-without-any-spaces-at-all-for-the-layout-check.md",
                POLICY,
            )
            page.goto(stack.url + "/")
            ask(page, "Refunds for annual plans?")
            wait_done(page)
            ask(page, "How much does the Pro plan cost per month?")
            wait_done(page, 2).locator(".refusal").wait_for()
            widths = page.evaluate(
                """() => { const r = document.querySelector('stream-rag-chat').shadowRoot;
                  const log = r.querySelector('.log');
                  return [document.documentElement.scrollWidth, window.innerWidth,
                          log.scrollWidth, log.clientWidth]; }"""
            )
    finally:
        ctx.close()
    assert widths[0] <= widths[1]
    assert widths[2] <= widths[3]
    assert console.unexpected() == []


CONTRAST_JS = """() => {
  const lum = (rgb) => rgb.map((c) => { c /= 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; })
    .reduce((s, c, i) => s + c * [0.2126, 0.7152, 0.0722][i], 0);
  const parse = (s) => (s.match(/[\\d.]+/g) || []).map(Number);
  const background = (el) => {
    for (let e = el; e; e = e.parentElement || (e.getRootNode().host || null)) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || c[3] > 0) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const root = document.querySelector('stream-rag-chat').shadowRoot;
  const out = [];
  for (const sel of ['.q', '.s', '.chip', '.sources h3', '.sources li', '.sources code',
                     '.refusal .msg', '.side', 'textarea', 'button.primary', '.withheld']) {
    for (const el of root.querySelectorAll(sel)) {
      const a = lum(parse(getComputedStyle(el).color).slice(0, 3)), b = lum(background(el));
      out.push([sel, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)]);
    }
  }
  return out;
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_text_meets_wcag_aa_contrast_in_light_and_dark(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page, scheme: Literal["light", "dark"]
) -> None:
    page.emulate_media(color_scheme=scheme)
    with running_stack(tmp_path / "d", minilm) as stack:
        stack.upload("a.md", b"The Pro plan costs 20 dollars per month.")
        stack.upload("b.md", b"The Pro plan costs 25 dollars per month.")
        stack.upload("policy.md", POLICY)
        page.goto(stack.url + "/")
        ask(page, "Refunds for annual plans?")
        wait_done(page)
        ask(page, "How much does the Pro plan cost per month?")
        wait_done(page, 2)
        ratios = page.evaluate(CONTRAST_JS)
        background = page.locator(CHAT).evaluate(
            "w => getComputedStyle(w.shadowRoot.querySelector('.root')).backgroundColor"
        )
    checked = {sel for sel, _ in ratios}
    assert {".q", ".s", ".chip", ".refusal .msg", ".side", "textarea"} <= checked
    low = [(sel, round(r, 2)) for sel, r in ratios if r < 4.5]
    assert low == []
    assert (background == "rgb(255, 255, 255)") == (scheme == "light")
