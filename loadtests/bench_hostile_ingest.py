"""Hostile ingest under normal traffic, against a real server on 127.0.0.1.

    python -m loadtests.bench_hostile_ingest [--idle-s 30] [--heavy 42] [--bombs 4]

Starts `stream-rag serve --sample`, runs normal traffic (a `/healthz` poller and chat clients
streaming `/v1/chat` answers) for `--idle-s` seconds as the baseline, then, with the same
traffic still running, uploads at once: `--heavy` PDFs whose pages share one heavy content
stream, `--bombs` DOCX zip bombs (2 MB inflating to 2 GB), a small PDF that would give tens of
thousands of chunks, and a 45 MB one-line .txt. Prints the server's peak RSS (and its
extraction workers') against the stated ceiling, `/healthz` p50/p99 and chat p50/p95, idle
vs hostile, and what each hostile upload got back.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from loadtests.server_proc import Server, descendants, rss_mb
from stream_rag.retrieve.metrics import percentile
from stream_rag.sse import parse_lines
from tests.hostile import docx_bomb, heavy_pdf, wordy_pdf

QUESTIONS = [
    "How long do I have to request a refund?",
    "How do I export my notes?",
    "What does the Pro plan cost?",
    "How do I contact support?",
    "Why does sync fail?",
    "Is two-factor authentication supported?",
]
SERVER_CEILING_MB = 1500  # the server process itself, whatever the uploads


@dataclass
class Traffic:
    healthz_ms: list[tuple[float, float]] = field(default_factory=list)  # (at, ms)
    chat_ms: list[tuple[float, float]] = field(default_factory=list)
    chat_errors: Counter[str] = field(default_factory=Counter)
    stop: threading.Event = field(default_factory=threading.Event)


def poll_healthz(url: str, traffic: Traffic) -> None:
    with httpx.Client(base_url=url, timeout=120) as client:
        while not traffic.stop.is_set():
            started = time.monotonic()
            try:
                client.get("/healthz").raise_for_status()
                traffic.healthz_ms.append((started, (time.monotonic() - started) * 1000))
            except httpx.HTTPError as exc:
                traffic.chat_errors[f"healthz {type(exc).__name__}"] += 1
            time.sleep(0.05)


def chat_client(url: str, traffic: Traffic, offset: int) -> None:
    with httpx.Client(base_url=url, timeout=120) as client:
        n = offset
        while not traffic.stop.is_set():
            question = QUESTIONS[n % len(QUESTIONS)]
            n += 1
            started = time.monotonic()
            last = ""
            try:
                with client.stream("POST", "/v1/chat", json={"question": question}) as reply:
                    for event in parse_lines(reply.iter_lines()):
                        last = event.event
            except httpx.HTTPError as exc:
                traffic.chat_errors[type(exc).__name__] += 1
                continue
            if last == "done":
                traffic.chat_ms.append((started, (time.monotonic() - started) * 1000))
            else:
                traffic.chat_errors[f"ended with {last or 'nothing'}"] += 1


def sample_rss(pid: int, stop: threading.Event, peaks: dict[str, float]) -> None:
    children: list[int] = []
    rounds = 0
    while not stop.is_set():
        if rounds % 20 == 0:  # scanning /proc is costly: find the workers every 2 s
            children = descendants(pid)
        rounds += 1
        server = rss_mb(pid)
        workers = [rss_mb(child) for child in children]
        peaks["server"] = max(peaks.get("server", 0.0), server)
        peaks["worker"] = max(peaks.get("worker", 0.0), max(workers, default=0.0))
        peaks["total"] = max(peaks.get("total", 0.0), server + sum(workers))
        time.sleep(0.1)


def upload(url: str, name: str, data: bytes, results: list[tuple[str, int, str, float]]) -> None:
    started = time.monotonic()
    try:
        reply = httpx.post(f"{url}/v1/documents", files={"file": (name, data)}, timeout=1800)
        error = reply.json().get("error", {}) if reply.status_code >= 400 else {}
        detail = error.get("limit") or error.get("code") or "stored"
        results.append((name, reply.status_code, str(detail), time.monotonic() - started))
    except httpx.HTTPError as exc:
        results.append((name, 0, type(exc).__name__, time.monotonic() - started))


def window(samples: list[tuple[float, float]], start: float, end: float) -> list[float]:
    return [ms for at, ms in samples if start <= at < end]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle-s", type=float, default=30.0)
    parser.add_argument("--heavy", type=int, default=42)
    parser.add_argument("--bombs", type=int, default=4)
    parser.add_argument("--chat-clients", type=int, default=2)
    parser.add_argument("--extract-cpu-s", default="2", help="STREAM_RAG_EXTRACT_CPU_S")
    parser.add_argument("--extract-wall-s", default="15", help="STREAM_RAG_EXTRACT_WALL_S")
    args = parser.parse_args()

    files: list[tuple[str, bytes]] = [(f"heavy{i}.pdf", heavy_pdf()) for i in range(args.heavy)]
    files += [(f"bomb{i}.docx", docx_bomb(2048)) for i in range(args.bombs)]
    files.append(("wordy.pdf", wordy_pdf(pages=1500, words=1500)))  # 20M chars of text
    files.append(("line.txt", b"lorem ipsum dolor sit amet " * 1_700_000))  # 45 MB, one line
    sizes = ", ".join(f"{n} {len(d) // 1024} KB" for n, d in files if not n.startswith("heavy"))
    print(
        f"# STREAM_RAG_EXTRACT_CPU_S={args.extract_cpu_s} "
        f"STREAM_RAG_EXTRACT_WALL_S={args.extract_wall_s}, other settings default"
    )
    print(f"# hostile files: {args.heavy} x heavy.pdf {len(files[0][1]) // 1024} KB; {sizes}")

    with tempfile.TemporaryDirectory() as tmp:
        server = Server(
            Path(tmp) / "data",
            {
                "STREAM_RAG_EXTRACT_CPU_S": args.extract_cpu_s,
                "STREAM_RAG_EXTRACT_WALL_S": args.extract_wall_s,
            },
        )
        print(f"# server started in {server.start('--sample'):.1f} s on {server.url}")
        traffic, stop_rss, peaks = Traffic(), threading.Event(), dict[str, float]()
        threads = [threading.Thread(target=poll_healthz, args=(server.url, traffic))]
        threads += [
            threading.Thread(target=chat_client, args=(server.url, traffic, i))
            for i in range(args.chat_clients)
        ]
        sampler = threading.Thread(target=sample_rss, args=(server.pid, stop_rss, peaks))
        try:
            sampler.start()
            for thread in threads:
                thread.start()
            idle_start = time.monotonic()
            time.sleep(args.idle_s)
            idle_peaks = dict(peaks)
            hostile_start = time.monotonic()
            results: list[tuple[str, int, str, float]] = []
            uploads = [
                threading.Thread(target=upload, args=(server.url, name, data, results))
                for name, data in files
            ]
            for thread in uploads:
                thread.start()
            for thread in uploads:
                thread.join()
            hostile_end = time.monotonic()
        finally:
            traffic.stop.set()
            stop_rss.set()
            for thread in [*threads, sampler]:
                if thread.is_alive():
                    thread.join()
            server.stop()

    idle_h = window(traffic.healthz_ms, idle_start, hostile_start)
    host_h = window(traffic.healthz_ms, hostile_start, hostile_end)
    idle_c = window(traffic.chat_ms, idle_start, hostile_start)
    host_c = window(traffic.chat_ms, hostile_start, hostile_end)
    print(f"# idle {hostile_start - idle_start:.0f} s, hostile {hostile_end - hostile_start:.0f} s")
    print(
        f"server RSS peak: idle {idle_peaks.get('server', 0):.0f} MB, overall "
        f"{peaks.get('server', 0):.0f} MB (ceiling {SERVER_CEILING_MB} MB: "
        f"{'OK' if peaks.get('server', 0) < SERVER_CEILING_MB else 'OVER'}); largest "
        f"extraction worker {peaks.get('worker', 0):.0f} MB (RLIMIT_AS 1024 MB); server + "
        f"workers {peaks.get('total', 0):.0f} MB"
    )
    for label, idle, hostile, q in (
        ("/healthz", idle_h, host_h, 99),
        ("chat", idle_c, host_c, 95),
    ):
        print(
            f"{label}: idle n={len(idle)} p50 {percentile(idle, 0.5):.1f} ms "
            f"p{q} {percentile(idle, q / 100):.1f} ms | hostile n={len(hostile)} "
            f"p50 {percentile(hostile, 0.5):.1f} ms p{q} {percentile(hostile, q / 100):.1f} ms "
            f"(x{percentile(hostile, q / 100) / percentile(idle, q / 100):.2f})"
        )
    print(f"normal-traffic errors: {dict(traffic.chat_errors) or 'none'}")
    outcome = Counter((status, detail) for _, status, detail, _ in results)
    for (status, detail), count in sorted(outcome.items()):
        print(f"hostile uploads: {count:3d} x {status} {detail}")
    slowest = max(results, key=lambda r: r[3])
    print(f"slowest hostile upload answered after {slowest[3]:.1f} s ({slowest[0]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
