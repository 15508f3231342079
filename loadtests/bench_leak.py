"""Server memory over many answers: RSS after stream 500 against after stream 2,000.

    python -m loadtests.bench_leak --streams 2000 --users 10

`stream-rag serve --sample` runs as a subprocess with `fake-llm` (no pacing) as its model;
users here ask numbered questions (every one a query-cache miss, so the cache fills and
evicts) and read every stream to its end. Prints RSS every 250 streams, the growth from
stream 500 to the last, and how the streams ended (a stream that ends with neither `done`
nor `error` is counted as `neither`).
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from collections import Counter
from pathlib import Path

import anyio

from stream_rag.loadtest.command import free_port, rss_mb, server_process
from stream_rag.loadtest.users import run_load

_MAIN = "import sys; from stream_rag.cli import main; sys.exit(main())"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--step", type=int, default=250)
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        fake_port, port = free_port(), free_port()
        stack.enter_context(
            server_process(
                "fake-llm",
                [_MAIN, "fake-llm", "--port", str(fake_port)],
                {},
                fake_port,
                "/v1/models",
                work,
            )
        )
        env = {
            "STREAM_RAG_DATA_DIR": str(work / "data"),
            "STREAM_RAG_LLM_BASE_URL": f"http://127.0.0.1:{fake_port}/v1",
            "STREAM_RAG_LLM_MODEL": "fake",
            "STREAM_RAG_ACCESS_LOG": "false",
        }
        pid = stack.enter_context(
            server_process(
                "serve",
                [_MAIN, "serve", "--sample", "--port", str(port)],
                env,
                port,
                "/healthz",
                work,
            )
        )
        base = f"http://127.0.0.1:{port}"
        ended: Counter[str] = Counter()
        done, at_500 = 0, None
        print(f"{'streams':>8} {'RSS MB':>8}", flush=True)
        while done < args.streams:
            answers, _ = anyio.run(
                lambda: run_load(
                    base,
                    endpoint="chat",
                    users=args.users,
                    requests=args.step,
                    duration_s=3600,
                    distinct=True,
                )
            )
            done += len(answers)
            ended.update(a.ended for a in answers)
            rss = rss_mb(pid) or float("nan")
            if done == 500:
                at_500 = rss
            print(f"{done:>8} {rss:>8.1f}", flush=True)
        last = rss_mb(pid) or float("nan")
        if at_500:
            print(f"RSS at stream {done} / at stream 500: {last / at_500:.3f}")
        print(f"streams ended: {dict(ended)}")


if __name__ == "__main__":
    main()
