"""`stream-rag loadtest`: headless load against the gated service and its two baselines.

Starts the fake model at a given token rate, then three servers on loopback, each a separate
process whose CPU time is read from /proc: the raw pass-through proxy (no retrieval, no gate),
ungated RAG (`STREAM_RAG_UNGATED_BASELINE`: same retrieval and model, no checks) and the gated
service. For each concurrency level the three run in rounds, one after the other, the order
changing from round to round (so a busy neighbour, or what the phase before left behind,
hurts all alike), and the
report shows what retrieval and gating cost as ratios from the same run: pooled, and the
median and range of the rounds' own. `--url` loads an existing deployment instead.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx

from .report import Phase, write_report
from .users import Answer, Endpoint, run_load

TARGETS = ("raw", "ungated", "gated")
CONTROL = "control"  # a second ungated server, started after the others
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_MAIN = "import sys; from stream_rag.cli import main; sys.exit(main())"
_RAW = "import sys; from stream_rag.loadtest.raw_proxy import main; sys.exit(main())"


class LoadTestError(Exception):
    """A process of the load test did not start, or the arguments cannot work."""


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    load = commands.add_parser(
        "loadtest",
        help="load-test the gated service against raw and ungated baselines (needs [load])",
        description="Headless load test on loopback: starts the fake model and the servers, "
        "runs each concurrency level until --requests answers or --duration seconds, and "
        "writes report.md, answers.csv and latency.png to --out. Needs the `load` extra: "
        "pip install 'stream-rag[load]'.",
    )
    load.add_argument("--users", type=int, nargs="+", default=[10, 50], help="concurrency levels")
    load.add_argument(
        "--requests", type=int, default=200, help="answers per level, target and round"
    )
    load.add_argument(
        "--duration", type=float, default=120.0, help="seconds per level, target and round at most"
    )
    load.add_argument(
        "--rounds", type=int, default=6, help="rounds per level (the targets' order changes)"
    )
    load.add_argument(
        "--tokens-per-second", type=float, default=0.0, help="fake model pace (0: no pacing)"
    )
    load.add_argument(
        "--paraphrase",
        type=float,
        default=0.0,
        metavar="RATE",
        help="share of the fake model's sentences reworded (grey-zone for the gate: its "
        "semantic stage decides them), as a real model writes; 0: quotes",
    )
    load.add_argument("--endpoint", choices=["chat", "openai"], default="chat")
    load.add_argument(
        "--distinct",
        action="store_true",
        help="number every question, so no embedding comes from the query cache",
    )
    load.add_argument(
        "--targets",
        nargs="+",
        choices=[*TARGETS, CONTROL],
        default=list(TARGETS),
        help="what to load, started in this order (control: a second ungated server, the "
        "same run's noise floor; with four targets use --rounds 8)",
    )
    from ..cli.remote import server_url  # here: the CLI's package imports this module

    load.add_argument(
        "--url", type=server_url, help="load this running deployment instead (no baselines)"
    )
    load.add_argument("--allow-remote", action="store_true", help="allow a non-loopback --url")
    load.add_argument(
        "--out",
        type=Path,
        default=Path("report/loadtest"),
        help="report folder (default: report/loadtest, which git ignores)",
    )


def run(args: argparse.Namespace) -> int:
    try:
        import matplotlib  # noqa: F401  (checked first: a long run must not fail at the end)
    except ImportError:
        print(
            "stream-rag: error: loadtest needs the `load` extra (locust, matplotlib): "
            "pip install 'stream-rag[load]'  (from a checkout: pip install -e '.[load]')",
            file=sys.stderr,
        )
        return 2
    try:
        phases = load_phases(args)
    except LoadTestError as exc:
        print(f"stream-rag: error: {exc}", file=sys.stderr)
        return 1
    report = write_report(phases, args.out, command=" ".join(["stream-rag", *sys.argv[1:]]))
    print(report.read_text(encoding="utf-8"))
    print(f"report: {report}", file=sys.stderr)
    return 0 if all(p.ended("none") == 0 for p in phases) else 1


def load_phases(args: argparse.Namespace) -> list[Phase]:
    """Run the load `args` ask for (blocking); every phase, each with its answers."""
    if min(args.users) < 1 or args.requests < 1 or args.duration <= 0 or args.rounds < 1:
        raise LoadTestError("--users, --requests, --duration and --rounds must be positive")
    if not 0 <= args.paraphrase <= 1:
        raise LoadTestError("--paraphrase must be between 0 and 1")
    if args.tokens_per_second < 0:  # -5 ran unpaced, as 0 does
        raise LoadTestError("--tokens-per-second must be 0 (no pacing) or more")
    endpoint: Endpoint = args.endpoint
    if args.url:
        host = urlsplit(args.url).hostname or ""
        if host not in _LOOPBACK and not args.allow_remote:
            raise LoadTestError(f"{host} is not loopback; pass --allow-remote to load it")
        # Here, not at the top: the cli package imports this module.
        from ..cli.keys import client_headers, error_message

        # The key in STREAM_RAG_API_KEY, as `ask --url` sends it.
        given = _Server(args.url.rstrip("/"), None, client_headers())
        # One request first: a missing or refused key would otherwise make every answer a
        # 401 in a report that looks like a finished run.
        try:
            probe = httpx.get(f"{given.url}/v1/models", headers=given.headers, timeout=30)
        except httpx.HTTPError as exc:
            raise LoadTestError(f"cannot reach {args.url}: {exc}") from None
        if probe.status_code in (401, 403):
            raise LoadTestError(f"{args.url}: {error_message(probe)}")
        return _phases({"given": given}, args, endpoint, None)
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="stream-rag-load-")))
        # Runs after the processes stopped, before the directory goes: keep their logs.
        stack.callback(_keep_logs, work, args.out)
        fake_port = free_port()
        fake = [
            "fake-llm",
            "--port",
            str(fake_port),
            "--tokens-per-second",
            str(args.tokens_per_second),
            "--paraphrase",
            str(args.paraphrase),
        ]
        fake_pid = stack.enter_context(
            server_process("fake-llm", [_MAIN, *fake], {}, fake_port, "/v1/models", work)
        )
        model_url = f"http://127.0.0.1:{fake_port}/v1"
        servers: dict[str, _Server] = {}
        for target in args.targets:
            port = free_port()
            if target == "raw":
                argv = [_RAW, "--port", str(port), "--model-url", model_url]
                env: dict[str, str] = {}
            else:
                argv = [_MAIN, "serve", "--sample", "--port", str(port)]
                env = {
                    "STREAM_RAG_DATA_DIR": str(work / target),
                    "STREAM_RAG_LLM_BASE_URL": model_url,
                    "STREAM_RAG_LLM_MODEL": "fake",
                    "STREAM_RAG_UNGATED_BASELINE": str(target in ("ungated", CONTROL)).lower(),
                }
            pid = stack.enter_context(server_process(target, argv, env, port, "/healthz", work))
            servers[target] = _Server(f"http://127.0.0.1:{port}", pid)
        if endpoint == "openai" and "raw" in servers:
            raise LoadTestError("the raw baseline speaks /v1/chat only: use --endpoint chat")
        return _phases(servers, args, endpoint, fake_pid)


def _keep_logs(work: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for log in work.glob("*.log"):
        shutil.copyfile(log, out / log.name)


@dataclass(frozen=True, slots=True)
class _Server:
    url: str
    pid: int | None
    headers: Mapping[str, str] | None = None  # a running deployment's key


def _phases(
    servers: dict[str, _Server], args: argparse.Namespace, endpoint: Endpoint, model_pid: int | None
) -> list[Phase]:
    phases: list[Phase] = []
    names = list(servers)
    for users in args.users:
        # Warm up each server once per level (connections, caches), unrecorded.
        for name in names:
            _load(name, servers[name], endpoint, users, users, args, f"w{users}-")
        for round_ in range(args.rounds):
            for name in round_order(names, round_):
                server = servers[name]
                gc.collect()  # the load generator's garbage from the phase before, not in this one
                cpu0, model0 = cpu_seconds(server.pid), cpu_seconds(model_pid)
                loader0, t0 = time.process_time(), time.time()
                tag = f"{users}-{round_}-"
                answers, wall = _load(name, server, endpoint, users, args.requests, args, tag)
                loader = time.process_time() - loader0
                phase = Phase(
                    name,
                    users,
                    round_,
                    answers,
                    wall,
                    _since(cpu0, server.pid),
                    rss_mb(server.pid),
                    t0,
                    loader,
                    _since(model0, model_pid),
                )
                phases.append(phase)
                print(phase.summary(), file=sys.stderr, flush=True)
    return phases


def round_order(names: list[str], round_: int) -> list[str]:
    """The targets' order in round `round_`: every ordering in turn, each rotation followed by
    its mirror (for three targets: r u g, g u r, u g r, r g u, g r u, u r g), so over six
    rounds each target runs first, second and last, and after each of the others, equally."""
    shift = (round_ // 2) % len(names)
    rotated = names[shift:] + names[:shift]
    return rotated if round_ % 2 == 0 else rotated[::-1]


def _since(before: float | None, pid: int | None) -> float | None:
    return None if before is None else (cpu_seconds(pid) or 0.0) - before


def _load(
    name: str,
    server: _Server,
    endpoint: Endpoint,
    users: int,
    requests: int,
    args: argparse.Namespace,
    tag: str,
) -> tuple[list[Answer], float]:
    kind: Endpoint = "raw" if name == "raw" else endpoint
    return anyio.run(
        lambda: run_load(
            server.url,
            endpoint=kind,
            users=users,
            requests=requests,
            duration_s=args.duration,
            distinct=args.distinct,
            tag=tag,
            headers=server.headers,
        )
    )


def cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU time of `pid` and its children that were waited for (Linux)."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    return sum(int(f) for f in fields[11:15]) / ticks


def rss_mb(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def server_process(
    name: str, argv: list[str], env: dict[str, str], port: int, ready: str, work: Path
) -> Iterator[int]:
    """Run `python -c argv[0] argv[1:]` until the context ends; yields its pid once `ready`
    answers 200."""
    log_path = work / f"{name}.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", *argv],
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=work,
        )
    try:
        deadline = time.monotonic() + 300
        while True:
            if proc.poll() is not None:
                tail = log_path.read_text(errors="replace")[-2000:]
                raise LoadTestError(f"{name} exited with {proc.returncode}:\n{tail}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}{ready}", timeout=5).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise LoadTestError(f"{name} did not start within 300 s (log: {log_path})")
            time.sleep(0.2)
        yield proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
