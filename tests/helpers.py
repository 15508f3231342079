"""Builders for real test files (PDF, DOCX) and a real uvicorn server in a thread."""

from __future__ import annotations

import io
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import anyio.abc
import uvicorn
from starlette.types import ASGIApp


def make_pdf(pages: list[str]) -> bytes:
    """A minimal, valid PDF with one line of Helvetica text per page."""
    objects: list[bytes] = []
    n_pages = len(pages)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n_pages))
    font_id = 3 + 2 * n_pages
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    for i, text in enumerate(pages):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET".encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font_id} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    return pdf_file(objects)


def pdf_file(objects: list[bytes]) -> bytes:
    """A PDF made of `objects` (numbered from 1, the catalog first) with its xref table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    )
    return out.getvalue()


def make_encrypted_pdf(text: str, password: str = "s3cret") -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf([text]))))
    writer.encrypt(user_password=password, owner_password=password, algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx(paragraphs: list[str], table: list[list[str]] | None = None) -> bytes:
    import docx

    document = docx.Document()
    for paragraph in paragraphs:
        document.add_paragraph(paragraph)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, cell in enumerate(row):
                grid.cell(r, c).text = cell
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def running_server(app: ASGIApp, http: str = "h11") -> Iterator[str]:
    """Serve `app` with a real uvicorn in a thread; yields the base URL. h11, as the server
    runs, unless `http` names another of uvicorn's HTTP implementations."""
    port = free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", http=http
    )
    with serving_thread(config):
        yield f"http://127.0.0.1:{port}"


# Bounds only against a hang: no assertion waits on the machine's speed, and a loaded machine
# is many times slower than an idle one (httpx's default 5 s ran out), so each is generous.
# A wait on an event, a socket, a child process, or a server setting that must never fire:
HANG_GUARD_S = 180.0
# A server (a thread or a child process) starting to answer:
START_GUARD_S = HANG_GUARD_S
# A test's HTTP call to a server:
HTTP_GUARD_S = HANG_GUARD_S


@contextmanager
def serving_thread(config: uvicorn.Config) -> Iterator[uvicorn.Server]:
    """A uvicorn server for `config` running in a thread, once it has started; stopped after."""
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_GUARD_S
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield server
    finally:
        server.should_exit = True
        thread.join(timeout=START_GUARD_S)


def staged_parts(data_dir: Path) -> list[Path]:
    """The staged upload parts; a staging folder may be renamed while it is listed."""
    try:
        return list((data_dir / "tmp").rglob("*.part"))
    except FileNotFoundError:  # listed mid-rename: look again
        return staged_parts(data_dir)


def content_length(head: bytes) -> int:
    """The Content-Length of an HTTP message head (the start line and headers); 0 without
    one (a GET)."""
    return next(
        (
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )


async def read_request(stream: anyio.abc.ByteStream) -> bool:
    """Read one HTTP request (head and Content-Length body); False if the peer closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        try:
            data += await stream.receive()
        except anyio.EndOfStream:
            return False
    head, _, body = data.partition(b"\r\n\r\n")
    while len(body) < content_length(head):
        body += await stream.receive()
    return True


class TcpModelServer:
    """A scripted model server on a raw TCP socket (127.0.0.1, any free port): subclasses
    answer each connection in `serve`; `async with` gives its `/v1` base URL."""

    async def serve(self, stream: anyio.abc.SocketStream) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> str:
        self._listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._listener.serve, self.serve)
        port = self._listener.extra(anyio.abc.SocketAttribute.local_port)
        return f"http://127.0.0.1:{port}/v1"

    async def __aexit__(self, *exc: object) -> None:
        self._group.cancel_scope.cancel()
        await self._group.__aexit__(None, None, None)
        await self._listener.aclose()
