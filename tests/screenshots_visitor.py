"""Screenshots of the widget as visitors and the team see it (issue 31):
`python -m tests.screenshots_visitor docs/images/`.

A shop's page on another origin embeds the bubble with a chat key; the bundled sample
knowledge base, the default local generator, Debian's Chromium. Writes bubble-1200.png,
bubble-400.png, reader-1200.png and insights-1200.png, and prints widget.js's size.
"""

from __future__ import annotations

import argparse
import gzip
import tempfile
from pathlib import Path

from stream_rag.access.keys import KeyStore
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import STATIC_DIR, create_app

from .browser import MISSING, Stack, chromium_path, host_page_app, launch
from .helpers import running_server

SAMPLE_KB = Path(__file__).resolve().parent.parent / "stream_rag" / "sample_kb"
ATTRS = (
    'data-mode="bubble" data-title="Acme help" data-handoff-url="https://acme.example/contact" '
    'data-suggestions="How do I request a refund?|How much does the Pro plan cost?"'
)
OUTDATED = b"# Prices (2023)\n\nThe Pro plan costs $6 per month, or $60 per year.\n"
LATER = (
    "Do you ship to Norway?",
    "How long does shipping to Norway take?",
    "Can I pay in bitcoin?",
    "How much does the Pro plan cost per month?",
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path, help="folder for the PNG files")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise SystemExit(MISSING)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        keys = KeyStore(data)
        admin = keys.create(name="ops", scopes=["admin"])[1]
        chat = keys.create(name="site", scopes=["chat"])[1]
        api: dict[str, str] = {}
        with running_server(host_page_app(api, "default", chat, attrs=ATTRS)) as shop:
            app = create_app(
                Settings(data_dir=data, cors_origins=(shop,)), embedder=MiniLMEmbedder()
            )
            with running_server(app) as url, sync_playwright() as playwright:
                api["url"] = url
                stack = Stack(url, app, {"Authorization": f"Bearer {admin}"})
                for file in sorted(SAMPLE_KB.iterdir()):
                    stack.upload(file.name, file.read_bytes())
                stack.upload("prices-2023.md", OUTDATED)  # a conflict for the Insights view
                browser = launch(playwright, path)
                for width in (1200, 400):
                    page = browser.new_page(viewport={"width": width, "height": 800})
                    page.goto(shop + "/")
                    page.locator("stream-rag-chat .launcher").click()
                    page.locator("stream-rag-chat .suggest button").first.click()
                    done = page.locator(
                        "stream-rag-chat .turn .actions, stream-rag-chat .turn .refusal"
                    )
                    done.first.wait_for()
                    page.evaluate("document.activeElement.blur()")
                    page.screenshot(path=args.out / f"bubble-{width}.png")
                    if width == 1200:
                        page.locator("stream-rag-chat .chip").first.click()
                        page.locator("stream-rag-chat .reader .cited").first.wait_for()
                        page.screenshot(path=args.out / "reader-1200.png")
                        page.keyboard.press("Escape")
                        turn = page.locator("stream-rag-chat .turn").first
                        turn.locator("button.down").click()
                        turn.locator(".comment textarea").fill(
                            "I wanted to know how long it takes."
                        )
                        turn.locator(".comment button").click()
                        turn.locator(".thanks").wait_for()
                        for n, question in enumerate(LATER, start=2):
                            box = page.locator("stream-rag-chat textarea").first
                            box.fill(question)
                            box.press("Enter")
                            page.locator("stream-rag-chat .turn").nth(n - 1).locator(
                                ".actions, .refusal, .error"
                            ).first.wait_for()
                    page.close()
                team = browser.new_page(viewport={"width": 1200, "height": 1100})
                team.goto(url + "/")
                team.locator("#key").fill(admin)
                team.locator("#key").press("Enter")
                team.locator("#insights-tab").click()
                team.locator("#insights .rated-down li").first.wait_for()
                team.locator("#insights .topics details").first.locator("summary").click()
                team.locator("#insights-section").screenshot(path=args.out / "insights-1200.png")
                browser.close()
    widget = (STATIC_DIR / "widget.js").read_bytes()
    size, packed = len(widget), len(gzip.compress(widget, 9))
    print(f"screenshots in {args.out}; widget.js: {size:,} B, {packed:,} B gzipped (gzip -9)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
