"""Turn stored bytes into plain text: the text that chunk spans and citations point into."""

from __future__ import annotations

import codecs
import logging
import re
import warnings
import zipfile
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath

from .errors import (
    CorruptDocumentError,
    EncryptedPdfError,
    InvalidPdfError,
    InvalidTextError,
    NoTextError,
    UnsupportedTypeError,
)

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

MEDIA_TYPES: dict[str, str] = {
    ".txt": "text/plain",
    ".text": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".html": "text/html",
    ".htm": "text/html",
    ".pdf": "application/pdf",
    ".docx": DOCX,
}


def media_type_for(filename: str) -> str:
    """The media type we store for `filename`, judged by its extension."""
    suffix = PurePosixPath(filename).suffix.lower()
    try:
        return MEDIA_TYPES[suffix]
    except KeyError:
        supported = ", ".join(sorted(MEDIA_TYPES))
        shown = suffix or "no extension"
        raise UnsupportedTypeError(
            f"unsupported file type ({shown}); supported extensions: {supported}"
        ) from None


def extract_text(path: Path, media_type: str) -> tuple[str, str]:
    """Return `(text, served_media_type)`; the latter adds the charset for text types."""
    if media_type == "application/pdf":
        text, served = _pdf_text(path), media_type
    elif media_type == DOCX:
        text, served = _docx_text(path), media_type
    else:
        raw, charset = decode_text(path.read_bytes())
        served = f"{media_type}; charset={charset}"
        text = _html_text(raw) if media_type == "text/html" else raw
    text = _normalise(text)
    if not text.strip():
        raise NoTextError("the file contains no extractable text")
    return text, served


def decode_text(data: bytes) -> tuple[str, str]:
    """Strict decoding: UTF-8 (BOM optional) or UTF-16 with a BOM; anything else is rejected
    so that no citation ever quotes replacement characters."""
    if data.startswith(codecs.BOM_UTF8):
        data, charset = data[len(codecs.BOM_UTF8) :], "utf-8"
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError as exc:
            raise InvalidTextError(f"invalid UTF-16 at byte {exc.start}; file rejected") from None
    else:
        charset = "utf-8"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidTextError(
            f"not valid UTF-8 (first bad byte at offset {exc.start}); the file was rejected, "
            "not decoded with replacement characters: re-save it as UTF-8"
        ) from None
    if "\x00" in text:
        raise InvalidTextError("contains NUL bytes: this looks like a binary file, not text")
    return text, charset


def _normalise(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.strip("\n")


_ENCRYPTED = "the PDF is encrypted with a password; upload it unlocked"


def _pdf_text(path: Path) -> str:
    with path.open("rb") as fh:
        head = fh.read(1024)
    if b"%PDF-" not in head:
        raise InvalidPdfError("the file has a .pdf name but is not a PDF (no %PDF- header)")
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, PdfReadError, PdfStreamError

    # pypdf reports recoverable damage through logging and warnings; a damaged file
    # is judged by whether text comes out, not by those messages.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = PdfReader(path, strict=False)
            if reader.is_encrypted and not reader.decrypt(""):
                raise EncryptedPdfError(_ENCRYPTED)
            pages = [page.extract_text() or "" for page in reader.pages]
    except EncryptedPdfError:
        raise
    except FileNotDecryptedError:
        raise EncryptedPdfError(_ENCRYPTED) from None
    except (PdfReadError, PdfStreamError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CorruptDocumentError(f"the PDF is damaged and cannot be read ({exc})") from None
    except Exception as exc:  # pypdf raises assorted errors on malformed input
        raise CorruptDocumentError(f"the PDF is damaged and cannot be read ({exc!r})") from None
    text = "\n\n".join(page.strip() for page in pages if page.strip())
    if not text:
        raise NoTextError("the PDF has no extractable text (a scan? OCR it first)")
    return text


def _docx_text(path: Path) -> str:
    if not zipfile.is_zipfile(path):
        raise CorruptDocumentError("the file has a .docx name but is not a DOCX (not a zip)")
    import docx

    try:
        document = docx.Document(str(path))
    except Exception as exc:  # python-docx raises KeyError, ValueError, lxml errors...
        raise CorruptDocumentError(f"the DOCX is damaged and cannot be read ({exc})") from None
    blocks: list[str] = [p.text for p in document.paragraphs if p.text.strip()]
    for table in document.tables:
        for row in table.rows:
            cells = [cell.text.strip() for cell in row.cells]
            if any(cells):
                blocks.append(" | ".join(cells))
    return "\n\n".join(blocks)


_BLOCK_TAGS = frozenset(
    {
        *("address", "article", "aside", "blockquote", "dd", "div", "dl", "dt", "fieldset"),
        *("figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6"),
        *("header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table", "tr"),
        *("ul", "title"),
    }
)
_SKIP_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "head"})


class _HTMLText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip_depth = 0
        self.in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        elif tag in _SKIP_TAGS:
            self.skip_depth += 1
        if tag in _BLOCK_TAGS:
            self.parts.append("\n\n")
        elif tag == "br":
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        elif tag in _SKIP_TAGS and self.skip_depth:
            self.skip_depth -= 1
        if tag in _BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self.in_title or not self.skip_depth:
            self.parts.append(data)


def _html_text(html: str) -> str:
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    paragraphs = (re.sub(r"\s+", " ", p).strip() for p in re.split(r"\n\s*\n", text))
    return "\n\n".join(p for p in paragraphs if p)
