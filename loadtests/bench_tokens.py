"""The event loop's CPU per streamed token and per sentence event, in process.

    python -m loadtests.bench_tokens
    PYTHONPATH=/tmp/s7tok-old python loadtests/bench_tokens.py   # another tree's code

`read`: `OpenAIChatModel.stream` reads concurrent streams from a token server in a child
process (raw asyncio, the chunked SSE bytes uvicorn sends, one chunk per token at a fixed
pace), twice: short and long answers. The loop thread's CPU (`time.thread_time`) difference
over the token difference is the CPU per token, the request's own cost cancelled out.
`output`: an answer's events (`sources`, sentences, `done`) through `to_sse` and the SSE
response `/v1/chat` uses to an ASGI `send` that keeps the bytes: CPU per answer and per event.
`segment`: `SentenceBuffer.feed` per token. Each figure is the median of `--rounds`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import socket
import statistics
import time
from collections.abc import AsyncIterator
from typing import Any

import uvloop

from stream_rag.events import Done, Event, SentenceOut, Sources, to_sse
from stream_rag.gate.segment import SentenceBuffer
from stream_rag.model.llm import OpenAIChatModel
from stream_rag.retrieve.hybrid import Block
from stream_rag.types import Message

WORDS = "The wing's lift rises with the angle of attack until the flow separates [1].".split()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def token_chunk(piece: str) -> bytes:
    """One token as an OpenAI-style chunk, framed as uvicorn frames a streamed body's part."""
    chunk = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "bench",
        "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
    }
    return _framed(b"data: " + json.dumps(chunk).encode() + b"\n\n")


def _framed(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
    b"transfer-encoding: chunked\r\n\r\n"
)
_END = _framed(b"data: [DONE]\n\n") + b"0\r\n\r\n"


class _TokenServer(asyncio.Protocol):
    """Answers every request with `tokens` chunks, one every `interval` seconds (keep-alive)."""

    def __init__(self, tokens: list[int], interval: float) -> None:
        self.tokens, self.interval = tokens, interval
        self.data = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.data += data
        while b"\r\n\r\n" in self.data:
            head, _, rest = self.data.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if len(rest) < length:
                return
            self.data = rest[length:]
            asyncio.get_running_loop().create_task(self.reply())

    async def reply(self) -> None:
        assert self.transport is not None
        self.transport.write(_HEAD)
        for i in range(self.tokens[0]):
            await asyncio.sleep(self.interval)
            self.transport.write(token_chunk(" " + WORDS[i % len(WORDS)]))
        self.transport.write(_END)


def _serve(port: int, tokens: Any, interval: float) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(
            lambda: _TokenServer(tokens, interval), "127.0.0.1", port, backlog=1024
        )
        await server.serve_forever()

    uvloop.run(main())


async def _read_round(model: OpenAIChatModel, streams: int) -> tuple[float, int]:
    """Loop-thread CPU seconds and tokens for `streams` concurrent answers."""
    messages = [Message("user", "Why does the wing stall?")]
    counts: list[int] = []

    async def one() -> None:
        n = 0
        async for _ in model.stream(messages):
            n += 1
        counts.append(n)

    t0 = time.thread_time()
    async with asyncio.TaskGroup() as group:
        for _ in range(streams):
            group.create_task(one())
    return time.thread_time() - t0, sum(counts)


def bench_read(streams: int, rounds: int, short: int, long: int, tps: float) -> None:
    ctx = multiprocessing.get_context("spawn")
    tokens = ctx.Array("i", [short])
    port = free_port()
    server = ctx.Process(target=_serve, args=(port, tokens, 1 / tps), daemon=True)
    server.start()
    try:

        async def main() -> None:
            model = OpenAIChatModel(f"http://127.0.0.1:{port}/v1", "bench", stall_s=30)
            await asyncio.sleep(1.0)  # the server starts
            per: dict[int, list[tuple[float, int]]] = {short: [], long: []}
            await _read_round(model, streams)  # warm: connections, imports
            for _ in range(rounds):
                for n in (short, long):
                    tokens[0] = n
                    per[n].append(await _read_round(model, streams))
            slopes = []
            for (cs, ts), (cl, tl) in zip(per[short], per[long], strict=True):
                slopes.append((cl - cs) / (tl - ts) * 1e6)
            request = [
                (c - t * s / 1e6) / streams * 1e3
                for (c, t), s in zip(per[short], slopes, strict=True)
            ]
            print(
                f"read: {streams} streams at {tps:g} tokens/s, {short} vs {long} tokens, "
                f"{rounds} rounds: loop CPU per token {statistics.median(slopes):.1f} us "
                f"(rounds {', '.join(f'{s:.1f}' for s in slopes)}); "
                f"per stream besides tokens {statistics.median(request):.2f} ms"
            )
            await model.aclose()

        uvloop.run(main())
    finally:
        server.kill()
        server.join()


def _blocks() -> list[Block]:
    text = "The wing's lift rises with the angle of attack until the flow separates. " * 6
    return [
        Block(n, f"c{n}", f"d{n}", 1, "0" * 64, f"doc {n}", f"doc{n}.md", 0, len(text), text, {})
        for n in range(1, 6)
    ]


async def _answer_events(blocks: list[Block], sentences: int) -> AsyncIterator[Event]:
    yield Sources(blocks, "bench")
    for i in range(sentences):
        text = f"The wing's lift rises with the angle of attack number {i} [1][2]."
        yield SentenceOut(i, text, blocks[:2])
    yield Done(sentences, 0, 120.0, 900.0, 25, None, "req-1")


def _response_class() -> Any:
    """What `/v1/chat` answers with."""
    from stream_rag.http.eventstream import EventStream

    return EventStream


def bench_output(answers: int, sentences: int, rounds: int) -> None:
    response_class = _response_class()

    blocks = _blocks()
    sent: list[int] = []

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()  # the client never leaves
        return {}

    async def send(message: Any) -> None:
        sent.append(len(message.get("body", b"")))

    async def one() -> None:
        async def events() -> AsyncIterator[Any]:
            n = 0
            async for event in _answer_events(blocks, sentences):
                n += 1
                yield to_sse(event, id=str(n))

        response = response_class(events(), ping=15)
        scope = {"type": "http", "method": "POST"}
        await response(scope, receive, send)

    async def main() -> list[float]:
        await one()
        figures = []
        for _ in range(rounds):
            t0 = time.thread_time()
            for _ in range(answers):
                await one()
            cpu = time.thread_time() - t0
            figures.append(cpu / answers * 1e6)
        return figures

    per_answer = uvloop.run(main())
    events = sentences + 2
    figures = [f / events for f in per_answer]
    print(
        f"output ({response_class.__name__}): {answers} answers of {sentences} sentences, "
        f"{rounds} rounds: "
        f"{statistics.median(per_answer):.0f} us per answer, "
        f"{statistics.median(figures):.1f} us per event "
        f"(rounds {', '.join(f'{f:.1f}' for f in figures)})"
    )


def bench_segment(rounds: int) -> None:
    text = (
        "The wing's lift rises with the angle of attack [1]. Past about 15 degrees the flow "
        "separates and lift falls (a stall) [2]. Flaps move that angle: e.g. 3.5 degrees more [1]."
    )
    pieces = [" " + w for w in text.split()] * 40
    figures = []
    for _ in range(rounds):
        t0 = time.thread_time()
        for _ in range(20):
            buffer = SentenceBuffer()
            for piece in pieces:
                buffer.feed(piece)
            buffer.close()
        figures.append((time.thread_time() - t0) / (20 * len(pieces)) * 1e6)
    print(f"segment: SentenceBuffer.feed {statistics.median(figures):.2f} us per token")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--tokens-per-second", type=float, default=50)
    parser.add_argument("--short", type=int, default=5)
    parser.add_argument("--long", type=int, default=45)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", choices=("read", "output", "segment"))
    args = parser.parse_args()
    if args.only in (None, "segment"):
        bench_segment(args.rounds)
    if args.only in (None, "output"):
        bench_output(300, 3, args.rounds)
    if args.only in (None, "read"):
        bench_read(args.streams, args.rounds, args.short, args.long, args.tokens_per_second)


if __name__ == "__main__":
    main()
