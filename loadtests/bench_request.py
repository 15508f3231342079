"""The event loop's CPU for one request's parts outside the token stream, in process.

    python -m loadtests.bench_request [--requests 300] [--old /tmp/s7req-old]

Each step runs one request at a time on uvloop and counts the CPU time of the loop's own thread
(`time.thread_time`: the worker threads' retrieval is not in it), as `stream-rag serve` runs:
the app from `create_app` wrapped as uvicorn wraps it (`build_server`'s config), driven through
ASGI, against `stream-rag fake-llm` (unpaced) in a child process:

- `protocol`: the server's HTTP protocol (`build_server`'s uvicorn protocol class) on an
  in-memory transport: parsing a POST /v1/chat head and body, and framing a response of
  twelve SSE-sized messages from a bare ASGI app;
- `healthz`: GET /healthz, the request intake and every middleware, nothing else;
- `reject`: POST /v1/chat with `{"question": 5}`, intake, the JSON body, auth, the 400;
- `model`: the openai client's request to the fake and its reply up to the first piece
  (`OpenAIChatModel.stream`), then the rest of the stream (`model_rest`);
- `chat`: a whole POST /v1/chat answer (SSE), the model request and stream included.

With `--old DIR` every step also runs against the package in DIR (a checkout of an earlier
commit, e.g. `git worktree add --detach /tmp/s7req-old main`), in alternating child processes.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

STEPS = ("protocol", "healthz", "reject", "model", "model_rest", "chat")


class Driver:
    """One ASGI app driven in process: lifespan state in each request's scope, as uvicorn does."""

    def __init__(self, app: Any, state: dict[str, Any]) -> None:
        self.app = app
        self.state = state

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        headers = [
            (b"host", b"127.0.0.1:8000"),
            (b"user-agent", b"bench"),
            (b"accept", b"*/*"),
            (b"content-length", str(len(body)).encode()),
        ]
        if body:
            headers.append((b"content-type", b"application/json"))
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.4"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
            "state": dict(self.state),
        }
        sent = False
        done = asyncio.Event()
        status = 0
        chunks: list[bytes] = []

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await done.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    done.set()

        await self.app(scope, receive, send)
        return status, b"".join(chunks)


def start_fake() -> tuple[subprocess.Popen[bytes], str]:
    from tests.helpers import free_port

    port = free_port()
    command = [sys.executable, "-m", "stream_rag.cli", "fake-llm", "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    import httpx

    for _ in range(300):
        try:
            httpx.get(f"{url}/v1/models", timeout=1.0)
            return process, f"{url}/v1"
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("the fake model did not start")


async def measure(step: Callable[[], Awaitable[object]], n: int) -> list[float]:
    """CPU ms of the loop's thread per call, after a few unmeasured calls."""
    for _ in range(5):
        await step()
    spent: list[float] = []
    for _ in range(n):
        started = time.thread_time()
        await step()
        spent.append((time.thread_time() - started) * 1000)
    return spent


class MemoryTransport(asyncio.Transport):
    """Takes writes and forgets them."""

    def __init__(self) -> None:
        super().__init__()
        self.closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        pass

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}.get(name)

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


SSE = (
    b'id: a.1\r\nevent: sentence\r\ndata: {"text": "Refunds are available within 30 days.", '
    b'"citations": [1]}\r\n\r\n'
)
CHAT = (
    b"POST /v1/chat HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nUser-Agent: python-httpx/0.28.1\r\n"
    b"Accept: */*\r\nAccept-Encoding: gzip, deflate\r\nConnection: keep-alive\r\n"
    b"Content-Type: application/json\r\nContent-Length: 48\r\n\r\n"
    b'{"question": "Can I get a refund on an annual?"}'
)


async def protocol_step(config: Any, n: int) -> list[float]:
    """CPU ms of the loop's thread per request through the server's HTTP protocol alone."""
    from uvicorn.server import ServerState

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        headers = [(b"content-type", b"text/event-stream"), (b"x-request-id", b"req_1")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for _ in range(12):
            await send({"type": "http.response.body", "body": SSE, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        finished.set()

    finished = asyncio.Event()
    state = ServerState()
    protocol = config.http_protocol_class(config=config, server_state=state, app_state={})
    protocol.app = app
    protocol.connection_made(MemoryTransport())

    async def one() -> None:
        finished.clear()
        protocol.data_received(CHAT)
        await finished.wait()

    try:
        return await measure(one, n)
    finally:
        protocol.connection_lost(None)


async def run(n: int, fake_url: str, data_dir: Path) -> dict[str, list[float]]:
    from loadtests.bench_prelude import open_sample
    from stream_rag.cli.serve import json_request_log
    from stream_rag.config import Settings
    from stream_rag.http.app import create_app
    from stream_rag.http.serving import build_server
    from stream_rag.loadtest.users import QUESTIONS
    from stream_rag.model.llm import OpenAIChatModel
    from stream_rag.types import Message

    open_sample(data_dir).close()  # the sample knowledge base, indexed
    settings = Settings(data_dir=data_dir, llm_base_url=fake_url)
    json_request_log()  # as `stream-rag serve` does (to this child's stderr: a file)
    app = create_app(settings)
    config = build_server(app, settings).config
    config.load()
    driver_app = config.loaded_app
    results: dict[str, list[float]] = {}
    async with app.router.lifespan_context(app) as state:
        driver = Driver(driver_app, dict(state or {}))

        async def healthz() -> None:
            status, _ = await driver.request("GET", "/healthz")
            assert status == 200, status

        async def reject() -> None:
            status, _ = await driver.request("POST", "/v1/chat", b'{"question": 5}')
            assert status == 400, status

        bodies = itertools.cycle(json.dumps({"question": q}).encode() for q in QUESTIONS)

        async def chat() -> None:
            status, text = await driver.request("POST", "/v1/chat", next(bodies))
            assert status == 200, status
            assert b"event: done" in text, text[-300:]
            assert b"event: sentence" in text, text[-300:]

        results["protocol"] = await protocol_step(config, n)
        results["healthz"] = await measure(healthz, n)
        results["reject"] = await measure(reject, n)
        results["chat"] = await measure(chat, n)

        model = OpenAIChatModel(fake_url, "fake")
        messages = [
            Message("system", "Answer from the numbered blocks."),
            Message("user", f"[1] The reset button is under the lid.\n\nQuestion: {QUESTIONS[0]}"),
        ]
        first: list[float] = []
        rest: list[float] = []
        for i in range(n + 5):
            started = time.thread_time()
            stream = model.stream(messages)
            await stream.__anext__()
            middle = time.thread_time()
            async for _ in stream:
                pass
            ended = time.thread_time()
            if i >= 5:
                first.append((middle - started) * 1000)
                rest.append((ended - middle) * 1000)
        results["model"], results["model_rest"] = first, rest
        await model.aclose()
    return results


def child(n: int, fake_url: str) -> None:
    import uvloop

    import stream_rag

    with tempfile.TemporaryDirectory(prefix="bench-request-") as tmp:
        results = uvloop.run(run(n, fake_url, Path(tmp)))
    print(json.dumps({"from": str(Path(stream_rag.__file__).parents[1]), "results": results}))


def in_child(tree: str | None, n: int, fake_url: str) -> dict[str, list[float]]:
    # This file, run in the tree's directory: its `stream_rag` comes first on the path (before
    # the editable install's, which PYTHONPATH alone does not override).
    tree = tree or str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": tree}
    run = f"import runpy; runpy.run_path({__file__!r}, run_name='__main__')"
    command = [sys.executable, "-c", run, "--child", fake_url, "--requests", str(n)]
    with tempfile.TemporaryFile("w+") as log:
        out = subprocess.run(
            command, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=log, text=True
        )
        if out.returncode:
            log.seek(0)
            raise SystemExit(log.read()[-3000:])
    output = json.loads(out.stdout.strip().splitlines()[-1])
    if output["from"] != tree:
        raise SystemExit(f"the child imported stream_rag from {output['from']}, not {tree}")
    result: dict[str, list[float]] = output["results"]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=6, help="alternating runs per tree")
    parser.add_argument("--old", help="a checkout of the baseline (its stream_rag is used)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.requests, args.child)
        return 0
    fake, fake_url = start_fake()
    trees: list[tuple[str, str | None]] = [("new", None)]
    if args.old:
        trees.insert(0, ("old", str(Path(args.old).resolve())))
    # Per tree and step, each round's median: a round runs each tree once, so a round's pair
    # ran under about the same load from other processes.
    figures: dict[str, dict[str, list[float]]] = {name: {s: [] for s in STEPS} for name, _ in trees}
    try:
        for round_ in range(args.rounds):
            # Each tree goes first in every other round: the second of a pair may run warmer
            # or colder (the fake model's state, the other child's after-effects).
            for name, tree in trees[:: -1 if round_ % 2 else 1]:
                for step, values in in_child(tree, args.requests, fake_url).items():
                    figures[name][step].append(statistics.median(values))
    finally:
        fake.terminate()
        fake.wait()
    print(
        f"loop-thread CPU ms per request: median of {args.rounds} rounds' medians "
        f"({args.requests} requests a round), [min-max of rounds]"
    )
    print(
        f"{'step':<11}"
        + "".join(f"{name:>22}" for name, _ in trees)
        + ("   new/old  new lower" if args.old else "")
    )
    for step in STEPS:
        row = f"{step:<11}"
        medians = []
        for name, _ in trees:
            values = figures[name][step]
            medians.append(statistics.median(values))
            row += f"{medians[-1]:>8.3f} [{min(values):.3f}-{max(values):.3f}]"
        if args.old:
            lower = sum(
                n < o for o, n in zip(figures["old"][step], figures["new"][step], strict=True)
            )
            row += f"   {medians[1] / medians[0]:.2f}x  {lower}/{args.rounds}"
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
