"""The chat widget's answers in a real browser: Debian's Chromium driven by Playwright, against
real uvicorn servers (the API and the scripted fake model).

Chromium, its pages and the shared helpers are in browser.py (no Chromium: skipped, or failed
under CI=true).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING

from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.model.fake import FakeConfig, create_fake_llm
from stream_rag.model.llm import ModelError, OpenAIChatModel
from stream_rag.types import Message

from .browser import (
    CHAT,
    MUTATION_LOG_JS,
    POLICY,
    Console,
    ask,
    running_stack,
    turn,
    wait_done,
)
from .helpers import HANG_GUARD_S, running_server

if TYPE_CHECKING:
    from playwright.sync_api import (
        BrowserContext,
        Page,
    )


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
            # A click opens the reader; its Download is the cited version's bytes.
            t.locator(".chip").first.click()
            download = page.locator(f"{CHAT} .reader a.download")
            with (
                context.expect_event("response", lambda r: "/content" in r.url) as response,
                context.expect_page() as popup,
            ):
                download.click()
            page.keyboard.press("Escape")
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
    # The model pauses ten minutes after the first sentence (piece 20 of 34) and an asker who
    # leaves keeps the answer going as long: only the Stop (its DELETE) can close the model
    # stream within the hang guard, however slow the machine.
    slow = FakeConfig(tokens_per_second=20, stall_after=20, stall_s=600)
    with running_stack(tmp_path / "d", minilm, slow, resume_grace_s=600) as stack:
        stack.upload("policy.md", POLICY)
        page.goto(stack.url + "/")
        ask(page, "Refunds for annual, monthly and team plans?")
        page.locator(f"{CHAT} .s").first.wait_for()
        stop = page.locator(f"{CHAT} button.stop")
        stop.click()
        turn(page).locator(".status", has_text="Stopped").wait_for()
        stats = stack.fake.state.stats
        deadline = time.monotonic() + HANG_GUARD_S
        while not stats.disconnected:
            assert time.monotonic() < deadline, "the model stream was never closed"
            time.sleep(0.01)
        assert stats.completed == 0
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
        # The page's own inline script (its loader in <head>) is not the documents'.
        counts = page.evaluate(
            "() => { const r = document.querySelector('stream-rag-chat').shadowRoot;"
            " return [document.querySelectorAll('img, b, body script:not([src])').length,"
            " r.querySelectorAll('img, b, script').length]; }"
        )
    assert counts == [0, 0]
    assert console.dialogs == []


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
        page.wait_for_function("() => window.__es.source.readyState === 2")
        log = page.evaluate("({...window.__es, source: null})")
    assert log["names"].count("done") == 1
    assert log["names"].count("sources") == 1
    assert log["serverErrors"] == 0
    assert statuses == [200, 204]
    assert stack.fake.state.stats.requests == 1


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
