"""Screenshots of the widget for the docs (guides/widget.md): `python -m tests.screenshots docs/`.

The bundled sample knowledge base plus an outdated price list (so one question meets a
conflict), the default local generator, Debian's Chromium at 1200 and 400 px wide.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import STATIC_DIR, create_app

from .browser import MISSING, Stack, chromium_path, launch
from .helpers import running_server

SAMPLE_KB = Path(__file__).resolve().parent.parent / "stream_rag" / "sample_kb"
OUTDATED = b"# Prices (2023)\n\nThe Pro plan costs $6 per month, or $60 per year.\n"
QUESTIONS = ("How do I request a refund?", "How much does the Pro plan cost per month?")


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
        app = create_app(Settings(data_dir=Path(tmp)), embedder=MiniLMEmbedder())
        with running_server(app) as url, sync_playwright() as playwright:
            stack = Stack(url, app)
            for file in sorted(SAMPLE_KB.iterdir()):
                stack.upload(file.name, file.read_bytes())
            stack.upload("prices-2023.md", OUTDATED)
            browser = launch(playwright, path)
            for width in (1200, 400):
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.goto(url + "/")
                for n, question in enumerate(QUESTIONS, start=1):
                    box = page.locator("stream-rag-chat textarea")
                    box.fill(question)
                    box.press("Enter")
                    page.locator(f"stream-rag-chat .turn:nth-of-type({n})").locator(
                        ".actions, .refusal, .error"
                    ).first.wait_for()
                page.evaluate("document.activeElement.blur()")
                widget = page.locator("stream-rag-chat")
                if width == 1200:
                    page.screenshot(path=args.out / "page-1200.png")
                    # The citation's hover card, which may reach past the widget's box.
                    page.locator("stream-rag-chat .turn").first.locator(".chip").last.hover()
                    area = widget.bounding_box()
                    tip = page.locator("stream-rag-chat .tip").bounding_box()
                    assert area is not None
                    assert tip is not None
                    right = max(area["x"] + area["width"], tip["x"] + tip["width"]) + 4
                    clip = {**area, "width": right - area["x"]}
                    page.screenshot(path=args.out / f"widget-{width}.png", clip=clip)  # type: ignore[arg-type]
                else:
                    widget.screenshot(path=args.out / f"widget-{width}.png")
                page.close()
            browser.close()
    print(f"screenshots in {args.out} (widget.js: {(STATIC_DIR / 'widget.js').stat().st_size} B)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
