"""A lean HTTP/1.1 client for a load generator's SSE streams: one request per connection, the
response's body read straight off the socket (chunked or not).

`bench_stream`'s clients share the cores with the server they measure; through httpx a stream
cost them ~2 ms of CPU (building the request, httpcore's pool, h11's parsing, cookies), most of
it outside the body they read. This reads the same bytes with asyncio's stream reader.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any


class ResponseError(Exception):
    """The response was not HTTP/1.1 as this client reads it."""


async def post_json(
    host: str, port: int, path: str, payload: Any
) -> tuple[int, asyncio.StreamReader, asyncio.StreamWriter, bool]:
    """Send one POST (the connection closes after it); the status, the reader at the body,
    its writer, and whether the body is chunked."""
    body = json.dumps(payload).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: text/event-stream\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(head.encode() + body)
    status_line, *lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        writer.close()
        raise ResponseError(f"not an HTTP/1.x status line: {status_line!r}")
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines if x)}
    if headers.get("content-encoding", "identity") != "identity":
        writer.close()
        raise ResponseError("compressed bodies are not read here")
    return int(parts[1]), reader, writer, "chunked" in headers.get("transfer-encoding", "")


async def body_chunks(reader: asyncio.StreamReader, chunked: bool) -> AsyncIterator[bytes]:
    """The body's bytes as they arrive: chunked framing taken off, else up to the close."""
    if not chunked:
        while data := await reader.read(65536):
            yield data
        return
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";", 1)[0], 16)
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers, then the end
                pass
            return
        data = await reader.readexactly(size + 2)
        if data[-2:] != b"\r\n":
            raise ResponseError("a chunk did not end in CRLF")
        yield data[:-2]
