"""Real servers and Debian's Chromium for the browser tests, the screenshots and the widget
benchmark: the API and a scripted model in uvicorn threads, the page driven by Playwright."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from stream_rag.config import Settings
from stream_rag.http.app import create_app
from stream_rag.model.fake import FakeConfig, create_fake_llm
from stream_rag.model.llm import ChatModel, OpenAIChatModel

from .helpers import running_server

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

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
HTTP_TIMEOUT_S = 60.0
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
            timeout=HTTP_TIMEOUT_S,
        )
        assert response.status_code == 201, response.text
        doc_id = response.json()["document"]["id"]
        return self.wait_ready(doc_id)

    def wait_ready(self, doc_id: str) -> dict[str, Any]:
        deadline = time.monotonic() + 60
        while True:
            document: dict[str, Any] = httpx.get(
                f"{self.url}/v1/documents/{doc_id}", headers=self.headers, timeout=HTTP_TIMEOUT_S
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
    **settings: Any,
) -> Iterator[Stack]:
    """The scripted model and the API, each a real uvicorn server in a thread."""
    fake_app = create_fake_llm(fake or FakeConfig())
    with ExitStack() as stack:
        llm_url = stack.enter_context(running_server(fake_app))
        chat_model = model or OpenAIChatModel(f"{llm_url}/v1", "fake")
        app = create_app(
            Settings(data_dir=data_dir, sse_ping_s=1.0, **settings),
            embedder=embedder,
            model=chat_model,
        )
        api_url = stack.enter_context(running_server(app))
        yield Stack(api_url, fake_app)


def host_page_app(
    api: dict[str, str], collection: str = "default", key: str | None = None, css: str = ""
) -> Starlette:
    """Another site's page that embeds the widget with one script tag; `api["url"]` is read
    per request, so the page's server can start before the API it points at."""

    async def page(request: Request) -> HTMLResponse:
        return HTMLResponse(
            "<!doctype html><html lang=en><head><meta charset=utf-8><title>Host page</title>"
            '<link rel="icon" href="data:,">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<style>{css}</style></head>"
            "<body><h1>A shop</h1><p>Questions? Ask below.</p>"
            f'<script src="{api["url"]}/static/widget.js" data-collection="{collection}"'
            + (f' data-key="{key}"' if key else "")
            + " defer></script></body></html>"
        )

    return Starlette(routes=[Route("/", page)])


# Records every sentence the widget adds and every change to a shown one (window.__srwLog).
MUTATION_LOG_JS = (Path(__file__).parent / "mutation_log.js").read_text()
