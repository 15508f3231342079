"""The widget through a support chat's session in a real browser: where keyboard focus goes
while an answer streams and after, the log following a growing answer, and a keyed citation
download that fails."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.model.fake import FakeConfig

from .browser import (
    CHAT,
    POLICY,
    Console,
    ask,
    keyed_shop,
    new_context,
    running_stack,
    turn,
    wait_done,
)
from .helpers import HTTP_GUARD_S

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page, Request


def _deep_active(page: Page) -> str:
    """The focused element through shadow roots, as 'tag.class' ('body.' when none)."""
    return str(
        page.evaluate(
            """() => { let a = document.activeElement;
              while (a && a.shadowRoot && a.shadowRoot.activeElement)
                a = a.shadowRoot.activeElement;
              return a ? a.tagName.toLowerCase() + '.' + a.className : ''; }"""
        )
    )


def test_focus_moves_from_ask_to_stop_and_back_to_the_question_box(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page, console: Console
) -> None:
    # Ask and Stop swap places while an answer streams: a keyboard user on the one that is
    # hidden must land on the other (or the question box), never on the page's body.
    with running_stack(tmp_path / "d", minilm, FakeConfig(tokens_per_second=5)) as stack:
        stack.upload("policy.md", POLICY)
        page.goto(stack.url + "/")
        page.locator(f"{CHAT} textarea").fill("Refunds for annual, monthly and team plans?")
        page.locator(f"{CHAT} button[type=submit]").focus()
        page.keyboard.press("Enter")
        page.locator(f"{CHAT} .s").first.wait_for()
        assert _deep_active(page) == "button.stop"
        page.keyboard.press("Enter")
        turn(page).locator(".status", has_text="Stopped").wait_for()
        # The turn is over once Ask is back (its `finally`), not when its status says so.
        page.locator(f"{CHAT} button[type=submit]").wait_for(state="visible")
        assert _deep_active(page) == "textarea."
        # Retry from the keyboard likewise: the retried turn's Stop, then the question box.
        # The route is in place before the question is typed: no request can pass it.
        page.route("**/v1/chat", lambda route: route.abort("connectionreset"))
        console.allowed.append(re.compile(r"ERR_CONNECTION_RESET"))
        page.keyboard.type("Refunds for annual plans?")
        page.keyboard.press("Enter")
        second = wait_done(page, 2)
        assert second.locator(".error").count() == 1, second.inner_text()
        page.unroute("**/v1/chat")
        second.locator(".error button").focus()
        page.keyboard.press("Enter")
        wait_done(page, 3)
        assert _deep_active(page) in ("button.stop", "textarea.")


def test_the_log_follows_a_growing_answer_unless_scrolled_up(
    tmp_path: Path, minilm: MiniLMEmbedder, browser: Browser, console: Console
) -> None:
    ctx = new_context(browser, viewport={"width": 400, "height": 500})
    ctx.on("page", console.watch)
    try:
        with running_stack(tmp_path / "d", minilm, FakeConfig(tokens_per_second=40)) as stack:
            stack.upload("policy.md", POLICY)
            page = ctx.new_page()
            page.goto(stack.url + "/")
            log = page.locator(f"{CHAT} .log")
            for n in (1, 2):
                ask(page, "Refunds for annual, monthly and team plans?")
                wait_done(page, n)
            assert log.evaluate("l => l.scrollHeight > l.clientHeight + 50"), "log not full"
            # The end of the newest answer (its last button) is in view, without scrolling.
            copy = turn(page, 2).locator(".actions button").last
            inside = """([l, b]) => { const r = l.getBoundingClientRect(),
                  s = b.getBoundingClientRect(); return s.top >= r.top && s.bottom <= r.bottom; }"""
            assert page.evaluate(inside, [log.element_handle(), copy.element_handle()])
            # Scrolled up to read while an answer arrives, the reader stays there.
            ask(page, "Refunds for annual, monthly and team plans?")
            turn(page, 3).locator(".s").first.wait_for()
            log.evaluate("l => { l.scrollTop = 0; l.dispatchEvent(new Event('scroll')); }")
            wait_done(page, 3)
            assert log.evaluate("l => l.scrollTop") == 0
    finally:
        ctx.close()
    assert console.unexpected() == []


def test_a_keyed_citation_download_that_fails_says_so(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext, console: Console
) -> None:
    with keyed_shop(tmp_path, minilm) as (shop, stack):
        doc = stack.upload("policy.md", POLICY, collection="support")
        page = context.new_page()
        page.goto(shop + "/")
        ask(page, "Refunds for annual plans?")
        t = wait_done(page)
        # The operator deletes the document while the answer is on screen.
        gone = httpx.delete(
            f"{stack.url}/v1/documents/{doc['id']}", headers=stack.headers, timeout=HTTP_GUARD_S
        )
        assert gone.status_code in (200, 204), gone.text
        console.allowed.append(re.compile(r"status of 404"))
        # The reader says so in its place; the file itself (Ctrl+click), in the turn.
        t.locator(".chip").first.click()
        reader = page.locator(f"{CHAT} .reader .doc .error")
        reader.wait_for()
        assert reader.inner_text() == "This document is not available any more."
        page.keyboard.press("Escape")
        t.locator(".chip").first.click(modifiers=["ControlOrMeta"])
        note = t.locator(".status", has_text="Could not open")
        note.wait_for()
        assert "policy.md" in note.inner_text()
        assert "not available any more" in note.inner_text()


def test_a_question_over_the_limit_is_kept_and_explained_not_cut(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page
) -> None:
    with running_stack(tmp_path / "d", minilm) as stack:
        stack.upload("policy.md", POLICY)
        page.goto(stack.url + "/")
        box = page.locator(f"{CHAT} textarea")
        box.focus()
        pasted = "Refunds for annual plans? " + "x" * 4974
        page.keyboard.insert_text(pasted)
        page.keyboard.press("Enter")
        hint = page.locator(f"{CHAT} .hint")
        hint.wait_for()
        assert "5,000 characters" in hint.inner_text()
        assert "4,000" in hint.inner_text()
        assert box.input_value() == pasted
        assert page.locator(f"{CHAT} .turn").count() == 0
        assert stack.fake.state.stats.requests == 0
        # Shortened, it is asked and the explanation goes.
        box.fill("Refunds for annual plans?")
        box.press("Enter")
        assert wait_done(page).locator(".s").count() >= 1
        assert hint.is_hidden()


def test_a_long_conversation_sends_the_newest_turns_that_fit_the_history_limit(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page
) -> None:
    # Four long questions with their answers hold more than the server's 16,000 characters of
    # history: it refused the whole history, and the follow-up went without any.
    bodies: list[Any] = []
    with running_stack(tmp_path / "d", minilm) as stack:
        stack.upload("policy.md", POLICY)
        page.goto(stack.url + "/")

        def record(request: Request) -> None:
            if request.url.endswith("/v1/chat"):
                bodies.append(request.post_data_json)

        page.on("request", record)
        for n in range(1, 5):
            ask(page, (f"Question {n}: refunds for annual plans? " * 110)[:3990])
            assert wait_done(page, n).locator(".s").count() >= 1
        ask(page, "And for monthly plans?")
        assert wait_done(page, 5).locator(".error").count() == 0
    assert len(bodies) == 5
    history = bodies[-1]["history"]
    assert isinstance(history, list)
    total = sum(len(t["question"]) + len(t["answer"]) for t in history)
    assert 0 < total <= 16000, total
    assert history[-1]["question"].startswith("Question 4:")
    assert len(history) == 3, [(len(t["question"]), len(t["answer"])) for t in history]


def test_a_focused_citation_describes_its_passage_to_screen_readers(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page
) -> None:
    # The passage is in a tooltip shown on focus; a screen reader hears it only if the chip
    # points at it (aria-describedby), and only while it is this chip's.
    from playwright.sync_api import expect

    with running_stack(tmp_path / "d", minilm) as stack:
        stack.upload("policy.md", POLICY)
        page.goto(stack.url + "/")
        ask(page, "Refunds for annual plans?")
        chip = wait_done(page).locator(".chip").first
        expect(chip).to_have_accessible_name(re.compile(r"Source 1: policy\.md, version 1"))
        chip.focus()
        expect(chip).to_have_accessible_description(
            re.compile(r"policy\.md · version 1 .*Refunds for annual plans are possible")
        )
        page.locator(f"{CHAT} textarea").focus()
        expect(chip).to_have_accessible_description("")


def test_a_second_question_while_one_streams_is_kept_and_explained(
    tmp_path: Path, minilm: MiniLMEmbedder, page: Page
) -> None:
    with running_stack(tmp_path / "d", minilm, FakeConfig(tokens_per_second=5)) as stack:
        stack.upload("policy.md", POLICY)
        page.goto(stack.url + "/")
        ask(page, "Refunds for annual, monthly and team plans?")
        page.locator(f"{CHAT} .s").first.wait_for()
        ask(page, "And for monthly plans?")
        hint = page.locator(f"{CHAT} .hint")
        hint.wait_for()
        assert "Stop" in hint.inner_text()
        assert page.locator(f"{CHAT} textarea").input_value() == "And for monthly plans?"
        assert page.locator(f"{CHAT} .turn").count() == 1
        page.locator(f"{CHAT} button.stop").click()
        hint.wait_for(state="hidden")
        page.locator(f"{CHAT} textarea").press("Enter")
        assert wait_done(page, 2).locator(".q").inner_text() == "And for monthly plans?"
