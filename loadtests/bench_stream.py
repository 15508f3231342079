"""Time from "the model made a sentence's end knowable" to "the client has the verified
sentence", over real HTTP, for one stream and for many concurrent streams.

    python -m loadtests.bench_stream --concurrency 100 --tokens-per-second 50
    python -m loadtests.bench_stream --concurrency 100 --tokens-per-second 50 --burn-core
    python -m loadtests.bench_stream --bursts 2 --burn-core --repeat 5

Three processes: the fake OpenAI-compatible model (which records when it sent each piece),
`stream-rag serve` on the bundled sample knowledge base using it as its model, and this one,
whose clients read the SSE streams. Each its own process, so that the clients' work does not
slow the fake's pace. A sentence's end is knowable when the model sends the first piece after
it (its citation markers may still follow the full stop) or ends the stream: replaying the
model's pieces through the same `SentenceBuffer` gives that moment per sentence. The lag is the
client's arrival time minus that moment (`time.monotonic()`, one clock per machine), so it
measures the gate, SSE and network, not the model. `done.ttfs_ms` (request to first verified
sentence) is reported too, and the client's time to first sentence cut in three: request to
the model's first piece, first piece to the first sentence's end (the model's pace), that end
to the client. The server's CPU time (process, and its event-loop thread) is read from /proc,
and so is the time its event-loop thread was ready to run but waited for a CPU (schedstat): on a
shared machine that wait, not the server's own work, can be most of a sentence's lag.
`--burn-core` runs `python3 -c 'while True: pass'` alongside, loading one core. `--bursts N`
starts the concurrent streams together N times (new questions each time) and reports each burst
and all together. `--repeat N` makes N whole measurements (the fake, the server and the burner
started afresh each time) and ends with each one's headline figures (the concurrent streams'
lag p99, time to first sentence p50 and p99, the event loop's and the fake's CPU per stream)
and their median and range: one run's tail on a shared machine says little. The clients read
each stream off a socket of its own on uvloop (`loadtests/sse_client.py`, not httpx), so that
they take less of the cores the server needs; what they read is the same.
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import gc
import math
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import httpx
import uvicorn
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from loadtests.server_cpu import Cpu
from loadtests.sse_client import body_chunks, post_json
from stream_rag.gate.segment import SentenceBuffer
from stream_rag.loadtest.users import QUESTIONS
from stream_rag.model.fake import BEHAVIOURS, FakeConfig, create_fake_llm
from stream_rag.retrieve.metrics import percentile
from stream_rag.sse import EventStreamParser
from tests.helpers import free_port

Timelines = dict[str, list[tuple[str, float]]]


def knowable_times(timeline: list[tuple[str, float]]) -> list[float]:
    """For each unit the buffer releases, when the model's stream made its end certain."""
    buffer = SentenceBuffer()
    times: list[float] = []
    for piece, sent in timeline:
        times.extend(sent for _ in buffer.feed(piece))
    last = timeline[-1][1] if timeline else 0.0
    times.extend(last for _ in buffer.close())
    return times


def serve_fake(port: int, tokens_per_second: float, knobs: dict[str, Any]) -> None:
    """The fake model (child process), plus a route that hands its timelines to the bench."""
    fake = create_fake_llm(replace(FakeConfig(tokens_per_second=tokens_per_second), **knobs))

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        # Not a Mount over the fake: that would wrap every `send` of every token again.
        if scope["type"] == "http" and scope["path"] == "/_bench/timelines":
            await JSONResponse(fake.state.stats.timelines)(scope, receive, send)
        else:
            await fake(scope, receive, send)

    # httptools where installed, as `stream-rag fake-llm` runs (cli/fake.py).
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


async def one_stream(address: tuple[str, int], question: str) -> dict[str, Any]:
    arrivals: dict[int, float] = {}
    done: dict[str, Any] = {}
    ended = "neither"
    parser = EventStreamParser()
    text = codecs.getincrementaldecoder("utf-8")()
    sent = time.monotonic()
    # Straight off a socket of its own (loadtests/sse_client.py), not through httpx: the clients
    # share the cores with the server they measure. The bytes read are the same.
    async with asyncio.timeout(120):
        status, reader, writer, chunked = await post_json(
            *address, "/v1/chat", {"question": question}
        )
        try:
            async for data in body_chunks(reader, chunked):
                for event in parser.feed(text.decode(data)):
                    # Only what is measured is parsed: `sources` is most of the stream's JSON.
                    if event.event == "sentence":
                        arrivals[event.json()["index"]] = time.monotonic()
                    elif event.event == "done":
                        done, ended = event.json(), "done"
                    elif event.event == "error":
                        ended = f"error:{event.json().get('code')}"
        finally:
            writer.close()
    if status != 200 and ended == "neither":
        ended = f"http:{status}"
    return {"question": question, "sent": sent, "arrivals": arrivals, "done": done, "ended": ended}


def figures(results: list[dict[str, Any]], timelines: Timelines) -> dict[str, list[float]]:
    """Sentence lags, `done.ttfs_ms`, and the client's time to first sentence in three parts."""
    out: dict[str, list[float]] = {k: [] for k in ("lag", "ttfs", "pre", "model", "deliver")}
    for result in results:
        timeline = [(piece, float(at)) for piece, at in timelines.get(result["question"], [])]
        known = knowable_times(timeline)
        for index, arrived in result["arrivals"].items():
            if index < len(known):
                out["lag"].append((arrived - known[index]) * 1000)
        if result["done"].get("ttfs_ms") is not None:
            out["ttfs"].append(result["done"]["ttfs_ms"])
        first = min(result["arrivals"], default=None)
        if timeline and first is not None and first < len(known):
            out["pre"].append((timeline[0][1] - result["sent"]) * 1000)
            out["model"].append((known[first] - timeline[0][1]) * 1000)
            out["deliver"].append((result["arrivals"][first] - known[first]) * 1000)
    return out


def report(label: str, results: list[dict[str, Any]], timelines: Timelines) -> None:
    found = figures(results, timelines)
    print(summary(f"{label} sentence lag", found["lag"]))
    print(summary(f"{label} ttfs (done)", found["ttfs"]))
    print(summary(f"{label}   request -> model's first piece", found["pre"]))
    print(summary(f"{label}   first piece -> sentence end", found["model"]))
    print(summary(f"{label}   sentence end -> client", found["deliver"]))
    ended: dict[str, int] = {}
    for result in results:
        ended[result["ended"]] = ended.get(result["ended"], 0) + 1
    print(f"{label} ended: " + ", ".join(f"{k} {v}" for k, v in sorted(ended.items())))


def summary(label: str, values: list[float]) -> str:
    if not values:
        return f"{label}: no samples"
    return (
        f"{label}: n={len(values)} p50 {statistics.median(values):7.1f} ms  "
        f"p99 {percentile(values, 0.99):7.1f} ms  max {max(values):7.1f} ms"
    )


async def run(
    base_url: str,
    fake_url: str,
    concurrency: int,
    rounds: int,
    pids: tuple[int, int],
    bursts: int = 1,
) -> dict[str, float]:
    """One measurement; returns the concurrent streams' headline figures, all bursts together."""
    # Every stream on a connection of its own, like as many users: no idle connection the server
    # may close just as a burst sends on it.
    url = httpx.URL(base_url)
    client = (url.host, url.port or 80)
    async with httpx.AsyncClient(base_url=fake_url, timeout=60) as fake:
        await one_stream(client, "warm up: " + QUESTIONS[0])
        cpu = Cpu(*pids)
        single = [
            await one_stream(client, f"{QUESTIONS[i % len(QUESTIONS)]} (single {i})")
            for i in range(rounds)
        ]
        cpu.report("1 stream   ", max(1, rounds))
        many: list[list[dict[str, Any]]] = []
        used = {"loop_ms": 0.0, "fake_ms": 0.0}
        for burst in range(bursts):
            label = f"{concurrency} streams" + (f" #{burst + 1}" if bursts > 1 else "")
            gc.collect()  # the last burst's garbage is not collected during this one
            cpu = Cpu(*pids)
            tag = "" if burst == 0 else f".{burst}"
            many.append(
                await asyncio.gather(
                    *(
                        one_stream(client, f"{QUESTIONS[i % len(QUESTIONS)]} (concurrent {i}{tag})")
                        for i in range(concurrency)
                    )
                )
            )
            for key, value in cpu.report(label, concurrency).items():
                used[key] += value / bursts
            # The machine's load, other processes included: figures mean little without it.
            print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
        timelines = (await fake.get("/_bench/timelines")).json()
        report("1 stream   ", single, timelines)
        for burst, results in enumerate(many):
            label = f"{concurrency} streams" + (f" #{burst + 1}" if bursts > 1 else "")
            report(label, results, timelines)
        every = [r for rs in many for r in rs]
        if bursts > 1:
            report(f"{concurrency} streams, all", every, timelines)
    found = figures(every, timelines)
    lag, ttfs = found["lag"] or [math.nan], found["ttfs"] or [math.nan]
    return {
        "lag_p99": percentile(lag, 0.99),
        "ttfs_p50": statistics.median(ttfs),
        "ttfs_p99": percentile(ttfs, 0.99),
        **used,
    }


HEADLINES = {
    "lag_p99": "sentence lag p99",
    "ttfs_p50": "ttfs p50",
    "ttfs_p99": "ttfs p99",
    "loop_ms": "event-loop CPU ms/stream",
    "fake_ms": "fake model CPU ms/stream",
}


def repeat_summary(concurrency: int, runs: list[dict[str, float]]) -> list[str]:
    """Each run's headline figures, then their median and range."""
    lines = [f"{concurrency} streams over {len(runs)} runs (all bursts of each run together):"]
    for key, label in HEADLINES.items():
        values = [run[key] for run in runs]
        each = ", ".join(f"{v:.1f}" for v in values)
        lines.append(
            f"  {label}: median {statistics.median(values):.1f}, range {min(values):.1f}-"
            f"{max(values):.1f} (runs: {each})"
        )
    return lines


@contextmanager
def burning(enabled: bool) -> Any:
    """Another process spinning on one core while the streams run, if asked."""
    if not enabled:
        yield
        return
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        burner.kill()
        burner.wait()


def wait_ready(base_url: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    with httpx.Client(base_url=base_url) as client:
        while True:
            try:
                documents = client.get("/v1/documents").json()["documents"]
                if documents and all(d["live_version"] for d in documents):
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("server did not get ready")
            time.sleep(0.2)


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop for the clients, as uvicorn uses for the server and the fake, where installed."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def main() -> None:
    parser = argparse.ArgumentParser(description="Verified-sentence latency over real HTTP")
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=20, help="sequential single streams")
    parser.add_argument("--tokens-per-second", type=float, default=50)
    parser.add_argument(
        "--bursts", type=int, default=1, help="times to start the concurrent streams together"
    )
    parser.add_argument(
        "--burn-core", action="store_true", help="load one core with another process meanwhile"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="whole measurements (a new fake, server and burner each), then their median",
    )
    parser.add_argument(
        "--knob",
        action="append",
        default=[],
        metavar="NAME=RATE",
        help="a fake model knob (e.g. paraphrase=1.0: reworded sentences, which the gate's "
        "claim checks read instead of passing as quoted statements); repeatable",
    )
    args = parser.parse_args()
    args.knobs = knobs(parser, args.knob)
    runs: list[dict[str, float]] = []
    for n in range(args.repeat):
        if args.repeat > 1:
            print(f"=== run {n + 1} of {args.repeat}", flush=True)
        runs.append(measure(args))
    if args.repeat > 1:
        print("\n".join(repeat_summary(args.concurrency, runs)))


def knobs(parser: argparse.ArgumentParser, given: list[str]) -> dict[str, float]:
    """`NAME=RATE` pairs as the fake's knobs (rates in [0, 1], names of `FakeConfig`)."""
    out: dict[str, float] = {}
    for item in given:
        name, _, rate = item.partition("=")
        try:
            value = float(rate)
        except ValueError:
            parser.error(f"--knob {item!r}: the rate must be a number")
        if name not in BEHAVIOURS or not 0.0 <= value <= 1.0:
            parser.error(f"--knob {item!r}: one of {', '.join(BEHAVIOURS)}, rate 0 to 1")
        out[name] = value
    return out


def measure(args: argparse.Namespace) -> dict[str, float]:
    """One whole measurement: the fake, the server and (if asked) the burner started afresh."""
    fake_port = free_port()
    fake = multiprocessing.get_context("spawn").Process(
        target=serve_fake, args=(fake_port, args.tokens_per_second, args.knobs), daemon=True
    )
    fake.start()
    fake_url = f"http://127.0.0.1:{fake_port}"
    with tempfile.TemporaryDirectory() as data_dir:
        port = free_port()
        env = {
            **os.environ,
            "STREAM_RAG_DATA_DIR": data_dir,
            "STREAM_RAG_LLM_BASE_URL": f"{fake_url}/v1",
            "STREAM_RAG_LOG_LEVEL": "warning",
            "STREAM_RAG_ACCESS_LOG": "false",  # a line per request would flood the output
        }
        server = subprocess.Popen(
            [sys.executable, "-m", "stream_rag.cli", "serve", "--sample", "--port", str(port)],
            env=env,
        )
        base_url = f"http://127.0.0.1:{port}"
        try:
            wait_ready(base_url, server)
            print(
                f"fake model at {args.tokens_per_second:g} tokens/s; sample knowledge base"
                + "".join(f"; {k} {v:g}" for k, v in args.knobs.items())
                + ("; one core loaded by another process" if args.burn_core else "")
            )
            with burning(args.burn_core):
                pids = (server.pid, fake.pid or 0)
                with asyncio.Runner(loop_factory=_loop_factory()) as runner:
                    return runner.run(
                        run(base_url, fake_url, args.concurrency, args.rounds, pids, args.bursts)
                    )
        finally:
            server.terminate()
            server.wait(timeout=30)
            fake.terminate()
            fake.join(timeout=10)


if __name__ == "__main__":
    main()
