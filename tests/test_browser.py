"""The chat widget and the page in a real browser: Debian's Chromium driven by Playwright,
against real uvicorn servers (the API and the scripted fake model).

Without Chromium (or the playwright package) these tests skip locally with a message saying
what to install; under CI=true they fail instead, so CI can never pass without running them.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncGenerator, Callable, Iterator, Sequence
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import httpx
import pytest

from stream_rag.access.keys import KeyStore
from stream_rag.answer.prompt import Message
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.model.fake import FakeConfig, create_fake_llm
from stream_rag.model.llm import ModelError, OpenAIChatModel

from .browser import (
    HTTP_TIMEOUT_S,
    MISSING,
    MUTATION_LOG_JS,
    chromium_path,
    host_page_app,
    in_ci,
    launch,
    running_stack,
)
from .helpers import running_server

if TYPE_CHECKING:
    from playwright.sync_api import (
        Browser,
        BrowserContext,
        ConsoleMessage,
        Dialog,
        Error,
        FilePayload,
        Page,
    )

POLICY = (
    b"Refunds for annual plans are possible within 30 days. Refunds for monthly plans are not "
    b"possible. Refunds for team plans cover unused seats within 30 days."
)
CHAT = "stream-rag-chat"


def _unavailable(reason: str) -> None:
    if in_ci():
        pytest.fail(f"CI=true but the browser tests cannot run: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One Chromium for the module (the sync API's event loop must not outlive it: other
    modules run their own loops in this thread)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is missing: pip install -e '.[test]'")
    path = chromium_path()
    if path is None:
        _unavailable(MISSING)
    assert path is not None
    with sync_playwright() as playwright:
        chromium = launch(playwright, path)
        yield chromium
        chromium.close()


class Console:
    """Console errors and uncaught exceptions of every page in a context."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.allowed: list[re.Pattern[str]] = []
        self.dialogs: list[str] = []

    def watch(self, page: Page) -> None:
        page.on("console", self._message)
        page.on("pageerror", self._uncaught)
        page.on("dialog", self._dialog)

    def _message(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def _uncaught(self, error: Error) -> None:
        self.errors.append(f"uncaught: {error}")

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def unexpected(self) -> list[str]:
        return [e for e in self.errors if not any(p.search(e) for p in self.allowed)]


@pytest.fixture
def console() -> Console:
    return Console()


@pytest.fixture
def context(browser: Browser, console: Console) -> Iterator[BrowserContext]:
    ctx = browser.new_context(viewport={"width": 1200, "height": 900})
    ctx.on("page", console.watch)
    yield ctx
    ctx.close()
    assert console.unexpected() == [], "console errors in the page"
    assert console.dialogs == [], "a dialog opened (script ran?)"


@pytest.fixture
def page(context: BrowserContext) -> Page:
    return context.new_page()


def ask(page: Page, question: str) -> None:
    box = page.locator(f"{CHAT} textarea")
    box.fill(question)
    box.press("Enter")


def turn(page: Page, n: int = 1) -> Any:
    return page.locator(f"{CHAT} .turn").nth(n - 1)


def wait_done(page: Page, n: int = 1) -> Any:
    """The n-th turn once it is over: its copy button (done), refusal or error is shown."""
    t = turn(page, n)
    t.locator(".actions, .refusal, .error").first.wait_for()
    return t


# -- answers ----------------------------------------------------------------------------------


def test_answer_grows_sentence_by_sentence_and_shown_sentences_never_change(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page
) -> None:
    with running_stack(tmp_path / "d", minilm, FakeConfig(tokens_per_second=8)) as stack:
        stack.upload("policy.md", POLICY)
        page.goto(stack.url + "/")
        page.evaluate(MUTATION_LOG_JS)
        ask(page, "Refunds for annual, monthly and team plans?")
        page.locator(f"{CHAT} .s").first.wait_for()
        # On screen while the model is still writing: the answer is streamed, not buffered.
        assert stack.fake.state.stats.completed == 0
        assert page.locator(f"{CHAT} .actions").count() == 0
        t = wait_done(page)
        assert stack.fake.state.stats.completed == 1
        shown = t.locator(".s").evaluate_all("els => els.map((e) => e.textContent)")
        log = page.evaluate("window.__srwLog")
    assert len(shown) >= 2
    assert log["changed"] == []
    assert [a["index"] for a in log["added"]] == list(range(len(shown)))
    # Every sentence reads exactly as it did the moment it appeared (chips included).
    assert [a["text"] for a in log["added"]] == shown
    assert log["added"][0]["t"] < log["added"][-1]["t"] < log["done"][0]


def test_citation_click_downloads_the_cited_version_of_same_name_documents(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext, page: Page
) -> None:
    falcon = b"Falcon boats are painted blue by the harbour crew."
    osprey = b"Osprey kayaks are painted green at the river workshop."
    questions = ("What colour are Falcon boats painted?", "Where are Osprey kayaks painted?")
    with running_stack(tmp_path / "d", minilm) as stack:
        docs = {stack.upload("test1.txt", data)["id"]: data for data in (falcon, osprey)}
        page.goto(stack.url + "/")
        seen: dict[str, str] = {}  # doc id -> the short sha256 its Sources entry shows
        for n, question in enumerate(questions, start=1):
            # One question per document: the generator quotes the best-supported block.
            ask(page, question)
            t = wait_done(page, n)
            source = t.locator(".sources li")
            assert source.count() == 1
            text = source.inner_text()
            assert "test1.txt" in text
            assert "v1" in text
            chip = t.locator(".chip").first
            with (
                context.expect_event("response", lambda r: "/content" in r.url) as response,
                context.expect_page() as popup,
            ):
                chip.click()
            doc_id = re.search(r"/v1/documents/(doc_\w+)/versions/1/content$", response.value.url)
            assert doc_id is not None, response.value.url
            assert response.value.body() == docs[doc_id.group(1)]
            seen[doc_id.group(1)] = re.findall(r"sha256 (\w+)", text)[0]
            popup.value.close()
    # Both documents were cited, each visibly its own source (same name, different sha256).
    assert set(seen) == set(docs)
    assert len(set(seen.values())) == 2


def test_a_conversation_keeps_its_turns_and_sends_them_as_history(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page
) -> None:
    with running_stack(tmp_path / "d", minilm) as stack:
        stack.upload("policy.md", POLICY)
        page.goto(stack.url + "/")
        ask(page, "Refunds for annual plans?")
        first = wait_done(page).locator(".s").evaluate_all("els => els.map((e) => e.dataset.index)")
        answer = " ".join(
            turn(page, 1)
            .locator(".s")
            .evaluate_all("els => els.map((e) => e.firstChild.textContent)")
        )
        with page.expect_request(lambda r: r.url.endswith("/v1/chat")) as request:
            ask(page, "And for monthly plans?")
        second = wait_done(page, 2)
        body = json.loads(request.value.post_data or "{}")
        response = request.value.response()
    assert response is not None
    assert response.status == 200
    assert body["question"] == "And for monthly plans?"
    assert body["history"] == [{"question": "Refunds for annual plans?", "answer": answer}]
    assert answer.startswith("Refunds for annual plans are possible within 30 days.")
    # The first turn is still on screen, untouched, above the second.
    assert turn(page, 1).locator(".s").count() == len(first)
    assert second.locator(".q").inner_text() == "And for monthly plans?"


def test_conflicting_sources_are_shown_side_by_side(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page
) -> None:
    with running_stack(tmp_path / "d", minilm) as stack:
        a = stack.upload("pricing.md", b"The Pro plan costs 20 dollars per month.")
        b = stack.upload("prices-2025.md", b"The Pro plan costs 25 dollars per month.")
        page.goto(stack.url + "/")
        ask(page, "How much does the Pro plan cost per month?")
        refusal = wait_done(page).locator(".refusal")
        assert refusal.get_attribute("data-reason") == "conflicting_sources"
        sides = refusal.locator(".side")
        assert sides.count() == 2
        left, right = sides.nth(0).bounding_box(), sides.nth(1).bounding_box()
        assert left is not None
        assert right is not None
        assert left["x"] + left["width"] <= right["x"]  # side by side, not stacked
        assert abs(left["y"] - right["y"]) < 1
        text = " ".join(sides.all_inner_texts())
        for doc, value in ((a, "20 dollars"), (b, "25 dollars")):
            assert doc["name"] in text
            assert sides.locator("a", has_text=doc["name"]).get_attribute("href") == (
                f"{stack.url}/v1/documents/{doc['id']}/versions/1/content"
            )
            assert value in " ".join(sides.locator("mark").all_inner_texts())
        assert sides.nth(0).locator("blockquote").inner_text() != ""
        assert "v1" in text
        assert stack.fake.state.stats.requests == 0  # refused before any model call


def test_stop_aborts_and_the_server_closes_the_model_stream(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page
) -> None:
    with running_stack(tmp_path / "d", minilm, FakeConfig(tokens_per_second=5)) as stack:
        stack.upload("policy.md", POLICY)
        page.goto(stack.url + "/")
        ask(page, "Refunds for annual, monthly and team plans?")
        page.locator(f"{CHAT} .s").first.wait_for()
        stop = page.locator(f"{CHAT} button.stop")
        stopped_at = time.monotonic()
        stop.click()
        turn(page).locator(".status", has_text="Stopped").wait_for()
        stats = stack.fake.state.stats
        deadline = time.monotonic() + 10
        while not stats.disconnected:
            assert time.monotonic() < deadline, "the model stream was never closed"
            time.sleep(0.01)
        assert stats.completed == 0
        assert stats.disconnect_times[0] - stopped_at < 1.0
        assert stop.is_hidden()
        assert page.locator(f"{CHAT} button[type=submit]").is_visible()


class BreaksOnceModel:
    """The fake model over HTTP, except that its first answer breaks off after a few pieces."""

    name = "breaks-once"

    def __init__(self, inner: OpenAIChatModel) -> None:
        self.inner = inner
        self.calls = 0

    async def stream(self, messages: Sequence[Message]) -> AsyncGenerator[str, None]:
        self.calls += 1
        first = self.calls == 1
        async with aclosing(self.inner.stream(messages)) as pieces:
            count = 0
            async for piece in pieces:
                if first and count == 3:
                    raise ModelError("the model connection broke off")
                count += 1
                yield piece

    async def aclose(self) -> None:
        await self.inner.aclose()


def test_error_shows_a_message_and_retry_asks_again(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page
) -> None:
    with running_server(create_fake_llm()) as llm_url:
        model = BreaksOnceModel(OpenAIChatModel(f"{llm_url}/v1", "fake"))
        with running_stack(tmp_path / "d", minilm, model=model) as stack:
            stack.upload("policy.md", POLICY)
            page.goto(stack.url + "/")
            ask(page, "Refunds for annual plans?")
            error = wait_done(page).locator(".error")
            assert "the model connection broke off (upstream_error)" in error.inner_text()
            error.get_by_role("button", name="Retry").click()
            second = wait_done(page, 2)
            assert second.locator(".q").inner_text() == "Refunds for annual plans?"
            assert second.locator(".s").count() >= 1
            assert second.locator(".error").count() == 0
            assert model.calls == 2
            # The failed turn stays as it was, above the retried one.
            assert turn(page, 1).locator(".error").count() == 1


def test_lost_connection_shows_a_message_and_retry_reaches_the_server(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page, console: Console
) -> None:
    with running_stack(tmp_path / "d", minilm) as stack:
        stack.upload("policy.md", POLICY)
        page.goto(stack.url + "/")
        # The network drops the request: the browser's own failure, not a server reply.
        page.route("**/v1/chat", lambda route: route.abort("connectionreset"))
        console.allowed.append(re.compile(r"ERR_CONNECTION_RESET"))
        ask(page, "Refunds for annual plans?")
        error = wait_done(page).locator(".error")
        assert "Could not reach the server" in error.inner_text()
        assert stack.fake.state.stats.requests == 0
        page.unroute("**/v1/chat")
        error.get_by_role("button", name="Retry").click()
        assert wait_done(page, 2).locator(".s").count() >= 1
        assert stack.fake.state.stats.requests == 1


def test_untrusted_text_is_shown_as_text_never_as_html(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page, console: Console
) -> None:
    xss = "<img src=x onerror=alert(1)>"
    with running_stack(tmp_path / "d", minilm) as stack:
        stack.upload(
            "zebra.txt",
            b"Zebra tea is brewed with <b>cold</b> mountain water <script>alert(2)</script>.",
            name=xss,
        )
        page.goto(stack.url + "/")
        ask(page, "How is zebra tea brewed?")
        t = wait_done(page)
        assert xss in t.locator(".sources").inner_text()
        assert "<b>cold</b>" in t.locator(".s").first.inner_text()
        assert page.locator("li.doc .name").first.inner_text() == xss
        chip = t.locator(".chip").first
        chip.hover()
        assert xss in page.locator(f"{CHAT} .tip").inner_text()
        counts = page.evaluate(
            "() => { const r = document.querySelector('stream-rag-chat').shadowRoot;"
            " return [document.querySelectorAll('img, b, script:not([src])').length,"
            " r.querySelectorAll('img, b, script').length]; }"
        )
    assert counts == [0, 0]
    assert console.dialogs == []


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
        assert "Could not reach the server" in error.inner_text()
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
        # The link cannot carry the key, so the widget fetches the bytes with it and saves them.
        with page.expect_download() as download:
            t.locator(".chip").first.click()
        assert Path(download.value.path()).read_bytes() == POLICY
        assert download.value.suggested_filename == "policy.md"
        assert doc["id"] in str(t.locator(".chip").first.get_attribute("href"))
        # The same key on a page that asks another collection is refused, and says so.
        console.allowed.append(re.compile(r"status of 403"))
        other = context.new_page()
        other.goto(intranet + "/")
        ask(other, "Refunds for annual plans?")
        error = wait_done(other).locator(".error")
        assert "(forbidden)" in error.inner_text()
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


def test_eventsource_gets_one_answer_and_stops_after_done(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page
) -> None:
    with running_stack(tmp_path / "d", minilm) as stack:
        stack.upload("policy.md", POLICY)
        statuses: list[int] = []
        page.on("response", lambda r: statuses.append(r.status) if "/v1/chat?" in r.url else None)
        page.goto(stack.url + "/")
        page.evaluate(
            """(url) => {
              const log = window.__es = { names: [], serverErrors: 0, networkErrors: 0 };
              const source = new EventSource(url);
              for (const name of ['sources', 'sentence', 'done'])
                source.addEventListener(name, () => log.names.push(name));
              source.addEventListener('error', (e) => {
                if (e.data !== undefined) log.serverErrors += 1; else log.networkErrors += 1;
              });
              log.source = source;
            }""",
            f"{stack.url}/v1/chat?q=Refunds%20for%20annual%20plans%3F",
        )
        # CLOSED (2) only after the reconnect got 204; a re-answer would keep it open.
        page.wait_for_function("() => window.__es.source.readyState === 2", timeout=30_000)
        log = page.evaluate("({...window.__es, source: null})")
    assert log["names"].count("done") == 1
    assert log["names"].count("sources") == 1
    assert log["serverErrors"] == 0
    assert statuses == [200, 204]
    assert stack.fake.state.stats.requests == 1


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
        with context.expect_event("response", lambda r: "/content" in r.url) as response:
            with context.expect_page() as popup:
                page.keyboard.press("Enter")
            popup.value.close()
        assert response.value.url.endswith(f"/v1/documents/{doc['id']}/versions/1/content")
        page.bring_to_front()
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
    ctx = browser.new_context(viewport={"width": 400, "height": 900})
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


# -- the page ---------------------------------------------------------------------------------


def payload(name: str, data: bytes) -> FilePayload:
    return {"name": name, "mimeType": "text/plain", "buffer": data}


def test_documents_panel_upload_versions_download_delete(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page, console: Console
) -> None:
    with running_stack(tmp_path / "d", minilm) as stack:
        page.goto(stack.url + "/")
        page.locator("#documents .none").wait_for()
        # Drag and drop a file onto the drop zone.
        page.evaluate(
            """() => { const data = new DataTransfer();
              data.items.add(new File(['Kestrel ferries leave at noon.'], 'ferry.txt',
                                      { type: 'text/plain' }));
              const drop = document.getElementById('drop');
              drop.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true }));
              drop.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true })); }"""
        )
        row = page.locator("li.doc", has_text="ferry.txt")
        row.locator(".badge.ready").wait_for()
        upload = page.locator("#uploads li").first
        assert "stored as v1" in upload.inner_text()
        assert upload.locator("progress").evaluate("p => p.value === p.max")
        # A new version through the row's own file input; its status goes to ready live.
        row.locator("input[type=file]").set_input_files(
            files=[payload("ferry.txt", b"Noon and six.")]
        )
        row.locator(".version", has_text="v2").locator(".badge.ready").wait_for()
        with page.expect_download() as download:
            row.locator(".version a", has_text="v1").click()
        assert Path(download.value.path()).read_bytes() == b"Kestrel ferries leave at noon."
        # A rejected upload says why (the browser logs the 400 itself).
        console.allowed.append(re.compile(r"status of 400 \(Bad Request\)"))
        page.locator("#file").set_input_files(files=[payload("empty.txt", b"")])
        page.locator("#uploads li.error", has_text="empty_file").wait_for()
        # Delete asks first; Cancel keeps the document.
        row.get_by_role("button", name="Delete").click()
        row.get_by_role("button", name="Cancel").click()
        assert httpx.get(f"{stack.url}/v1/documents", timeout=HTTP_TIMEOUT_S).json()["documents"]
        row.get_by_role("button", name="Delete").click()
        row.get_by_role("button", name="Delete for good").click()
        page.locator("#documents .none").wait_for()
        assert (
            httpx.get(f"{stack.url}/v1/documents", timeout=HTTP_TIMEOUT_S).json()["documents"] == []
        )
        # The collection picker scopes the chat and the list.
        picker = page.locator("#collection")
        picker.fill("manuals")
        picker.dispatch_event("change")
        page.locator("#documents .none", has_text="manuals").wait_for()
        assert page.locator(CHAT).get_attribute("data-collection") == "manuals"


def test_withheld_sentences_are_counted_with_reasons(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page
) -> None:
    with running_stack(tmp_path / "d", minilm, FakeConfig(changed_number=1.0)) as stack:
        stack.upload("policy.md", POLICY)
        page.goto(stack.url + "/")
        ask(page, "Refunds for annual, monthly and team plans?")
        t = wait_done(page)
        withheld = t.locator(".withheld")
        summary = withheld.locator("summary").inner_text()
        assert re.fullmatch(r"\d+ sentences? withheld: not supported by the sources", summary)
        count = int(summary.split()[0])
        reasons = withheld.locator("li")
        assert reasons.count() == count
        assert reasons.first.is_hidden()
        withheld.locator("summary").click()
        assert reasons.first.is_visible()
        assert "number or date" in reasons.first.inner_text()
        # Nothing survived the gate: that refusal has its own look, and no sentence is shown.
        assert t.locator(".refusal").get_attribute("data-reason") == "no_supported_sentences"
        assert t.locator(".s").count() == 0
        ask(page, "What is the boiling point of liquid nitrogen on Mars?")
        refusal = wait_done(page, 2).locator(".refusal")
        assert refusal.get_attribute("data-reason") == "low_evidence"
        assert "does not seem to cover" in refusal.inner_text()


def test_page_on_a_server_with_keys_asks_for_one_and_then_works(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page, console: Console
) -> None:
    admin = KeyStore(tmp_path / "d").create(name="ops", scopes=["admin"])[1]
    with running_stack(tmp_path / "d", minilm) as stack:
        stack.headers["Authorization"] = f"Bearer {admin}"
        stack.upload("policy.md", POLICY)
        console.allowed.append(re.compile(r"status of 401"))
        page.goto(stack.url + "/")
        page.locator("#status", has_text="needs an API key").wait_for()
        key = page.locator("#key")
        key.fill(admin)
        key.dispatch_event("change")
        page.locator("li.doc", has_text="policy.md").wait_for()
        assert page.locator("#status").inner_text() == ""
        ask(page, "Refunds for annual plans?")
        assert wait_done(page).locator(".s").count() >= 1
        with page.expect_download() as download:
            page.locator("li.doc .version a", has_text="v1").click()
        assert Path(download.value.path()).read_bytes() == POLICY
