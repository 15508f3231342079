"""The widget's Markdown subset against hostile markup, in Chromium: whatever an answer or a
document says, only the allowed elements and attributes are made, links are http(s) or mailto
with rel=noopener, no script runs, and no character of HTML is lost (it is shown as text)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse
from starlette.routing import Route

from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import STATIC_DIR
from stream_rag.model.llm import OpenAIChatModel

from .browser import CHAT, ask, wait_done
from .helpers import running_server
from .test_browser_visitor import scripted_llm, visitor_site

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

HOSTILE = [
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=2">',
    "[click](javascript:window.__pwned=3)",
    "[data](data:text/html,<script>window.__pwned=4</script>)",
    "[ok](https://shop.example/a?b=1)",
    "[mail](mailto:help@shop.example)",
    '" onmouseover="window.__pwned=5',
    "<a href=javascript:window.__pwned=6>x</a>",
    "**",
    "*",
    "_",
    "__",
    "`",
    "[",
    "](",
    ")",
    "&lt;b&gt;",
    "<b>bold</b>",
    "<svg/onload=window.__pwned=7>",
    "\n",
    "\n\n",
    "1. ",
    "- ",
    "# ",
    "```",
    "    ",
    "gift",
    "wrapping",
    "4.99",
    " ",
]
TAGS = {"SPAN", "STRONG", "EM", "CODE", "A", "P", "UL", "OL", "LI", "H3", "H4", "PRE", "MARK"}
ATTRIBUTES = {
    *("class", "href", "target", "rel", "start", "role", "tabindex", "title"),
    *("data-index", "data-n", "data-url", "data-start", "data-end", "aria-label"),
}

# Renders `text` as an answer's sentence (of `kind`) and as a Markdown and an HTML document in
# the reader; returns what was made.
RENDER_JS = """
([text, kind]) => {
  const w = document.querySelector("stream-rag-chat");
  const turn = w.newTurn("q");
  turn.handle({ name: "sources", data: JSON.stringify({ blocks: [] }), id: "a1.1" });
  turn.handle({ name: "sentence", id: "a1.2", data: JSON.stringify({ index: 0, text, kind,
    citations: [{ n: 1, doc_id: "doc_1", version: 1, name: "x.md",
                  url: "/v1/documents/doc_1/versions/1/content" }] }) });
  const md = document.createElement("div");
  w.render(md, { media_type: "text/markdown", text, passage: { start: 0, end: 5 } });
  const html = document.createElement("div");
  w.render(html, { media_type: "text/html", text, passage: { start: 0, end: 5 } });
  const roots = [turn.body, md, html];
  const elements = roots.flatMap((r) => [...r.querySelectorAll("*")]);
  const body = turn.body.cloneNode(true);
  for (const chip of body.querySelectorAll(".chip")) chip.remove();
  return {
    tags: [...new Set(elements.map((e) => e.tagName))],
    attributes: [...new Set(elements.flatMap((e) => [...e.attributes].map((a) => a.name)))],
    links: elements.filter((e) => e.tagName === "A" && !e.classList.contains("chip"))
      .map((a) => [a.getAttribute("href"), a.getAttribute("rel")]),
    sentence: body.textContent,
    html: html.textContent,
    pwned: window.__pwned === undefined ? null : window.__pwned,
  };
}
"""


def _page_app() -> Starlette:
    async def page(request: Request) -> HTMLResponse:
        return HTMLResponse(
            "<!doctype html><html lang=en><head><meta charset=utf-8>"
            '<link rel="icon" href="data:,"></head><body>'
            '<stream-rag-chat data-collection="c"></stream-rag-chat>'
            '<script src="/static/widget.js"></script></body></html>'
        )

    async def widget(request: Request) -> FileResponse:
        return FileResponse(Path(STATIC_DIR) / "widget.js", media_type="text/javascript")

    return Starlette(routes=[Route("/", page), Route("/static/widget.js", widget)])


@pytest.fixture
def widget_page(context: BrowserContext) -> Iterator[Page]:
    with running_server(_page_app()) as url:
        page = context.new_page()
        page.goto(url + "/")
        page.locator(f"{CHAT} textarea").wait_for()
        yield page


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pieces=st.lists(st.sampled_from(HOSTILE), min_size=1, max_size=14),
    kind=st.sampled_from(["sentence", "list_item", "heading", "code"]),
)
# A fence with no line break took the rest of the line as its info string: the text vanished.
@example(pieces=["```", "<script>window.__pwned=1</script>"], kind="code")
# ... and with one, the rest of the fence's line was read as its info string: it vanished too.
@example(pieces=["```", "<script>window.__pwned=1</script>", "\n"], kind="code")
def test_hostile_markup_never_becomes_html(widget_page: Page, pieces: list[str], kind: str) -> None:
    text = "".join(pieces)
    made: dict[str, Any] = widget_page.evaluate(RENDER_JS, [text, kind])
    assert made["pwned"] is None
    assert set(made["tags"]) <= TAGS, made["tags"]
    assert set(made["attributes"]) <= ATTRIBUTES, made["attributes"]
    for href, rel in made["links"]:
        assert re.match(r"(https?:|mailto:)", href), href
        assert "noopener" in rel
    # HTML is shown as the text it is: no "<" is lost (a link's hidden URL cannot hold one).
    assert made["sentence"].count("<") == text.count("<")
    assert made["html"].count("<") == text.count("<")


HOSTILE_DOC = (
    "Gift wrapping costs 4.99 dollars <img src=x onerror=window.__pwned=1> per parcel.\n\n"
    "See [the guide](javascript:window.__pwned=2) or [our page](https://shop.example/wrap).\n"
)


def test_a_hostile_document_is_inert_in_answers_and_in_the_reader(
    tmp_path: Path, minilm: MiniLMEmbedder, context: BrowserContext
) -> None:
    answer = "Gift wrapping costs 4.99 dollars <img src=x onerror=window.__pwned=1> per parcel. [1]"
    model = scripted_llm(answer)
    with (
        running_server(model) as llm,
        visitor_site(tmp_path, minilm, model=OpenAIChatModel(f"{llm}/v1", "scripted")) as (
            shop,
            stack,
            _,
        ),
    ):
        # Plain text keeps the markup as it is (Markdown extraction drops inline HTML).
        stack.upload("wrapping.txt", HOSTILE_DOC.encode(), collection="support")
        page = context.new_page()
        page.goto(shop + "/")
        ask(page, "How much does gift wrapping cost?")
        t = wait_done(page)
        assert t.locator(".s").count() == 1, t.inner_text()
        assert "<img src=x onerror=window.__pwned=1>" in t.locator(".s").first.inner_text()
        assert t.locator("img").count() == 0
        t.locator(".chip").first.click()
        reader = page.locator(f"{CHAT} .reader")
        reader.locator(".cited").first.wait_for()
        # A text file is shown as its text: its markup, links included, is only text.
        assert reader.locator(".doc a").count() == 0
        assert "[the guide](javascript:window.__pwned=2)" in reader.locator(".doc").inner_text()
        assert "<img src=x onerror=window.__pwned=1>" in reader.locator(".doc").inner_text()
        assert reader.locator("img").count() == 0
        assert page.evaluate("window.__pwned === undefined")
        assert json.dumps(page.evaluate("document.title")) == '"Host page"'
