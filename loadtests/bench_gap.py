"""Gated against ungated in one process: CPU per cached answer, and the calls that differ.

    python -m loadtests.bench_gap --users 10 --answers 300 --rounds 8 [--profile]

`stream-rag loadtest` compares two server processes, each with its own share of a shared
machine's noise; this builds both apps in one process (the sample KB in two data
directories, the real model client against a `fake-llm` process), drives each through ASGI
(no uvicorn, no sockets to the apps) in alternating batches of the same cached questions, and
prints the process CPU per answer of each batch: the client's share is the same for both (the
responses are the same bytes), so the difference is the gate's. `--profile` then profiles one
batch of each and lists the functions whose calls per answer differ (deterministic, unlike the
CPU figures).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
from starlette.types import ASGIApp

from stream_rag.config import Settings
from stream_rag.http.app import create_app
from stream_rag.index.folders import ingest_paths, sample_kb_dir
from stream_rag.loadtest.command import free_port, server_process
from stream_rag.loadtest.users import QUESTIONS
from stream_rag.services import open_store

TARGETS = ("gated", "ungated")
Message = MutableMapping[str, Any]


class _WithState:
    """Gives every request a copy of the lifespan's state, as uvicorn does."""

    def __init__(self, app: ASGIApp, state: dict[str, Any]) -> None:
        self.app, self.state = app, state

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        await self.app({**scope, "state": dict(self.state)}, receive, send)


@asynccontextmanager
async def serving(app: ASGIApp) -> AsyncIterator[httpx.AsyncClient]:
    """Run `app`'s lifespan for the duration; yields a client that calls it through ASGI."""
    state: dict[str, Any] = {}
    started, stop = anyio.Event(), anyio.Event()
    pending = [{"type": "lifespan.startup"}]

    async def receive() -> Message:
        if pending:
            return pending.pop()
        await stop.wait()
        return {"type": "lifespan.shutdown"}

    async def send(message: Message) -> None:
        if message["type"] == "lifespan.startup.failed":
            raise RuntimeError(message.get("message"))
        if message["type"] == "lifespan.startup.complete":
            started.set()

    scope: Message = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": state}

    async def lifespan() -> None:
        await app(scope, receive, send)

    async with anyio.create_task_group() as group:
        group.start_soon(lifespan)
        await started.wait()
        transport = httpx.ASGITransport(_WithState(app, state))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            yield client
        stop.set()


def sample_app(data_dir: Path, model_url: str, ungated: bool) -> ASGIApp:
    settings = Settings(
        data_dir=data_dir, llm_base_url=model_url, llm_model="fake", ungated_baseline=ungated
    )
    store = open_store(settings, processes=False)
    try:
        ingest_paths(store, [sample_kb_dir()], settings, quiet=True)
    finally:
        store.close()
    return create_app(settings)


async def batch(client: httpx.AsyncClient, users: int, answers: int) -> None:
    """`answers` cached questions over `users` concurrent streams, each read to its end."""
    issued = 0

    async def user() -> None:
        nonlocal issued
        while issued < answers:
            question = QUESTIONS[issued % len(QUESTIONS)]
            issued += 1
            async with client.stream("POST", "/v1/chat", json={"question": question}) as r:
                async for _ in r.aiter_raw():
                    pass

    async with anyio.create_task_group() as group:
        for _ in range(users):
            group.start_soon(user)


async def run(args: argparse.Namespace, model_url: str, work: Path) -> None:
    apps = {t: sample_app(work / t, model_url, t == "ungated") for t in TARGETS}
    async with serving(apps["gated"]) as gated, serving(apps["ungated"]) as ungated:
        clients = {"gated": gated, "ungated": ungated}
        for client in clients.values():
            await batch(client, args.users, 4 * args.users)  # caches, connections
        spent: dict[str, list[float]] = {t: [] for t in TARGETS}
        for round_ in range(args.rounds):
            for target in TARGETS if round_ % 2 == 0 else TARGETS[::-1]:
                gc.collect()
                t0 = time.process_time()
                await batch(clients[target], args.users, args.answers)
                spent[target].append((time.process_time() - t0) / args.answers * 1000)
                load = os.getloadavg()[0]
                print(f"round {round_} {target:<8} {spent[target][-1]:6.2f} ms  load {load:.1f}")
        for target, values in spent.items():
            print(
                f"{target:<8} CPU ms/answer median {statistics.median(values):.2f} "
                f"(range {min(values):.2f}-{max(values):.2f}, {len(values)} batches)"
            )
        if args.profile:
            profiles = {}
            for target, client in clients.items():
                gc.collect()
                profile = cProfile.Profile()
                profile.enable()
                await batch(client, args.users, args.answers)
                profile.disable()
                profiles[target] = calls(profile)
            show_differences(profiles["gated"], profiles["ungated"], args.answers)


def calls(profile: cProfile.Profile) -> dict[str, int]:
    stats: dict[tuple[str, int, str], tuple[int, int, float, float, object]]
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    return {f"{Path(f).name}:{line}:{name}": v[1] for (f, line, name), v in stats.items()}


def show_differences(gated: dict[str, int], ungated: dict[str, int], answers: int) -> None:
    """The functions called a different number of times per answer (more than 0.05)."""
    rows = [
        (gated.get(k, 0) / answers, ungated.get(k, 0) / answers, k)
        for k in sorted(set(gated) | set(ungated))
    ]
    rows = [r for r in rows if abs(r[0] - r[1]) > 0.05]
    rows.sort(key=lambda r: -abs(r[0] - r[1]))
    print(f"calls per answer that differ ({len(rows)} functions): gated, ungated")
    for g, u, name in rows[:40]:
        print(f"{g:9.2f} {u:9.2f}  {name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--answers", type=int, default=300, help="answers per batch")
    parser.add_argument("--rounds", type=int, default=8, help="batches per target")
    parser.add_argument("--profile", action="store_true", help="list the calls that differ")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-gap-") as tmp:
        work, port = Path(tmp), free_port()
        main_ = "import sys; from stream_rag.cli import main; sys.exit(main())"
        fake = [main_, "fake-llm", "--port", str(port)]
        with server_process("fake-llm", fake, {}, port, "/v1/models", work):
            anyio.run(run, args, f"http://127.0.0.1:{port}/v1", work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
