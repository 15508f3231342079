"""A real `stream-rag serve` in a child process on 127.0.0.1, for the ingest benchmarks."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Server:
    """`stream-rag serve` on a data directory; start, kill -9, stop (SIGTERM), restart."""

    def __init__(self, data_dir: Path, env: Mapping[str, str] | None = None) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "STREAM_RAG_DATA_DIR": str(data_dir),
            "STREAM_RAG_LOG_LEVEL": "warning",
            "STREAM_RAG_ACCESS_LOG": "false",
            **(env or {}),
        }
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = data_dir.parent / f"serve-{self.port}.log"

    def start(self, *extra: str, timeout_s: float = 300.0) -> float:
        """Start and wait until `/healthz` answers; returns the seconds that took."""
        started = time.monotonic()
        log = self.log_path.open("ab")
        command = [sys.executable, "-m", "stream_rag.cli", "serve", "--port", str(self.port)]
        self.process = subprocess.Popen([*command, *extra], env=self.env, stdout=log, stderr=log)
        log.close()
        while time.monotonic() - started < timeout_s:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited; see {self.log_path}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return time.monotonic() - started
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the server did not answer within {timeout_s} s")

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def kill9(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self, timeout_s: float = 120.0) -> int:
        """SIGTERM, then wait (kill -9 after `timeout_s`); returns the exit code."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()


def descendants(pid: int) -> list[int]:
    """Child processes of `pid`, recursively (extraction workers and their forkserver)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    out: list[int] = []
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0
