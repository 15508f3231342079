"""The widget as a support chat's user has it: on a phone, where a growing answer must not push
the question box out of sight, and on a connection that goes silent mid-answer."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, StreamingResponse
from starlette.routing import Route

from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import STATIC_DIR
from stream_rag.model.fake import FakeConfig

from .browser import (
    CHAT,
    POLICY,
    Console,
    ask,
    host_page_app,
    new_context,
    running_stack,
    turn,
    wait_done,
)
from .helpers import running_server

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


def _box_bottom(page: Page) -> float:
    """Where the question box ends, in the viewport's pixels."""
    return float(
        page.evaluate(
            f"document.querySelector('{CHAT}').shadowRoot.querySelector('textarea')"
            ".getBoundingClientRect().bottom"
        )
    )


def test_on_a_phone_a_growing_answer_keeps_the_question_box_in_view(
    tmp_path: Path, minilm: MiniLMEmbedder, browser: Browser, console: Console
) -> None:
    # The log grows up to 70% of the screen as an answer comes: the box below it (and the
    # answer's end above it) went down out of sight, and the page stayed where it was.
    context = new_context(
        browser, viewport={"width": 360, "height": 640}, has_touch=True, is_mobile=True
    )
    context.on("page", console.watch)
    api: dict[str, str] = {}
    shop = '<div style="height: 500px">Our bikes, our shop, our hours.</div>{}<p>Footer</p>'
    try:
        with (
            running_server(host_page_app(api, wrap=shop)) as host,
            running_stack(
                tmp_path / "d", minilm, FakeConfig(sentences=8), cors_origins=(host,)
            ) as stack,
        ):
            api["url"] = stack.url
            stack.upload("policy.md", POLICY)
            page = context.new_page()
            page.goto(host + "/")
            box = page.locator(f"{CHAT} textarea")
            box.fill("Refunds for annual, monthly and team plans?")  # scrolls it into view
            assert _box_bottom(page) <= 640
            box.press("Enter")
            wait_done(page)
            assert turn(page).locator(".s").count() >= 3
            assert _box_bottom(page) <= 640, "the answer pushed the question box out of sight"
            # A reader who scrolls the page away while an answer comes is left there.
            ask(page, "Refunds for team plans?")
            turn(page, 2).locator(".s").first.wait_for()
            page.evaluate("window.scrollTo(0, 0)")
            wait_done(page, 2)
            assert page.evaluate("window.scrollY") == 0
    finally:
        context.close()
    assert console.unexpected() == []


def silent_api(cut: threading.Event | None = None) -> Starlette:
    """An API whose answer sends its sources and one sentence, then nothing, and never ends:
    a connection that died without a close (a phone changing networks). With `cut`, once it
    is set the connection is cut instead (the response's chunked body never ends properly)."""
    block = {"n": 1, "doc_id": "doc_1", "version": 1, "sha256": "ab" * 32, "name": "policy.md"}
    block |= {"url": "/v1/documents/doc_1/versions/1/content", "text": POLICY.decode()}
    sentence = {"index": 0, "text": "Refunds for annual plans are possible within 30 days."}
    sentence |= {"citations": [block], "kind": "sentence"}

    async def chat(request: Request) -> StreamingResponse:
        async def events() -> AsyncIterator[str]:
            yield f"event: sources\ndata: {json.dumps({'blocks': [block]})}\n\n"
            yield f"event: sentence\ndata: {json.dumps(sentence)}\n\n"
            if cut is not None:
                await anyio.to_thread.run_sync(cut.wait)
                raise ConnectionError("the line went down")
            await anyio.sleep_forever()

        return StreamingResponse(events(), media_type="text/event-stream")

    async def page(request: Request) -> HTMLResponse:
        return HTMLResponse(
            '<!doctype html><html lang=en><head><link rel="icon" href="data:,">'
            '<title>Shop</title></head><body><script src="/static/widget.js" defer></script>'
        )

    async def widget(request: Request) -> FileResponse:
        return FileResponse(STATIC_DIR / "widget.js")

    return Starlette(
        routes=[
            Route("/", page),
            Route("/static/widget.js", widget),
            Route("/v1/chat", chat, methods=["POST"]),
        ]
    )


def test_an_answer_whose_connection_goes_silent_says_so_and_can_be_retried(
    browser: Browser, console: Console
) -> None:
    # A connection that dies without a close (no FIN, no reset) left "Writing a verified
    # answer…" on screen for good: the server's keep-alive comments (every 15 s) stop coming,
    # and nothing noticed. The page's clock is advanced; nothing waits out the minute.
    context = new_context(browser)
    context.on("page", console.watch)
    try:
        with running_server(silent_api()) as api:
            page = context.new_page()
            page.clock.install()
            page.goto(api + "/")
            ask(page, "Refunds for annual plans?")
            t = turn(page)
            t.locator(".s").first.wait_for()
            page.clock.run_for("01:30")
            error = t.locator(".error")
            error.wait_for()
            assert re.search(r"incomplete.*Nothing came for a minute", error.inner_text(), re.S), (
                error.inner_text()
            )
            assert t.get_by_role("button", name="Try again").is_enabled()
            assert page.locator(f"{CHAT} button.stop").is_hidden()
    finally:
        context.close()
    assert console.unexpected() == []


def test_an_answer_cut_off_midway_says_the_connection_was_lost(
    browser: Browser, console: Console
) -> None:
    # A stream cut after its first sentence said "Could not reach the server: ... or this site
    # may not use it": the server was reached, and the site does use it.
    context = new_context(browser)
    context.on("page", console.watch)
    console.allowed.append(re.compile(r"ERR_INCOMPLETE_CHUNKED_ENCODING"))
    try:
        cut = threading.Event()
        with running_server(silent_api(cut)) as api:
            try:
                page = context.new_page()
                page.goto(api + "/")
                ask(page, "Refunds for annual plans?")
                turn(page).locator(".s").first.wait_for()
            finally:
                cut.set()
            text = wait_done(page).locator(".error").inner_text()
            assert "The answer above is incomplete. The connection was lost." in text
            assert "may not use it" not in text
    finally:
        context.close()
    assert console.unexpected() == []
