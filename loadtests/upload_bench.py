"""Upload and download throughput against a real server.

    python -m loadtests.upload_bench --documents 300 --concurrency 8

Starts `stream-rag serve` on a throwaway data directory, uploads documents concurrently,
downloads each back, checks the bytes, and prints documents/s and latency percentiles.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time

import httpx

from stream_rag.retrieve.metrics import percentile

PARAGRAPH = (
    "Lumen Notes keeps a full history of every notebook. Version {i} of this page explains "
    "how plan {i} is billed, which refunds apply within {days} days, and how support answers. "
)


def make_document(i: int, kilobytes: int) -> bytes:
    text = "".join(PARAGRAPH.format(i=i, days=i % 60) for _ in range(kilobytes * 1024 // 180))
    return f"# Document {i}\n\n{text}".encode()


async def run(base_url: str, documents: int, concurrency: int, kilobytes: int) -> None:
    semaphore = asyncio.Semaphore(concurrency)
    upload_ms: list[float] = []
    download_ms: list[float] = []
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:

        async def one(i: int) -> None:
            data = make_document(i, kilobytes)
            async with semaphore:
                start = time.perf_counter()
                response = await client.post("/v1/documents", files={"file": (f"doc{i}.md", data)})
                upload_ms.append((time.perf_counter() - start) * 1000)
                response.raise_for_status()
                doc_id = response.json()["document"]["id"]
                start = time.perf_counter()
                content = await client.get(f"/v1/documents/{doc_id}/content")
                download_ms.append((time.perf_counter() - start) * 1000)
                if content.content != data:
                    raise AssertionError(f"document {doc_id} came back different")

        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(documents)))
        elapsed = time.perf_counter() - start
    print(f"documents {documents} x {kilobytes} KB, concurrency {concurrency}")
    print(f"round trips/s  {documents / elapsed:8.1f}")
    for label, values in (("upload", upload_ms), ("download", download_ms)):
        print(
            f"{label:<9} ms  p50 {statistics.median(values):7.1f}  "
            f"p95 {percentile(values, 0.95):7.1f}  max {max(values):7.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--kilobytes", type=int, default=16)
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data_dir:
        env = {**os.environ, "STREAM_RAG_DATA_DIR": data_dir, "STREAM_RAG_LOG_LEVEL": "warning"}
        server = subprocess.Popen(
            [sys.executable, "-m", "stream_rag.cli", "serve", "--port", str(args.port)], env=env
        )
        base_url = f"http://127.0.0.1:{args.port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    httpx.get(f"{base_url}/healthz").raise_for_status()
                    break
                except httpx.HTTPError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            asyncio.run(run(base_url, args.documents, args.concurrency, args.kilobytes))
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
