"""The served page in a real browser: the documents panel, and a server that asks for a key."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from stream_rag.access.keys import KeyStore
from stream_rag.embed.minilm import MiniLMEmbedder

from .browser import (
    CHAT,
    POLICY,
    Console,
    ask,
    running_stack,
    wait_done,
)
from .helpers import HTTP_GUARD_S

if TYPE_CHECKING:
    from playwright.sync_api import (
        FilePayload,
        Page,
    )


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
        assert httpx.get(f"{stack.url}/v1/documents", timeout=HTTP_GUARD_S).json()["documents"]
        row.get_by_role("button", name="Delete").click()
        row.get_by_role("button", name="Delete for good").click()
        page.locator("#documents .none").wait_for()
        assert (
            httpx.get(f"{stack.url}/v1/documents", timeout=HTTP_GUARD_S).json()["documents"] == []
        )
        # The collection picker scopes the chat and the list.
        picker = page.locator("#collection")
        picker.fill("manuals")
        picker.dispatch_event("change")
        page.locator("#documents .none", has_text="manuals").wait_for()
        assert page.locator(CHAT).get_attribute("data-collection") == "manuals"


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
        version = page.locator("li.doc .version a", has_text="v1")
        # A link cannot carry the key: every activation downloads with it (a middle-click
        # opened the bare URL in a new tab, a 401 JSON error).
        assert version.get_attribute("href") is None
        for button in ("left", "middle"):
            with page.expect_download() as download:
                version.click(button=button)
            assert Path(download.value.path()).read_bytes() == POLICY
            assert download.value.suggested_filename == "policy.md"
