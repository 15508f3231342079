"""Generated multi-MB documents of each kind an upload takes, for ingest benchmarks.

A product manual: headings, FAQ questions, lists and prose of varied sentences (not one
paragraph repeated, which the embedder's per-batch sharing would make look cheap), the same
for a given seed. `document(kind, size)` gives `(filename, bytes)` of about `size` bytes of
text for .txt, .md, .html, .pdf (pages of Helvetica text, written by hand) and .docx
(python-docx).
"""

from __future__ import annotations

import io
import random
import zlib

WORDS = (
    "sync export import refund plan billing invoice notebook device account password storage "
    "backup restore offline share folder team admin policy support ticket error retry licence "
    "seat upgrade downgrade trial renewal payment card region server latency cache history "
    "the a of to and in for with on is are be can will your you we this that it after before"
).split()
KINDS = ("txt", "md", "html", "pdf", "docx")


def _sentence(rnd: random.Random) -> str:
    words = [rnd.choice(WORDS) for _ in range(rnd.randint(6, 28))]
    if rnd.random() < 0.3:
        unit = rnd.choice(["MB", "GB", "days", "USD", "%"])
        words.insert(rnd.randint(0, len(words)), f"{rnd.randint(1, 500)} {unit}")
    text = " ".join(words)
    return text[0].upper() + text[1:] + rnd.choice([".", ".", ".", "?", "!"])


def sections(size: int, seed: int = 1) -> list[tuple[str, list[str]]]:
    """`(heading, paragraphs)` pairs totalling about `size` characters."""
    rnd = random.Random(seed)
    out: list[tuple[str, list[str]]] = []
    total = 0
    while total < size:
        heading = f"Section {len(out) + 1}: {rnd.choice(WORDS)} {rnd.choice(WORDS)}"
        paragraphs = []
        for _ in range(rnd.randint(2, 6)):
            kind = rnd.random()
            if kind < 0.15:
                paragraphs.append(f"How do I {rnd.choice(WORDS)} my {rnd.choice(WORDS)}?")
            elif kind < 0.3:
                items = (f"- {_sentence(rnd)}" for _ in range(rnd.randint(2, 6)))
                paragraphs.append("\n".join(items))
            else:
                paragraphs.append(" ".join(_sentence(rnd) for _ in range(rnd.randint(1, 9))))
        out.append((heading, paragraphs))
        total += len(heading) + sum(len(p) + 2 for p in paragraphs)
    return out


def markdown(size: int, seed: int = 1) -> str:
    parts = ["# Product manual"]
    for heading, paragraphs in sections(size, seed):
        parts.append(f"## {heading}")
        parts.extend(paragraphs)
    return "\n\n".join(parts) + "\n"


def plain(size: int, seed: int = 1) -> str:
    parts = ["Product manual"]
    for heading, paragraphs in sections(size, seed):
        parts.append(heading)
        parts.extend(paragraphs)
    return "\n\n".join(parts) + "\n"


def html(size: int, seed: int = 1) -> str:
    def escape(text: str) -> str:
        return text.replace("&", "&amp;").replace("<", "&lt;")

    body = ["<html><head><title>Product manual</title></head><body>"]
    for heading, paragraphs in sections(size, seed):
        body.append(f"<h2>{escape(heading)}</h2>")
        for p in paragraphs:
            if p.startswith("- "):
                items = "".join(f"<li>{escape(line[2:])}</li>" for line in p.split("\n"))
                body.append(f"<ul>{items}</ul>")
            else:
                body.append(f"<p>{escape(p)}</p>")
    body.append("</body></html>")
    return "\n".join(body)


def pdf(size: int, seed: int = 1) -> bytes:
    """Pages of Helvetica text lines (~3 KB each), as pypdf reads them back."""
    lines: list[str] = []
    for heading, paragraphs in sections(size, seed):
        lines.append(heading)
        for p in paragraphs:
            words = p.replace("\n", " ").split()
            row: list[str] = []
            for word in words:
                if sum(len(w) + 1 for w in row) + len(word) > 90:
                    lines.append(" ".join(row))
                    row = []
                row.append(word)
            lines.append(" ".join(row))
            lines.append("")
    pages = [lines[i : i + 40] for i in range(0, len(lines), 40)]
    objects: list[bytes] = []
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, page in enumerate(pages):
        text = "".join(
            "({}) Tj T*\n".format(
                line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            )
            for line in page
        )
        stream = zlib.compress(f"BT /F1 9 Tf 11 TL 40 800 Td\n{text}ET".encode("latin-1"))
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] /Contents {5 + 2 * i} 0 R "
            "/Resources << /Font << /F1 3 0 R >> >> >>".encode()
        )
        objects.append(
            f"<< /Length {len(stream)} /Filter /FlateDecode >>\nstream\n".encode()
            + stream
            + b"\nendstream"
        )
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{n} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    out.write(b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets))
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\n".encode())
    out.write(f"startxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def docx(size: int, seed: int = 1) -> bytes:
    import docx as python_docx

    document = python_docx.Document()
    document.add_heading("Product manual", 0)
    for heading, paragraphs in sections(size, seed):
        document.add_heading(heading, 2)
        for p in paragraphs:
            for line in p.split("\n"):
                document.add_paragraph(line)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def document(kind: str, size: int, seed: int = 1) -> tuple[str, bytes]:
    """`(filename, bytes)` of a generated manual of about `size` characters of text."""
    if kind == "txt":
        return "manual.txt", plain(size, seed).encode()
    if kind == "md":
        return "manual.md", markdown(size, seed).encode()
    if kind == "html":
        return "manual.html", html(size, seed).encode()
    if kind == "pdf":
        return "manual.pdf", pdf(size, seed)
    if kind == "docx":
        return "manual.docx", docx(size, seed)
    raise ValueError(f"unknown kind {kind!r}; one of {', '.join(KINDS)}")
