"""Thread CPU of chunking a generated multi-MB manual (chunk_spans, then heading_context).

    python loadtests/bench_chunking.py --megabytes 3.2 --repeat 3

Run as a script path (not -m) to time another checkout's installed stream_rag: the script's
folder goes first on sys.path, not the repository, so the venv's editable install is used.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from stream_rag.ingest.chunking import chunk_spans, heading_context

# stream_rag is imported (from this venv) before the repository joins the path.
sys.path.append(str(Path(__file__).resolve().parent.parent))
from loadtests.big_documents import markdown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=3.2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    text = markdown(int(args.megabytes * 1024 * 1024))
    spans_s, headings_s = [], []
    for _ in range(args.repeat):
        start = time.thread_time()
        spans = chunk_spans(text, 1000, 150)
        middle = time.thread_time()
        heading_context(text, [s for s, _ in spans])
        spans_s.append(middle - start)
        headings_s.append(time.thread_time() - middle)
    print(
        f"{len(text):,} chars, {len(spans):,} chunks: chunk_spans median "
        f"{statistics.median(spans_s):.3f} s, heading_context median "
        f"{statistics.median(headings_s):.3f} s (thread CPU, {args.repeat} runs)"
    )


if __name__ == "__main__":
    main()
