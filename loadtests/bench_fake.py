"""CPU the fake model (`stream-rag fake-llm`) spends per stream and per token, alone.

    python -m loadtests.bench_fake --concurrency 100 --tokens-per-second 50 --bursts 3

The fake runs in a process of its own under uvicorn, as `bench_stream` and `stream-rag
loadtest` run it; this process sends it prompts like those of `/v1/chat` (the sample knowledge
base's files as the blocks, the load test's questions) in bursts of concurrent streams over kept
connections and reads each body to its end. The fake's CPU per stream is read from /proc around
each burst. `--digest` prints a hash of every body with its run-specific fields (id, created)
blanked, to compare two implementations' bytes.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import multiprocessing
import os
import re
import time
from pathlib import Path

import httpx

from loadtests.bench_stream import serve_fake
from stream_rag.answer.prompt import build_messages
from stream_rag.index.folders import sample_kb_dir
from stream_rag.loadtest.users import QUESTIONS
from stream_rag.model.transport import lean_transport
from stream_rag.retrieve.hybrid import Block
from tests.helpers import free_port


def user_sys(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of `pid` (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / ticks, int(fields[12]) / ticks


def sample_blocks() -> list[Block]:
    """The sample knowledge base's files, one block each."""
    files = sorted(p for p in Path(sample_kb_dir()).iterdir() if p.is_file())
    return [
        Block(n, f"d{n}:v1:0", f"d{n}", 1, "0" * 64, p.name, p.name, 0, 0, p.read_text(), {})
        for n, p in enumerate(files, start=1)
    ]


def body_for(question: str, blocks: list[Block]) -> dict[str, object]:
    messages = [m.to_json() for m in build_messages(question, blocks)]
    return {"model": "fake", "messages": messages, "stream": True}


async def one(client: httpx.AsyncClient, body: dict[str, object]) -> bytes:
    async with client.stream("POST", "/v1/chat/completions", json=body) as response:
        return b"".join([part async for part in response.aiter_raw()])


async def run(url: str, pid: int, concurrency: int, bursts: int, digest: bool) -> None:
    blocks = sample_blocks()
    # Kept connections, as the server's model client keeps them: the fake's per-token cost is
    # measured, not a connection's accept and close per request.
    limits = httpx.Limits(max_connections=concurrency + 10, max_keepalive_connections=concurrency)
    transport = lean_transport(httpx, limits)
    async with httpx.AsyncClient(base_url=url, timeout=120, transport=transport) as client:
        await one(client, body_for(QUESTIONS[0], blocks))
        for burst in range(bursts):
            bodies = [
                body_for(f"{QUESTIONS[i % len(QUESTIONS)]} ({burst}.{i})", blocks)
                for i in range(concurrency)
            ]
            (user, system), wall = user_sys(pid), time.monotonic()
            replies = await asyncio.gather(*(one(client, b) for b in bodies))
            user, system = (b - a for a, b in zip((user, system), user_sys(pid), strict=True))
            used = user + system
            tokens = sum(r.count(b'"content": "') for r in replies) - len(replies)
            print(
                f"burst {burst + 1}: {concurrency} streams, {tokens / concurrency:.1f} tokens "
                f"each, {time.monotonic() - wall:.2f} s; fake CPU {used / concurrency * 1e3:.2f} "
                f"ms/stream ({used / max(tokens, 1) * 1e6:.0f} us/token; "
                f"user {user / concurrency * 1e3:.2f}, "
                f"system {system / concurrency * 1e3:.2f})"
            )
            if digest:
                blanked = [re.sub(rb'"(id|created)": [^,]+', b"", r) for r in replies]
                print(f"  bodies sha256 {hashlib.sha256(b'|'.join(blanked)).hexdigest()[:16]}")


def main() -> None:
    parser = argparse.ArgumentParser(description="The fake model's CPU per stream")
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--tokens-per-second", type=float, default=50)
    parser.add_argument("--bursts", type=int, default=3)
    parser.add_argument("--digest", action="store_true", help="print a hash of the bodies")
    args = parser.parse_args()
    port = free_port()
    fake = multiprocessing.get_context("spawn").Process(
        target=serve_fake, args=(port, args.tokens_per_second), daemon=True
    )
    fake.start()
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{url}/v1/models")
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        print(f"fake model: pid {fake.pid}, {url}", flush=True)
        asyncio.run(run(url, fake.pid or 0, args.concurrency, args.bursts, args.digest))
    finally:
        fake.terminate()
        fake.join(timeout=10)


if __name__ == "__main__":
    main()
