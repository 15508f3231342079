"""Issue 29's attacks, rerun against a real `stream-rag serve` on 127.0.0.1 (ports 19700-19799):

    python -m loadtests.attack_harden connections [--hold 1000]
    python -m loadtests.attack_harden ingest [--heavy 42] [--pages 20] [--operations 2000]

`connections`: one address (127.0.0.2) opens `--hold` idle connections, then eight addresses
(127.0.0.10-17) open 128 each; each time `/healthz`, `/readyz` and an admin request from
127.0.0.3 are counted (200s and 503s), and how many of the held connections the server took.
`ingest`: `--heavy` CPU-heavy PDFs into collection `a` at once, then a 547-byte text into
collection `b`: the seconds until the small one is stored, and until all are done.
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

from loadtests.server_proc import Server
from stream_rag.access.keys import KeyStore
from tests.hostile import heavy_pdf

PORT = 19731


def serve(data: Path, env: dict[str, str] | None = None) -> Server:
    server = Server(data, env)
    server.port, server.url = PORT, f"http://127.0.0.1:{PORT}"
    server.start()
    return server


def hold(source: str, n: int) -> tuple[list[socket.socket], int]:
    """`n` connections from `source`, sending nothing; also how many the server refused at
    once (a response, or a close, before any request)."""
    held: list[socket.socket] = []
    for _ in range(n):
        sock = socket.socket()
        sock.bind((source, 0))
        sock.connect(("127.0.0.1", PORT))
        held.append(sock)
    time.sleep(1)  # a refusal is written as the connection is accepted
    refused = 0
    for sock in held:
        sock.setblocking(False)
        try:
            sock.recv(1, socket.MSG_PEEK)  # a response before any request, or the close
            refused += 1
        except BlockingIOError:
            pass
        except OSError:
            refused += 1
    return held, refused


def probe(admin: str) -> Counter[str]:
    seen: Counter[str] = Counter()
    transport = httpx.HTTPTransport(local_address="127.0.0.3")
    with httpx.Client(transport=transport, timeout=30) as client:
        for _ in range(10):
            for path, headers in (
                ("/healthz", {}),
                ("/readyz", {}),
                ("/v1/documents", {"Authorization": f"Bearer {admin}"}),
            ):
                try:
                    code = str(
                        client.get(f"http://127.0.0.1:{PORT}{path}", headers=headers).status_code
                    )
                except httpx.TransportError as exc:
                    code = type(exc).__name__
                seen[f"{path} {code}"] += 1
    return seen


def connections(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        _, admin = KeyStore(data).create(name="ops", scopes=["admin"])
        server = serve(data, {"STREAM_RAG_HEADER_TIMEOUT_S": "60"})
        try:
            held, refused = hold("127.0.0.2", args.hold)
            print(f"one address: {args.hold} opened, {refused} refused at once; probes:")
            print(dict(probe(admin)))
            for sock in held:
                sock.close()
            time.sleep(1)  # the server sees them go
            spread: list[socket.socket] = []
            refused = 0
            for i in range(8):
                got, no = hold(f"127.0.0.{10 + i}", 128)
                spread += got
                refused += no
            print(f"eight addresses: {len(spread)} opened, {refused} refused at once; probes:")
            print(dict(probe(admin)))
            for sock in spread:
                sock.close()
        finally:
            server.stop()


def ingest(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        server = serve(
            data, {"STREAM_RAG_EXTRACT_CPU_S": "600", "STREAM_RAG_EXTRACT_WALL_S": "600"}
        )
        heavy = heavy_pdf(pages=args.pages, operations=args.operations)
        done: dict[str, float] = {}
        codes: Counter[int] = Counter()
        start = time.monotonic()

        def upload(name: str, body: bytes, collection: str) -> None:
            response = httpx.post(
                f"{server.url}/v1/documents",
                files={"file": (name, body)},
                data={"collection": collection},
                timeout=3600,
            )
            codes[response.status_code] += 1
            done[name] = time.monotonic() - start

        try:
            threads = [
                threading.Thread(target=upload, args=(f"heavy{i}.pdf", heavy + b"%" * i, "a"))
                for i in range(args.heavy)
            ]
            for thread in threads:
                thread.start()
            time.sleep(2)  # the heavy ones are all in and waiting
            small = b"Refunds are paid within 30 days of a written request. " * 10 + b"Thanks."
            upload("small.txt", small, "b")
            print(f"small upload ({len(small)} B) stored after {done['small.txt']:.1f} s")
            for thread in threads:
                thread.join()
            print(
                f"all {args.heavy} heavy PDFs ({len(heavy)} B each) done after "
                f"{max(done.values()):.1f} s; statuses {dict(codes)}"
            )
        finally:
            server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="attack", required=True)
    c = sub.add_parser("connections")
    c.add_argument("--hold", type=int, default=1000)
    i = sub.add_parser("ingest")
    i.add_argument("--heavy", type=int, default=42)
    i.add_argument("--pages", type=int, default=20)
    i.add_argument("--operations", type=int, default=2000)
    args = parser.parse_args()
    connections(args) if args.attack == "connections" else ingest(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
