"""Real servers and Debian's Chromium for the browser tests, the screenshots and the widget
benchmark: the API and a scripted model in uvicorn threads, the page driven by Playwright.

The browser tests' fixtures are here too (conftest.py exposes them): without Chromium or the
playwright package they skip with a message saying what to install; under CI=true they fail,
so CI can never pass without running them."""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from stream_rag.access.keys import KeyStore
from stream_rag.config import Settings
from stream_rag.http.app import create_app
from stream_rag.model.fake import FakeConfig, create_fake_llm
from stream_rag.model.llm import ChatModel, OpenAIChatModel

from .helpers import HTTP_GUARD_S, running_server

if TYPE_CHECKING:
    from playwright.sync_api import (
        Browser,
        BrowserContext,
        ConsoleMessage,
        Dialog,
        Error,
        Page,
        Playwright,
    )

    from stream_rag.embed.backends import Embedder

# Flags for a quiet, deterministic headless Chromium that never phones home.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Uploads extract text in worker processes, slow to start on a busy machine.
# Two suites on two cores once took a new tab past Playwright's 30 s default to load. The waits
# are for events that do come, so a roomy bound changes only how long a real failure takes.
PAGE_TIMEOUT_MS = 120_000
MISSING = (
    "Chromium not found on PATH: the browser tests need Debian's chromium "
    "(apt-get install -y chromium); .ci/run installs it"
)


def chromium_path() -> str | None:
    return shutil.which("chromium")


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def launch(playwright: Playwright, path: str) -> Browser:
    return playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=True)


@dataclass
class Stack:
    """A running API (`url`) answering with a scripted model (`fake`, its stats in
    `fake.state.stats`)."""

    url: str
    fake: Starlette
    # Sent with every upload and poll (an admin key once keys exist).
    headers: dict[str, str] = field(default_factory=dict)

    def upload(
        self, filename: str, data: bytes, *, name: str | None = None, collection: str = "default"
    ) -> dict[str, Any]:
        """Store a document and wait until it is indexed; returns the document."""
        fields = {"collection": collection, **({"name": name} if name else {})}
        response = httpx.post(
            f"{self.url}/v1/documents",
            files={"file": (filename, data)},
            data=fields,
            headers=self.headers,
            timeout=HTTP_GUARD_S,
        )
        assert response.status_code == 201, response.text
        doc_id = response.json()["document"]["id"]
        return self.wait_ready(doc_id)

    def wait_ready(self, doc_id: str) -> dict[str, Any]:
        deadline = time.monotonic() + 60
        while True:
            document: dict[str, Any] = httpx.get(
                f"{self.url}/v1/documents/{doc_id}", headers=self.headers, timeout=HTTP_GUARD_S
            ).json()
            if document["versions"][-1]["status"] != "indexing":
                assert document["versions"][-1]["status"] == "ready", document
                return document
            assert time.monotonic() < deadline, f"{doc_id} never got indexed"
            time.sleep(0.02)


@contextmanager
def running_stack(
    data_dir: Path,
    embedder: Embedder,
    fake: FakeConfig | None = None,
    *,
    model: ChatModel | None = None,
    prefix: str = "",
    **settings: Any,
) -> Iterator[Stack]:
    """The scripted model and the API, each a real uvicorn server in a thread; with `prefix`
    ("/rag"), the API is reached under it, as behind a reverse proxy (`url` ends with it)."""
    fake_app = create_fake_llm(fake or FakeConfig())
    with ExitStack() as stack:
        llm_url = stack.enter_context(running_server(fake_app))
        chat_model = model or OpenAIChatModel(f"{llm_url}/v1", "fake")
        app = create_app(
            Settings(data_dir=data_dir, sse_ping_s=1.0, **settings),
            embedder=embedder,
            model=chat_model,
        )
        api_url = stack.enter_context(running_server(behind_prefix(app, prefix) if prefix else app))
        yield Stack(api_url + prefix, fake_app)


def behind_prefix(app: ASGIApp, prefix: str) -> ASGIApp:
    """`app` under `prefix`, as a reverse proxy serves it (nginx `location /rag/ { proxy_pass
    http://api/; }`): the prefix is stripped before the app sees the path, so the app never
    knows it; the prefix alone is the app's `/` too (a proxy mapping `/rag` to `/`), and
    anything outside the prefix is the proxy's 404."""

    async def proxy(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await app(scope, receive, send)
            return
        path: str = scope["path"]
        if path == prefix:
            path += "/"
        if not path.startswith(prefix + "/"):
            await PlainTextResponse("not found (outside the proxy's prefix)", 404)(
                scope, receive, send
            )
            return
        rest = path[len(prefix) :]
        await app({**scope, "path": rest, "raw_path": rest.encode()}, receive, send)

    return proxy


def host_page_app(
    api: dict[str, str],
    collection: str = "default",
    key: str | None = None,
    css: str = "",
    *,
    data_api: bool = False,
    wrap: str = "{}",
    attrs: str = "",
) -> Starlette:
    """Another site's page that embeds the widget with one script tag; `api["url"]` is read
    per request, so the page's server can start before the API it points at. With `data_api`
    the tag names the API as an operator would ("https://host/rag/"); it goes into `wrap`
    ("<div ...>{}</div>": the widget lands in that container); `attrs` are the tag's others."""

    async def page(request: Request) -> HTMLResponse:
        script = (
            f'<script src="{api["url"]}/static/widget.js" data-collection="{collection}"'
            + (f' data-key="{key}"' if key else "")
            + (f' data-api="{api["url"]}/"' if data_api else "")
            + f" {attrs} defer></script>"
        )
        return HTMLResponse(
            "<!doctype html><html lang=en><head><meta charset=utf-8><title>Host page</title>"
            '<link rel="icon" href="data:,">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<style>{css}</style></head>"
            "<body><h1>A shop</h1><p>Questions? Ask below.</p>"
            + wrap.replace("{}", script)
            + "</body></html>"
        )

    return Starlette(routes=[Route("/", page)])


@contextmanager
def keyed_shop(tmp_path: Path, embedder: Embedder) -> Iterator[tuple[str, Stack]]:
    """A shop's page embedding the widget with a chat key for the `support` collection; the
    stack's own requests carry an admin key."""
    store = KeyStore(tmp_path / "d")
    admin = store.create(name="ops", scopes=["admin"])[1]
    chat = store.create(name="site", scopes=["chat"], collections=["support"])[1]
    api: dict[str, str] = {}
    with (
        running_server(host_page_app(api, "support", chat)) as shop,
        running_stack(tmp_path / "d", embedder, cors_origins=(shop,)) as stack,
    ):
        api["url"] = stack.url
        stack.headers["Authorization"] = f"Bearer {admin}"
        yield shop, stack


# Records every sentence the widget adds and every change to a shown one (window.__srwLog).
MUTATION_LOG_JS = (Path(__file__).parent / "mutation_log.js").read_text()


# -- the browser tests' fixtures and helpers ---------------------------------------------

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
    from playwright.sync_api import expect

    expect.set_options(timeout=PAGE_TIMEOUT_MS)
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
        # A tab showing a document asks its origin for /favicon.ico (none here: 404) unless it
        # is closed first; the pages' own requests are what the tests watch.
        if message.location.get("url", "").endswith("/favicon.ico"):
            return
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


def new_context(browser: Browser, **options: Any) -> BrowserContext:
    """A context whose waits allow for a busy machine (PAGE_TIMEOUT_MS)."""
    ctx = browser.new_context(**options)
    ctx.set_default_timeout(PAGE_TIMEOUT_MS)
    ctx.set_default_navigation_timeout(PAGE_TIMEOUT_MS)
    return ctx


@pytest.fixture
def context(browser: Browser, console: Console) -> Iterator[BrowserContext]:
    ctx = new_context(browser, viewport={"width": 1200, "height": 900})
    ctx.on("page", console.watch)
    yield ctx
    ctx.close()
    assert console.unexpected() == [], f"console errors in the page: {console.unexpected()}"
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
