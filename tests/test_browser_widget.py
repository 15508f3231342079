"""The widget where a site puts it: behind a reverse proxy's path prefix, inside a transformed
container, and over a conversation whose answers did not all finish."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from stream_rag.access.guard import security_headers
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import STATIC_DIR
from stream_rag.model.fake import FakeConfig

from .browser import (
    CHAT,
    POLICY,
    Console,
    ask,
    host_page_app,
    running_stack,
    turn,
    wait_done,
)
from .helpers import running_server

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page


def _opens(context: BrowserContext, link: Any) -> tuple[str, bytes]:
    """Middle-click `link` (a plain link to a document; a plain click opens the reader): the
    URL of the tab it opened and the text that tab shows."""
    with context.expect_page() as popup:
        link.click(button="middle")
    tab = popup.value
    tab.wait_for_load_state()
    url, body = tab.url, tab.locator("body").inner_text().encode()
    tab.close()
    return url, body


def test_behind_a_path_prefix_every_request_keeps_it(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext
) -> None:
    # A proxy serves the API at https://host/rag/ (and only there): the script's URL, data-api
    # and the page at /rag/ all say so, and every request must go under /rag.
    api: dict[str, str] = {}
    requested: list[str] = []
    context.on("request", lambda r: requested.append(r.url))
    with (
        running_server(host_page_app(api)) as plain,
        running_server(host_page_app(api, data_api=True)) as explicit,
        running_stack(
            tmp_path / "d", minilm, prefix="/rag", cors_origins=(plain, explicit)
        ) as stack,
    ):
        api["url"] = stack.url
        assert stack.url.endswith("/rag")
        stack.upload("policy.md", POLICY)
        origin = stack.url.removesuffix("/rag")
        for host in (plain, explicit):  # the API from the script's URL, then data-api
            page = context.new_page()
            page.goto(host + "/")
            ask(page, "Refunds for annual plans?")
            t = wait_done(page)
            assert t.locator(".error").count() == 0, t.inner_text()
            url, body = _opens(context, t.locator(".chip").first)
            assert url.startswith(stack.url + "/v1/documents/"), url
            assert body.strip() == POLICY
            link = t.locator(".sources a").first.get_attribute("href")
            assert str(link).startswith(stack.url + "/v1/documents/"), link
            # The reader's request for the version's text keeps the prefix too.
            t.locator(".chip").first.click()
            page.locator(f"{CHAT} .reader .cited").first.wait_for()
            page.keyboard.press("Escape")
        # The page the server itself serves, at the prefix: its styles, scripts, documents
        # list, answers and downloads.
        page = context.new_page()
        page.goto(stack.url + "/")
        page.locator("#documents li.doc", has_text="policy.md").wait_for()
        ask(page, "Refunds for annual plans?")
        t = wait_done(page)
        assert t.locator(".error").count() == 0, t.inner_text()
        url, body = _opens(context, t.locator(".chip").first)
        assert url.startswith(stack.url + "/v1/documents/"), url
        assert body.strip() == POLICY
    to_api = [u for u in requested if u.startswith(origin + "/")]
    assert to_api, requested
    assert [u for u in to_api if not u.startswith(stack.url + "/")] == []


def test_the_page_at_a_prefix_without_its_slash_works(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext
) -> None:
    # A proxy that also maps https://host/rag (no slash) to the server's page: the page's
    # relative URLs resolved against the origin's root (/static/app.js), outside the prefix,
    # and it came up without styles, scripts or chat.
    requested: list[str] = []
    context.on("request", lambda r: requested.append(r.url))
    with running_stack(tmp_path / "d", minilm, prefix="/rag") as stack:
        stack.upload("policy.md", POLICY)
        page = context.new_page()
        page.goto(stack.url)
        page.locator("#documents li.doc", has_text="policy.md").wait_for()
        assert page.url == stack.url + "/"
        ask(page, "Refunds for annual plans?")
        t = wait_done(page)
        assert t.locator(".error").count() == 0, t.inner_text()
        url, body = _opens(context, t.locator(".chip").first)
        assert url.startswith(stack.url + "/v1/documents/"), url
        assert body.strip() == POLICY
    origin = stack.url.removesuffix("/rag")
    outside = [u for u in requested if u.startswith(origin) and not u.startswith(stack.url)]
    assert outside == []


def test_the_pages_inline_script_is_the_one_its_csp_allows() -> None:
    # The server's CSP allows the page's one inline script by its hash: edited, it is blocked.
    page = (STATIC_DIR / "index.html").read_text()
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    csp = dict(security_headers(Settings(data_dir=Path("unused"))))["content-security-policy"]
    assert f"script-src 'self' 'sha256-{digest}';" in csp


def test_a_stopped_answer_goes_to_history_as_its_question_alone(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page
) -> None:
    # Stopped midway, an answer is a truncated one: sent as if complete, the model would take
    # it for what was said. Its question still gives the follow-up its subject.
    bodies: list[Any] = []
    with running_stack(tmp_path / "d", minilm, FakeConfig(tokens_per_second=5)) as stack:
        stack.upload("policy.md", POLICY)
        page.goto(stack.url + "/")
        page.on(
            "request",
            lambda r: bodies.append(r.post_data_json) if r.url.endswith("/v1/chat") else None,
        )
        ask(page, "Refunds for annual, monthly and team plans?")
        turn(page).locator(".s").first.wait_for()
        page.locator(f"{CHAT} button.stop").click()
        turn(page).locator(".status", has_text="Stopped").wait_for()
        ask(page, "And for monthly plans?")
        turn(page, 2).locator(".s").first.wait_for()
    assert len(bodies) == 2
    assert bodies[1]["history"] == [{"question": "Refunds for annual, monthly and team plans?"}]


@pytest.mark.parametrize("popover", [True, False], ids=["popover", "no-popover"])
def test_the_passage_card_sits_at_its_chip_inside_a_transformed_container(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page, popover: bool
) -> None:
    # A launcher that slides the chat in (transform) is the containing block of anything
    # position: fixed inside it: the card landed offset by the transform, scaled with it.
    # Browsers before the Popover API (Safari < 17) take the measured correction.
    if not popover:
        page.add_init_script("delete HTMLElement.prototype.showPopover")
    api: dict[str, str] = {}
    launcher = (
        '<div style="transform: translate(150px, 60px) scale(0.8); transform-origin: 0 0;'
        ' width: 700px">{}</div>'
    )
    with (
        running_server(host_page_app(api, wrap=launcher)) as host,
        running_stack(tmp_path / "d", minilm, cors_origins=(host,)) as stack,
    ):
        api["url"] = stack.url
        stack.upload("policy.md", POLICY)
        page.goto(host + "/")
        ask(page, "Refunds for annual plans?")
        chip = wait_done(page).locator(".chip").first
        chip.hover()
        tip = page.locator(f"{CHAT} .tip")
        tip.wait_for()
        c, t = chip.bounding_box(), tip.bounding_box()
    assert c is not None
    assert t is not None
    assert 0 <= t["y"] - (c["y"] + c["height"]) <= 10, (c, t)
    assert abs(t["x"] - c["x"]) <= 2, (c, t)
    if popover:  # in the top layer, its text is read at the page's size, not shrunk
        assert t["width"] > 200, t


def test_an_answer_that_breaks_off_says_the_part_shown_is_incomplete(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page
) -> None:
    # The model's stream broke off after a sentence: the error said what failed, but not that
    # the sentences above it are only part of the answer (a stopped one says so).
    bodies: list[Any] = []
    with running_stack(tmp_path / "d", minilm, FakeConfig(error_after=14)) as stack:
        stack.upload("policy.md", POLICY)
        page.goto(stack.url + "/")
        page.on(
            "request",
            lambda r: bodies.append(r.post_data_json) if r.url.endswith("/v1/chat") else None,
        )
        ask(page, "Refunds for annual, monthly and team plans?")
        t = wait_done(page)
        error = t.locator(".error")
        assert t.locator(".s").count() >= 1
        assert error.count() == 1, t.inner_text()
        assert "The answer above is incomplete" in error.inner_text(), error.inner_text()
        # Nor is it history: the next question goes without it.
        ask(page, "And for monthly plans?")
        wait_done(page, 2)
    assert "history" not in bodies[-1], bodies[-1]


def test_retry_while_another_answer_streams_is_explained_then_works(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page, console: Console
) -> None:
    # Retry on an earlier failed turn while an answer streams did nothing, silently.
    with running_stack(tmp_path / "d", minilm, FakeConfig(tokens_per_second=5)) as stack:
        stack.upload("policy.md", POLICY)
        page.goto(stack.url + "/")
        page.route("**/v1/chat", lambda route: route.abort("connectionreset"))
        console.allowed.append(re.compile(r"ERR_CONNECTION_RESET"))
        ask(page, "Refunds for annual plans?")
        retry = wait_done(page).get_by_role("button", name="Retry")
        page.unroute("**/v1/chat")
        ask(page, "Refunds for annual, monthly and team plans?")
        turn(page, 2).locator(".s").first.wait_for()
        retry.click()
        hint = page.locator(f"{CHAT} .hint")
        hint.wait_for()
        assert "Stop" in hint.inner_text()
        assert retry.is_enabled()
        page.locator(f"{CHAT} button.stop").click()
        hint.wait_for(state="hidden")
        retry.click()
        assert wait_done(page, 3).locator(".q").inner_text() == "Refunds for annual plans?"


def test_data_theme_sets_light_or_dark_whatever_the_system_prefers(
    tmp_path: Path, minilm: MiniLMEmbedder, browser: Browser
) -> None:
    # A light site on a system in dark mode showed a dark chat in its white page: the widget
    # followed prefers-color-scheme only.
    api: dict[str, str] = {}
    background = f"() => getComputedStyle(document.querySelector('{CHAT}').shadowRoot"
    background += ".querySelector('.root')).backgroundColor"
    seen: dict[tuple[str, str], str] = {}
    with (
        running_server(host_page_app(api, attrs='data-theme="light"')) as light,
        running_server(host_page_app(api, attrs='data-theme="dark"')) as dark,
        running_server(host_page_app(api)) as auto,
        running_stack(tmp_path / "d", minilm, cors_origins=(light, dark, auto)) as stack,
    ):
        api["url"] = stack.url
        for scheme in ("light", "dark"):
            context = browser.new_context(color_scheme=scheme)
            try:
                page = context.new_page()
                for name, host in (("light", light), ("dark", dark), ("auto", auto)):
                    page.goto(host + "/")
                    page.locator(f"{CHAT} textarea").wait_for()
                    seen[scheme, name] = str(page.evaluate(background))
            finally:
                context.close()
    white, black = "rgb(255, 255, 255)", "rgb(27, 29, 33)"
    assert seen == {
        ("light", "light"): white,
        ("light", "dark"): black,
        ("light", "auto"): white,
        ("dark", "light"): white,
        ("dark", "dark"): black,
        ("dark", "auto"): black,
    }
