"""Hostile files, built small and fast inside the tests (never committed as binaries)."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

from .helpers import make_docx, pdf_file

_BODY_OPEN = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
    b"<w:body><w:p><w:r><w:t>"
)
_BODY_CLOSE = b"</w:t></w:r></w:p></w:body></w:document>"
_MIB = 1024 * 1024


def _deflate_repeated(prefix: bytes, unit: bytes, times: int, suffix: bytes) -> tuple[bytes, int]:
    """Raw deflate of prefix + unit*times + suffix, built from one compressed unit: after a
    full flush the compressor starts afresh, so the unit compresses to the same bytes."""
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = comp.compress(prefix) + comp.flush(zlib.Z_FULL_FLUSH)
    block = comp.compress(unit) + comp.flush(zlib.Z_FULL_FLUSH)
    tail = comp.compress(suffix) + comp.flush()
    crc = zlib.crc32(prefix)
    for _ in range(times):
        crc = zlib.crc32(unit, crc)
    return head + block * times + tail, zlib.crc32(suffix, crc)


def _zip(members: list[tuple[str, bytes, int, int]]) -> bytes:
    """A zip of pre-deflated members: (name, raw deflate data, crc32, declared size)."""
    out = io.BytesIO()
    central = io.BytesIO()
    for name, data, crc, size in members:
        offset = out.tell()
        encoded = name.encode()
        fields = (20, 0, 8, 0, 0x21, crc, len(data), size, len(encoded), 0)
        out.write(struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", *fields) + encoded + data)
        central.write(
            struct.pack("<4sH", b"PK\x01\x02", 20)
            + struct.pack("<HHHHHIIIHHHHHII", *fields, 0, 0, 0, 0, offset)
            + encoded
        )
    start = out.tell()
    out.write(central.getvalue())
    end = struct.pack(
        "<4sHHHHIIH",
        b"PK\x05\x06",
        0,
        0,
        len(members),
        len(members),
        len(central.getvalue()),
        start,
        0,
    )
    out.write(end)
    return out.getvalue()


def docx_bomb(inflated_mib: int = 2048, declared: int | None = None) -> bytes:
    """A real DOCX whose word/document.xml inflates to `inflated_mib` MiB of text (about a
    thousandth of that on disk). `declared` lies about its size in the headers."""
    source = zipfile.ZipFile(io.BytesIO(make_docx(["placeholder"])))
    members = []
    for info in source.infolist():
        if info.filename == "word/document.xml":
            data, crc = _deflate_repeated(_BODY_OPEN, b"A" * _MIB, inflated_mib, _BODY_CLOSE)
            size = len(_BODY_OPEN) + inflated_mib * _MIB + len(_BODY_CLOSE)
        else:
            raw = source.read(info)
            comp = zlib.compressobj(6, zlib.DEFLATED, -15)
            data, crc, size = comp.compress(raw) + comp.flush(), zlib.crc32(raw), len(raw)
        if declared is not None and info.filename == "word/document.xml":
            size = declared
        members.append((info.filename, data, crc, size))
    return _zip(members)


def _pdf(page_count: int, content: bytes) -> bytes:
    """`page_count` pages that all draw the same (flate-compressed) content stream."""
    stream = zlib.compress(content, 9)
    kids = " ".join(f"{4 + i} 0 R" for i in range(page_count))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {page_count} >>".encode(),
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    font = 4 + page_count
    for _ in range(page_count):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    return pdf_file(objects)


def heavy_pdf(pages: int = 200, operations: int = 20000) -> bytes:
    """A few KB of PDF whose pages share one content stream of many drawing operations: each
    page costs the parser the whole stream again, while it yields one short line of text."""
    content = b"BT /F1 12 Tf 72 720 Td (Heavy page) Tj ET\n" + b"0 0 m 1 1 l S\n" * operations
    return _pdf(pages, content)


def wordy_pdf(pages: int = 50, words: int = 600) -> bytes:
    """A small PDF whose pages share one long line of text: many chunks from few bytes."""
    line = " ".join(f"word{i % 97}." for i in range(words)).encode()
    return _pdf(pages, b"BT /F1 12 Tf 72 720 Td (" + line + b") Tj ET")
