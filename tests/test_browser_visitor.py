"""The widget as a shop's visitors meet it (issue 31), in Chromium: the bubble, team texts and
the hand-off link, friendly errors, the conversation kept across reloads, the reader at the
cited passage, and feedback reaching the Insights report."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from stream_rag.access.keys import KeyStore
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.model.llm import OpenAIChatModel

from .browser import (
    CHAT,
    POLICY,
    Console,
    Stack,
    ask,
    host_page_app,
    running_stack,
    turn,
    wait_done,
)
from .helpers import make_pdf, running_server

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, ConsoleMessage, Page

    from stream_rag.embed.backends import Embedder

PREFACE = "\n\n".join(
    f"## Section {i}\n\nThe shop keeps note {i} about opening hours in winter and summer."
    for i in range(1, 30)
)
WRAPPING_MD = (
    "# Gift services\n\n"
    + PREFACE
    + "\n\n## Wrapping\n\nGift wrapping costs **4.99 dollars** per parcel, see the "
    "[gift guide](https://shop.example/guide). The code `GIFT5` takes *five percent* off it.\n\n"
    "To order gift wrapping:\n\n1. Choose the wrapping paper in the basket.\n"
    "2. Add a greeting card to the parcel.\n3. Pay for the wrapping at checkout.\n"
)
FALCON_HTML = (
    "<html><body>"
    + "".join(f"<p>Harbour note {i} lists the tides of the week.</p>" for i in range(40))
    + "<p>Falcon boats are painted blue by the harbour crew.</p></body></html>"
).encode()
# Page 1 fills whole chunks (300 characters) of its own: the cited one starts on page 2.
OWL_PAGES = [
    " ".join(f"Garden path lamp model {n} comes in a matt colour finish." for n in range(10, 20)),
    "Owl lanterns run for twelve hours on one charge of their battery.",
]


def scripted_llm(reply: str) -> Starlette:
    """An OpenAI-compatible model that streams `reply` (word by word) to every request."""

    async def completions(request: Request) -> Response:
        body = await request.json()
        if not body.get("stream"):
            message = {"role": "assistant", "content": reply}
            return JSONResponse({"choices": [{"index": 0, "message": message}]})

        async def chunks() -> AsyncIterator[str]:
            for word in re.findall(r"\S*\s*", reply):
                if word:
                    delta = {"choices": [{"index": 0, "delta": {"content": word}}]}
                    yield f"data: {json.dumps(delta)}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(chunks(), media_type="text/event-stream")

    async def models(request: Request) -> JSONResponse:
        return JSONResponse({"data": [{"id": "scripted", "object": "model"}]})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/v1/models", models),
        ]
    )


@contextmanager
def visitor_site(
    tmp_path: Path, embedder: Embedder, attrs: str = "", **settings: Any
) -> Iterator[tuple[str, Stack, str]]:
    """A shop's page embedding the widget with a chat key for `support` and `attrs`; the
    stack's requests carry an admin key, which is returned too."""
    store = KeyStore(tmp_path / "d")
    admin = store.create(name="ops", scopes=["admin"])[1]
    chat = store.create(name="site", scopes=["chat"], collections=["support"])[1]
    api: dict[str, str] = {}
    page_app = host_page_app(api, "support", chat, attrs=attrs)
    with (
        running_server(page_app) as shop,
        running_stack(tmp_path / "d", embedder, cors_origins=(shop,), **settings) as stack,
    ):
        api["url"] = stack.url
        stack.headers["Authorization"] = f"Bearer {admin}"
        yield shop, stack, admin


def _in_view(page: Page, inner: str, outer: str) -> bool:
    """Whether the element `inner` is within the visible box of its scroller `outer`."""
    a = page.locator(inner).first.bounding_box()
    b = page.locator(outer).first.bounding_box()
    assert a is not None
    assert b is not None
    return a["y"] < b["y"] + b["height"] and a["y"] + min(a["height"], 20) > b["y"]


def test_the_bubble_opens_closes_and_shows_an_unread_dot(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext
) -> None:
    attrs = 'data-mode="bubble" data-suggestions="How much is gift wrapping?|Do you ship abroad?"'
    with visitor_site(tmp_path, minilm, attrs) as (shop, stack, _):
        stack.upload("wrapping.md", WRAPPING_MD.encode(), collection="support")
        page = context.new_page()
        page.goto(shop + "/")
        launcher = page.locator(f"{CHAT} .launcher")
        panel = page.locator(f"{CHAT} .root")
        launcher.wait_for()
        assert panel.is_hidden()
        box = launcher.bounding_box()
        assert box is not None
        assert box["x"] > 1000  # bottom right corner of the 1200 x 900 viewport
        assert box["y"] > 800
        assert launcher.get_attribute("aria-expanded") == "false"
        launcher.click()
        assert panel.is_visible()
        assert launcher.get_attribute("aria-expanded") == "true"
        assert page.evaluate(f"document.querySelector('{CHAT}').shadowRoot.activeElement.id") == "q"
        # The greeting and a suggested question, which asks when clicked.
        assert "Ask a question" in page.locator(f"{CHAT} .greeting").inner_text()
        page.locator(f"{CHAT} .suggest button", has_text="gift wrapping").click()
        t = wait_done(page)
        assert t.locator(".q").inner_text() == "How much is gift wrapping?"
        assert "4.99" in t.locator(".s").first.inner_text()
        # Escape closes the panel and gives focus back to the launcher.
        page.keyboard.press("Escape")
        assert panel.is_hidden()
        active = f"document.querySelector('{CHAT}').shadowRoot.activeElement.className"
        assert page.evaluate(active) == "launcher"
        # An answer that comes while the panel is closed puts a dot on the launcher.
        dot = page.locator(f"{CHAT} .launcher .dot")
        assert dot.is_hidden()
        page.evaluate(f"document.querySelector('{CHAT}').ask('Is gift wrapping 4.99 dollars?')")
        dot.wait_for()
        launcher.click()
        assert dot.is_hidden()
        wait_done(page, 2)
        page.locator(f"{CHAT} .head .x").click()
        assert panel.is_hidden()


def test_bubble_on_a_phone_fills_the_screen(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext
) -> None:
    with visitor_site(tmp_path, minilm, 'data-mode="bubble"') as (shop, _stack, _):
        page = context.new_page()
        page.set_viewport_size({"width": 400, "height": 800})
        page.goto(shop + "/")
        page.locator(f"{CHAT} .launcher").click()
        box = page.locator(f"{CHAT} .root").bounding_box()
        assert box is not None
        assert (box["x"], box["y"], box["width"], box["height"]) == (0, 0, 400, 800)
        assert page.evaluate("document.documentElement.scrollWidth") <= 400


STEPS_MD = (
    "To order gift wrapping:\n\n1. Choose the wrapping paper in the basket.\n"
    "2. Add a greeting card to the parcel.\n3. Pay for the wrapping at checkout.\n\n"
    "The code `GIFT5` takes *five percent* off the wrapping.\n"
)
STEPS_ANSWER = (
    "To order gift wrapping: [1]\n\n1. Choose the wrapping paper in the basket. [1]\n"
    "2. Add a greeting card to the parcel. [1]\n3. Pay for the wrapping at checkout. [1]\n\n"
    "The code `GIFT5` takes *five percent* off the wrapping. [1]"
)


def test_answers_render_markdown_and_details_stay_hidden(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext
) -> None:
    with (
        running_server(scripted_llm(STEPS_ANSWER)) as llm,
        visitor_site(tmp_path, minilm, model=OpenAIChatModel(f"{llm}/v1", "scripted")) as (
            shop,
            stack,
            _,
        ),
    ):
        stack.upload("wrapping.md", STEPS_MD.encode(), collection="support")
        page = context.new_page()
        page.goto(shop + "/")
        ask(page, "How do I order gift wrapping?")
        t = wait_done(page)
        steps = t.locator(".body ol li")
        assert steps.count() == 3, t.inner_html()
        assert steps.nth(1).inner_text().startswith("Add a greeting card to the parcel.")
        assert t.locator(".body ol").get_attribute("start") == "1"
        assert t.locator(".body code").inner_text() == "GIFT5"
        assert t.locator(".body em").inner_text() == "five percent"
        assert "`" not in t.locator(".body").inner_text()
        # Developer details are off: no hashes, versions, ids or withheld counts.
        text = t.inner_text()
        assert "sha256" not in text
        assert " · v1" not in text
        assert t.locator(".withheld").count() == 0
        assert t.locator(".sources li").first.get_attribute("title") is None


def test_team_texts_and_the_hand_off_link(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext
) -> None:
    attrs = (
        'data-text-refusal="We could not find that in our help pages." '
        'data-handoff-url="https://shop.example/contact" data-text-handoff="Write to us"'
    )
    with visitor_site(tmp_path, minilm, attrs) as (shop, stack, _):
        stack.upload("policy.md", POLICY, collection="support")
        page = context.new_page()
        page.goto(shop + "/")
        ask(page, "What is the capital of Peru?")
        refusal = wait_done(page).locator(".refusal")
        assert refusal.locator(".msg").inner_text() == "We could not find that in our help pages."
        handoff = refusal.locator(".handoff a")
        assert handoff.inner_text() == "Write to us"
        assert handoff.get_attribute("href") == "https://shop.example/contact"
        assert "noopener" in (handoff.get_attribute("rel") or "")
        assert "evidence" not in refusal.inner_text().lower()


def test_german_is_shipped(tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext) -> None:
    with visitor_site(tmp_path, minilm, 'data-lang="de"') as (shop, stack, _):
        stack.upload("policy.md", POLICY, collection="support")
        page = context.new_page()
        page.goto(shop + "/")
        assert page.locator(f"{CHAT} .greeting").inner_text().startswith("Hallo!")
        assert page.locator(f"{CHAT} button.primary").inner_text() == "Fragen"
        ask(page, "What is the capital of Peru?")
        msg = wait_done(page).locator(".refusal .msg").inner_text()
        assert msg == "Das kann ich aus unseren Dokumenten leider nicht beantworten."


def test_a_rate_limit_says_when_to_try_again_and_the_console_keeps_the_apis_words(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext, console: Console
) -> None:
    console.allowed.append(re.compile(r"status of 429 \(Too Many Requests\)"))
    warnings: list[str] = []
    with visitor_site(tmp_path, minilm, visitor_rpm=1) as (shop, stack, _):
        stack.upload("policy.md", POLICY, collection="support")
        page = context.new_page()

        def warned(message: ConsoleMessage) -> None:
            if message.type == "warning":
                warnings.append(message.text)

        page.on("console", warned)
        page.goto(shop + "/")
        ask(page, "Refunds for annual plans?")
        wait_done(page)
        ask(page, "Refunds for monthly plans?")
        error = wait_done(page, 2).locator(".error span").inner_text()
        # The page is another origin: Retry-After reaches it only because CORS exposes it.
        assert re.fullmatch(r"Too many questions right now, try again in \d+ s\.", error), error
        assert "rate_limited" not in error
        assert any("too many requests from this visitor" in w for w in warnings), warnings


def test_reload_keeps_the_conversation_and_delete_conversation_forgets_it(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext
) -> None:
    with visitor_site(tmp_path, minilm) as (shop, stack, _):
        stack.upload("policy.md", POLICY, collection="support")
        page = context.new_page()
        page.goto(shop + "/")
        ask(page, "Refunds for annual plans?")
        first = wait_done(page).locator(".a").inner_text()
        page.reload()
        again = wait_done(page)
        assert again.locator(".q").inner_text() == "Refunds for annual plans?"
        assert again.locator(".a").inner_text() == first
        # A follow-up after the reload still sends the earlier turn as history.
        with page.expect_request("**/v1/chat") as request:
            ask(page, "And for monthly plans?")
        body = request.value.post_data_json
        assert body is not None
        assert body["history"][0]["question"] == "Refunds for annual plans?"
        wait_done(page, 2)
        logged = httpx.get(
            f"{stack.url}/v1/insights/questions", headers=stack.headers, timeout=30
        ).json()["questions"]
        assert {q["conversation"] for q in logged} == {body["conversation"]}
        # New conversation starts afresh in the tab; the team's log keeps the questions.
        page.locator(f"{CHAT} .head button.new").click()
        assert page.locator(f"{CHAT} .turn").count() == 0
        page.reload()
        page.locator(f"{CHAT} .greeting").wait_for()
        assert page.locator(f"{CHAT} .turn").count() == 0
        logged = httpx.get(
            f"{stack.url}/v1/insights/questions", headers=stack.headers, timeout=30
        ).json()["questions"]
        assert len(logged) == 2
        # Delete conversation also deletes the server's copy of its questions.
        ask(page, "Refunds for team plans?")
        wait_done(page)
        with page.expect_request("**/v1/chat") as again:
            ask(page, "And for annual plans?")
        third = again.value.post_data_json
        assert third is not None
        assert third["conversation"] != body["conversation"]
        wait_done(page, 2)
        with page.expect_response("**/v1/conversations/*") as deleted:
            page.get_by_role("button", name="Delete conversation").click()
        assert deleted.value.json()["deleted"] == 2
        assert page.locator(f"{CHAT} .turn").count() == 0
        logged = httpx.get(
            f"{stack.url}/v1/insights/questions", headers=stack.headers, timeout=30
        ).json()["questions"]
        assert {q["conversation"] for q in logged} == {body["conversation"]}


def test_the_reader_opens_each_kind_at_the_cited_passage(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext
) -> None:
    with visitor_site(tmp_path, minilm, chunk_chars=300, chunk_overlap_chars=0) as (
        shop,
        stack,
        _,
    ):
        stack.upload("wrapping.md", WRAPPING_MD.encode(), collection="support")
        stack.upload("falcon.html", FALCON_HTML, collection="support")
        stack.upload("lanterns.pdf", make_pdf(OWL_PAGES), collection="support")
        page = context.new_page()
        page.goto(shop + "/")
        reader = page.locator(f"{CHAT} .reader")
        cases = [
            ("How much does gift wrapping cost per parcel?", "wrapping.md", "4.99 dollars"),
            ("What colour are Falcon boats painted?", "falcon.html", "painted blue"),
            ("How long do Owl lanterns run on one charge?", "lanterns.pdf", "twelve hours"),
        ]
        for n, (question, name, passage) in enumerate(cases, start=1):
            ask(page, question)
            chip = wait_done(page, n).locator(".chip").first
            chip.click()
            reader.locator(".cited").first.wait_for()
            assert reader.locator("h2").inner_text().startswith(name)
            cited = reader.locator(".cited").all_inner_texts()
            assert any(passage in c for c in cited), cited
            assert _in_view(page, f"{CHAT} .reader .cited", f"{CHAT} .reader .doc")
            # A PDF's passage names its page (the second here).
            if name.endswith(".pdf"):
                assert reader.locator("h2").inner_text().endswith("· Page 2")
            # The whole document is there, rendered: Markdown headings are headings.
            if name.endswith(".md"):
                assert reader.locator(".doc h3", has_text="Wrapping").count() == 1
                assert reader.locator(".doc strong", has_text="4.99 dollars").count() == 1
            # Download stays one click away; Escape goes back to the chip.
            assert reader.locator("a.download").count() == 1
            page.keyboard.press("Escape")
            assert reader.is_hidden()


def test_feedback_is_sent_and_listed_in_insights(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext, console: Console
) -> None:
    # The team's page asks for its documents before the key is typed in.
    console.allowed.append(re.compile(r"status of 401 \(Unauthorized\)"))
    with visitor_site(tmp_path, minilm) as (shop, stack, admin):
        stack.upload("policy.md", POLICY, collection="support")
        page = context.new_page()
        page.goto(shop + "/")
        ask(page, "Refunds for annual plans?")
        t = wait_done(page)
        t.get_by_role("button", name="Not helpful").click()
        t.locator(".comment textarea").fill("It did not say how to ask for one.")
        with page.expect_response("**/v1/feedback") as sent:
            t.locator(".comment button").click()
        assert sent.value.status == 200
        t.locator(".thanks").wait_for()
        assert t.get_by_role("button", name="Not helpful").get_attribute("aria-pressed") == "true"
        # The team's page, with its admin key, lists it in Insights.
        insights = context.new_page()
        insights.goto(stack.url + "/")
        insights.locator("#key").fill(admin)
        insights.locator("#key").press("Enter")
        insights.locator("#insights-tab").click()
        down = insights.locator("#insights .rated-down li").first
        down.wait_for()
        assert "Refunds for annual plans?" in down.inner_text()
        assert "It did not say how to ask for one." in down.inner_text()
        assert "policy.md" in down.inner_text()
        assert turn(page).locator(".thanks").count() == 1
        # The team deletes that visitor's conversation (their questions are personal data).
        with insights.expect_response("**/v1/conversations/*") as deleted:
            down.get_by_role("button", name="Delete conversation").click()
        assert deleted.value.json()["deleted"] == 1
        insights.locator("#status", has_text="Deleted conversation").wait_for()
        insights.locator("#insights .rated-down .none").wait_for()
