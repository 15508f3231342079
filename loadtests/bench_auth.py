"""What API keys and rate limiting add per request, against the same server without keys.

    python -m loadtests.bench_auth --requests 3000

Starts two `stream-rag serve` processes on loopback with throwaway data directories holding the
same documents: one open (no key), one with keys (the request uses a `read` key bound to one
collection; rate limits on, set high enough never to refuse). Requests alternate between the
two in blocks, one at a time, and p50/p99 latency per route is printed for both and their
difference. Routes: `GET /v1/models` (nothing but the middleware), `GET /v1/documents/{id}`
(one SQLite read plus the collection check) and `POST /v1/search` (BM25 + dense retrieval).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import httpx
from starlette.types import Message, Receive, Scope, Send

from stream_rag.access.guard import Guard
from stream_rag.access.keys import KeyStore
from stream_rag.access.principals import Access
from stream_rag.config import Settings
from stream_rag.retrieve.metrics import percentile

TEXT = (
    "Annual plans can be refunded within 30 days of purchase. Team plans are billed per seat "
    "each month, and seats removed mid-month are credited on the next invoice. {i}"
)


def start(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "STREAM_RAG_DATA_DIR": str(data_dir),
        "STREAM_RAG_RATE_LIMIT_RPM": "100000000",
        "STREAM_RAG_MAX_STREAMS": "1000",
        "STREAM_RAG_ACCESS_LOG": "false",
        "STREAM_RAG_LOG_LEVEL": "warning",
    }
    command = [sys.executable, "-m", "stream_rag.cli", "serve", "--port", str(port)]
    return subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)


def wait_up(base: str, headers: dict[str, str]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz", headers=headers).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise SystemExit(f"{base} did not start")


def seed(base: str, headers: dict[str, str], documents: int) -> str:
    first = ""
    for i in range(documents):
        response = httpx.post(
            f"{base}/v1/documents",
            files={"file": (f"plan{i}.txt", TEXT.format(i=i).encode())},
            data={"collection": "bench"},
            headers=headers,
        )
        response.raise_for_status()
        first = first or response.json()["document"]["id"]
    deadline = time.monotonic() + 120
    while any(
        d["versions"][-1]["status"] == "indexing"
        for d in httpx.get(f"{base}/v1/documents", headers=headers).json()["documents"]
    ):
        if time.monotonic() > deadline:
            raise SystemExit("indexing did not finish")
        time.sleep(0.2)
    return first


def middleware_only(data_dir: Path, calls: int) -> None:
    """The guard alone, in process, around an app that does nothing: its CPU cost per call,
    first with no key in the store (open), then with a `read` key and rate limiting."""
    settings = Settings(data_dir=data_dir, rate_limit_rpm=100_000_000)

    async def nothing(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        return None

    async def timed(
        guard: Guard, access: Access, headers: list[tuple[bytes, bytes]]
    ) -> list[float]:
        times = []
        for _ in range(calls):
            scope: Scope = {
                "type": "http",
                "method": "GET",
                "path": "/v1/documents",
                "headers": headers,
                "client": ("127.0.0.1", 5000),
                "state": {"access": access},
            }
            t0 = time.perf_counter()
            await guard(scope, receive, send)
            times.append((time.perf_counter() - t0) * 1e6)
        return times

    async def run() -> dict[str, list[float]]:
        access = await Access.open(settings)
        guard = Guard(nothing, settings)
        host = (b"host", b"127.0.0.1")
        cases = {"no key (open)": await timed(guard, access, [host])}
        _, secret = KeyStore(data_dir).create(name="bench", scopes=["read"], collections=["b"])
        await access.keys.refresh(0)
        bearer = (b"authorization", f"Bearer {secret}".encode())
        cases["read key + rate limit"] = await timed(guard, access, [bearer, host])
        return cases

    for name, times in anyio.run(run).items():
        print(
            f"guard alone, {name:22} p50 {percentile(times, 0.5):7.1f} us  "
            f"p99 {percentile(times, 0.99):7.1f} us"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=3000, help="per route and server")
    parser.add_argument("--documents", type=int, default=20)
    parser.add_argument("--block", type=int, default=50, help="requests per alternation")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        middleware_only(Path(tmp) / "guard", args.requests)
        open_dir, keyed_dir = Path(tmp) / "open", Path(tmp) / "keyed"
        keys = KeyStore(keyed_dir)
        _, admin = keys.create(name="admin", scopes=["admin"])
        _, reader = keys.create(name="reader", scopes=["read"], collections=["bench"])
        ports = {"open": 18931, "keyed": 18932}
        servers = [start(open_dir, ports["open"]), start(keyed_dir, ports["keyed"])]
        try:
            bases = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
            setup: dict[str, dict[str, str]] = {
                "open": {},
                "keyed": {"Authorization": f"Bearer {admin}"},
            }
            use: dict[str, dict[str, str]] = {
                "open": {},
                "keyed": {"Authorization": f"Bearer {reader}"},
            }
            doc_ids = {}
            for name in bases:
                wait_up(bases[name], setup[name])
                doc_ids[name] = seed(bases[name], setup[name], args.documents)

            def models(c: httpx.Client, n: str) -> httpx.Response:
                return c.get("/v1/models", headers=use[n])

            def document(c: httpx.Client, n: str) -> httpx.Response:
                return c.get(f"/v1/documents/{doc_ids[n]}", headers=use[n])

            def search(c: httpx.Client, n: str) -> httpx.Response:
                body = {"query": "refund annual plan", "collection": "bench"}
                return c.post("/v1/search", json=body, headers=use[n])

            routes: dict[str, Callable[[httpx.Client, str], httpx.Response]] = {
                "GET /v1/models": models,
                "GET /v1/documents/{id}": document,
                "POST /v1/search": search,
            }
            clients = {name: httpx.Client(base_url=base) for name, base in bases.items()}
            print(
                f"{args.requests} requests per route and server, sequential, alternating "
                f"in blocks of {args.block}; load average {os.getloadavg()[0]:.1f}"
            )
            print(
                f"{'route':24} {'open p50':>9} {'keyed p50':>9} {'diff':>7} "
                f"{'open p99':>9} {'keyed p99':>9} {'diff':>7}  (ms)"
            )
            for route, call in routes.items():
                times: dict[str, list[float]] = {"open": [], "keyed": []}
                for name in bases:  # warm-up
                    for _ in range(20):
                        call(clients[name], name).raise_for_status()
                while len(times["keyed"]) < args.requests:
                    for name in bases:
                        for _ in range(args.block):
                            t0 = time.perf_counter()
                            response = call(clients[name], name)
                            times[name].append((time.perf_counter() - t0) * 1000)
                            response.raise_for_status()
                p50 = {n: percentile(t, 0.50) for n, t in times.items()}
                p99 = {n: percentile(t, 0.99) for n, t in times.items()}
                print(
                    f"{route:24} {p50['open']:9.3f} {p50['keyed']:9.3f} "
                    f"{p50['keyed'] - p50['open']:+7.3f} {p99['open']:9.3f} "
                    f"{p99['keyed']:9.3f} {p99['keyed'] - p99['open']:+7.3f}"
                )
        finally:
            for server in servers:
                server.terminate()
                server.wait(timeout=30)


if __name__ == "__main__":
    main()
