"""Time from "the model made a sentence's end knowable" to "the client has the verified
sentence", over real HTTP, for one stream and for many concurrent streams.

    python -m loadtests.bench_stream --concurrency 100 --tokens-per-second 50

A fake OpenAI-compatible model runs in this process (uvicorn thread) and records when it sent
each piece; `stream-rag serve` runs as a subprocess on the bundled sample knowledge base and
uses it as its model; clients here read the SSE stream. A sentence's end is knowable when the
model sends the first piece after it (its citation markers may still follow the full stop) or
ends the stream: replaying the model's pieces through the same `SentenceBuffer` gives that
moment per sentence. The figure is the client's arrival time minus that moment (both
`time.monotonic()`, one clock per machine), so it measures the gate, SSE and network, not the
model. `done.ttfs_ms` (request to first verified sentence) is reported too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import httpx

from stream_rag.gate.segment import SentenceBuffer
from stream_rag.loadtest.users import QUESTIONS
from stream_rag.model.fake import FakeConfig, create_fake_llm
from stream_rag.retrieve.metrics import percentile
from tests.helpers import free_port, running_server


def knowable_times(timeline: list[tuple[str, float]]) -> list[float]:
    """For each unit the buffer releases, when the model's stream made its end certain."""
    buffer = SentenceBuffer()
    times: list[float] = []
    for piece, sent in timeline:
        times.extend(sent for _ in buffer.feed(piece))
    last = timeline[-1][1] if timeline else 0.0
    times.extend(last for _ in buffer.close())
    return times


async def one_stream(client: httpx.AsyncClient, question: str) -> dict[str, Any]:
    arrivals: dict[int, float] = {}
    done: dict[str, Any] = {}
    name = "message"
    async with client.stream("POST", "/v1/chat", json={"question": question}) as response:
        async for line in response.aiter_lines():
            if line.startswith("event:"):
                name = line.partition(":")[2].strip()
            elif line.startswith("data:"):
                data = json.loads(line.partition(":")[2])
                if name == "sentence":
                    arrivals[data["index"]] = time.monotonic()
                elif name == "done":
                    done = data
    return {"question": question, "arrivals": arrivals, "done": done}


def lags(results: list[dict[str, Any]], stats: Any) -> tuple[list[float], list[float]]:
    out: list[float] = []
    ttfs: list[float] = []
    for result in results:
        known = knowable_times(stats.timelines.get(result["question"], []))
        for index, arrived in result["arrivals"].items():
            if index < len(known):
                out.append((arrived - known[index]) * 1000)
        if result["done"].get("ttfs_ms") is not None:
            ttfs.append(result["done"]["ttfs_ms"])
    return out, ttfs


def summary(label: str, values: list[float]) -> str:
    if not values:
        return f"{label}: no samples"
    return (
        f"{label}: n={len(values)} p50 {statistics.median(values):7.2f} ms  "
        f"p99 {percentile(values, 0.99):7.2f} ms  max {max(values):7.2f} ms"
    )


async def run(base_url: str, stats: Any, concurrency: int, rounds: int) -> None:
    limits = httpx.Limits(max_connections=concurrency + 10)
    async with httpx.AsyncClient(base_url=base_url, timeout=120, limits=limits) as client:
        await one_stream(client, "warm up: " + QUESTIONS[0])
        single = [
            await one_stream(client, f"{QUESTIONS[i % len(QUESTIONS)]} (single {i})")
            for i in range(rounds)
        ]
        lag, ttfs = lags(single, stats)
        print(summary("1 stream     sentence lag", lag))
        print(summary("1 stream     ttfs (done)  ", ttfs))
        many = await asyncio.gather(
            *(
                one_stream(client, f"{QUESTIONS[i % len(QUESTIONS)]} (concurrent {i})")
                for i in range(concurrency)
            )
        )
        lag, ttfs = lags(list(many), stats)
        print(summary(f"{concurrency} streams  sentence lag", lag))
        print(summary(f"{concurrency} streams  ttfs (done)  ", ttfs))


def main() -> None:
    parser = argparse.ArgumentParser(description="Verified-sentence latency over real HTTP")
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=20, help="sequential single streams")
    parser.add_argument("--tokens-per-second", type=float, default=50)
    args = parser.parse_args()
    fake = create_fake_llm(FakeConfig(tokens_per_second=args.tokens_per_second))
    with running_server(fake) as llm_url, tempfile.TemporaryDirectory() as data_dir:
        port = free_port()
        env = {
            **os.environ,
            "STREAM_RAG_DATA_DIR": data_dir,
            "STREAM_RAG_LLM_BASE_URL": f"{llm_url}/v1",
            "STREAM_RAG_LOG_LEVEL": "warning",
        }
        server = subprocess.Popen(
            [sys.executable, "-m", "stream_rag.cli", "serve", "--sample", "--port", str(port)],
            env=env,
        )
        base_url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    documents = httpx.get(f"{base_url}/v1/documents").json()["documents"]
                    if documents and all(d["live_version"] for d in documents):
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("server did not get ready")
                time.sleep(0.2)
            print(f"fake model at {args.tokens_per_second:g} tokens/s; sample knowledge base")
            asyncio.run(run(base_url, fake.state.stats, args.concurrency, args.rounds))
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
