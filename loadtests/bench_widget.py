"""The widget in Chromium: time from a `sentence` event reaching the widget to that sentence
in the DOM and in the next rendered frame, measured in the page with performance.now().

    python -m loadtests.bench_widget --questions 30

The widget puts a performance mark (`stream-rag:sentence-received`) when it has parsed a
`sentence` event; a MutationObserver stamps the sentence's insertion and a
requestAnimationFrame callback the next frame. Also prints widget.js's size.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import tempfile
from pathlib import Path

from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import STATIC_DIR
from stream_rag.model.fake import FakeConfig
from tests.browser import MISSING, chromium_path, launch, running_stack

SAMPLE_KB = Path(__file__).resolve().parent.parent / "stream_rag" / "sample_kb"
QUESTIONS = (
    "How do I request a refund?",
    "What does the Team plan cost?",
    "How do I export my notes?",
    "Why does sync fail?",
    "How do I contact support?",
)
OBSERVE_JS = """() => {
  const root = document.querySelector('stream-rag-chat').shadowRoot;
  const out = window.__bench = [];
  new MutationObserver((records) => {
    for (const r of records) for (const n of r.addedNodes) {
      if (n.nodeType !== 1 || !n.matches('.s')) continue;
      const item = { first: n.dataset.index === '0', dom: performance.now(), frame: null };
      out.push(item);
      requestAnimationFrame(() => { item.frame = performance.now(); });
    }
  }).observe(root, { subtree: true, childList: true });
}"""
RESULT_JS = """() => {
  const marks = performance.getEntriesByName('stream-rag:sentence-received');
  return window.__bench.map((item, i) => ({ ...item, received: marks[i].startTime }));
}"""


def summary(label: str, values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
    return (
        f"{label:<36} n={len(values):<4} median {statistics.median(values):6.2f} ms"
        f"   p95 {p95:6.2f} ms   max {values[-1]:6.2f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--tokens-per-second", type=float, default=40.0)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise SystemExit(MISSING)
    widget = (STATIC_DIR / "widget.js").read_bytes()
    print(f"widget.js: {len(widget)} bytes, {len(gzip.compress(widget, 9))} bytes gzipped")
    config = FakeConfig(tokens_per_second=args.tokens_per_second)
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_stack(Path(tmp), MiniLMEmbedder(), config) as stack,
        sync_playwright() as playwright,
    ):
        for file in sorted(SAMPLE_KB.iterdir()):
            stack.upload(file.name, file.read_bytes())
        browser = launch(playwright, path)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(stack.url + "/")
        page.evaluate(OBSERVE_JS)
        for i in range(args.questions):
            box = page.locator("stream-rag-chat textarea")
            box.fill(QUESTIONS[i % len(QUESTIONS)])
            box.press("Enter")
            page.locator("stream-rag-chat .turn").nth(i).locator(
                ".actions, .refusal, .error"
            ).first.wait_for()
        page.wait_for_function("() => window.__bench.every((item) => item.frame !== null)")
        items = page.evaluate(RESULT_JS)
        browser.close()
    first = [i for i in items if i["first"]]
    print(f"{args.questions} questions, fake model at {args.tokens_per_second:g} tokens/s")
    to_dom = [i["dom"] - i["received"] for i in first]
    print(summary("first sentence: event -> DOM", to_dom))
    print(
        summary("first sentence: event -> next frame", [i["frame"] - i["received"] for i in first])
    )
    print(
        summary("all sentences: event -> next frame", [i["frame"] - i["received"] for i in items])
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
