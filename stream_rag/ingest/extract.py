"""Turn stored bytes into plain text: the text that chunk spans and citations point into."""

from __future__ import annotations

import codecs
import logging
import re
import warnings
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from ..errors import (
    CorruptDocumentError,
    EncryptedPdfError,
    InvalidPdfError,
    InvalidTextError,
    LimitExceededError,
    NoTextError,
    UnsupportedTypeError,
)

if TYPE_CHECKING:
    from docx.document import Document as DocxDocument
    from pypdf import PdfReader

from .dates import pdf_date, property_date, stated_date
from .html import html_layout
from .layout import Extraction, Layout, Source
from .markdown import markdown_layout
from .office import docx_layout

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


MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ExtractLimits:
    """Per-document limits checked while extracting (the process limits are in extract_pool)."""

    max_chars: int = 5_000_000
    max_pages: int = 2000
    max_unzipped_bytes: int = 256 * MIB
    max_zip_ratio: float = 200.0
    max_zip_entries: int = 5000


# Members smaller than this may compress as well as they like (tiny repetitive XML does).
_RATIO_FLOOR = 1 * MIB


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


def extract_text(
    path: Path, media_type: str, limits: ExtractLimits | None = None
) -> tuple[str, str]:
    """Return `(text, served_media_type)`; the latter adds the charset for text types."""
    extraction = extract(path, media_type, limits)
    return extraction.text, extraction.media_type


def extract(path: Path, media_type: str, limits: ExtractLimits | None = None) -> Extraction:
    """The file's text (markup removed, structure kept) with where its pieces came from."""
    limits = limits or ExtractLimits()
    if media_type == "application/pdf":
        pages, saved = _pdf_pages(path, limits)
        text, starts = _join_pages(pages)
        extraction = Extraction(text, media_type, pages=starts, dated=saved)
    elif media_type == DOCX:
        layout, saved = _docx_layout(path, limits)
        extraction = Extraction(layout.text(), media_type, layout.pieces, dated=saved)
    else:
        data = path.read_bytes()
        raw, charset = decode_text(data)
        _check_chars(len(raw), limits)
        served = f"{media_type}; charset={charset}"
        bom = 0
        if charset == "utf-16":
            charset, bom = "utf-16-le", 2
        elif data.startswith(codecs.BOM_UTF8):
            bom = len(codecs.BOM_UTF8)
        source = Source(raw, charset, bom)
        if media_type == "text/html":
            layout = html_layout(raw)
        elif media_type == "text/markdown":
            layout = markdown_layout(raw)
        else:
            layout = _plain_layout(raw)
        extraction = Extraction(layout.text(), served, layout.pieces, source)
    _check_chars(len(extraction.text), limits)
    if not extraction.text.strip():
        raise NoTextError("the file contains no extractable text")
    raw = extraction.source.text if extraction.source is not None else ""
    # What the document says of its date wins over what its editor saved (ingest/dates.py).
    said = stated_date(extraction.text, raw, extraction.media_type)
    return replace(extraction, dated=said or extraction.dated)


def _plain_layout(raw: str) -> Layout:
    """Plain text as it is (line breaks normalised, blank lines at either end dropped)."""
    layout = Layout()
    lines = raw.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    first = next((i for i, line in enumerate(lines) if line), len(lines))
    last = max((i for i, line in enumerate(lines) if line), default=-1)
    at = 0
    for i, line in enumerate(raw.splitlines(keepends=True)):
        body = line.rstrip("\r\n")
        if first <= i <= last:
            if i > first:
                layout.add("\n")
            layout.copy(raw, at, at + len(body))
        at += len(line)
    return layout


def _check_chars(count: int, limits: ExtractLimits) -> None:
    if count > limits.max_chars:
        raise LimitExceededError(
            f"the document has more than {limits.max_chars:,} characters of text "
            f"(STREAM_RAG_MAX_EXTRACTED_CHARS); split it into smaller files",
            "STREAM_RAG_MAX_EXTRACTED_CHARS",
        )


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


_ENCRYPTED = "the PDF is encrypted with a password; upload it unlocked"


def _join_pages(pages: list[str]) -> tuple[str, list[tuple[int, int]]]:
    """The pages' paragraphs joined, and where each page with text begins."""
    parts: list[str] = []
    starts: list[tuple[int, int]] = []
    at = 0
    for number, page in enumerate(pages, start=1):
        body = _pdf_paragraphs(page.strip()) if page.strip() else ""
        if not body:
            continue
        if parts:
            parts.append("\n\n")
            at += 2
        starts.append((at, number))
        parts.append(body)
        at += len(body)
    return "".join(parts), starts


def _pdf_pages(path: Path, limits: ExtractLimits) -> tuple[list[str], str | None]:
    """The pages' text and the date the PDF's information says it was modified (or made)."""
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
            if len(reader.pages) > limits.max_pages:
                raise LimitExceededError(
                    f"the PDF has {len(reader.pages):,} pages, more than {limits.max_pages:,} "
                    "(STREAM_RAG_MAX_PDF_PAGES)",
                    "STREAM_RAG_MAX_PDF_PAGES",
                )
            saved = _pdf_saved(reader)
            pages: list[str] = []
            chars = 0
            for page in reader.pages:
                pages.append(page.extract_text() or "")
                chars += len(pages[-1])
                _check_chars(chars, limits)  # stop early, not after every page
    except (EncryptedPdfError, LimitExceededError):
        raise
    except FileNotDecryptedError:
        raise EncryptedPdfError(_ENCRYPTED) from None
    except (PdfReadError, PdfStreamError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CorruptDocumentError(f"the PDF is damaged and cannot be read ({exc})") from None
    except Exception as exc:  # pypdf raises assorted errors on malformed input
        raise CorruptDocumentError(f"the PDF is damaged and cannot be read ({exc!r})") from None
    pages = [page.replace("\r\n", "\n").replace("\r", "\n") for page in pages]
    if not any(page.strip() for page in pages):
        raise NoTextError("the PDF has no extractable text (a scan? OCR it first)")
    return pages, saved


_ENDS_SENTENCE = (".", "!", "?", ":", ";", "。", "！", "？")
_ENDS_CLAUSE = (*_ENDS_SENTENCE, ",")
_PDF_LIST_ITEM = re.compile(r"(?:[-*+\u2022\u2023\u25aa\u25e6\u00b7\u2013]|\d+[.)])\s")
HEADING_WORDS = 12  # a PDF line with more words is never taken for a heading


def _pdf_saved(reader: PdfReader) -> str | None:
    """When the document information says the PDF was modified (else made); damaged
    information is no date."""
    try:
        info = reader.metadata
        return None if info is None else pdf_date(info.get("/ModDate") or info.get("/CreationDate"))
    except Exception:  # pypdf resolves the dictionary's objects here
        return None


def _pdf_paragraphs(page: str) -> str:
    """A page's lines with each heading line set apart by blank lines (pypdf joins every line
    with one newline, so a heading ran into the sentence after it). A heading line: short
    (wrapped lines run nearly the full width), no closing punctuation, after a line that ends a
    sentence (or first), and before a line that starts with a capital, a digit or a list item;
    never a list item itself."""
    lines = page.split("\n")
    widest = max(len(line.strip()) for line in lines)
    out: list[str] = []
    ended = True  # the line before ends a sentence, or there is none
    for i, raw in enumerate(lines):
        line = raw.strip()
        after = lines[i + 1].strip() if i + 1 < len(lines) else ""
        heading = (
            ended
            and line
            and not _PDF_LIST_ITEM.match(line)
            and not line.endswith(_ENDS_CLAUSE)
            and len(line.split()) <= HEADING_WORDS
            and (len(lines) < 3 or len(line) <= 0.7 * widest)
            and (after[:1].isupper() or after[:1].isdigit() or bool(_PDF_LIST_ITEM.match(after)))
        )
        if heading:
            out.append(f"\n{line}\n")
        else:
            out.append(raw)
        ended = bool(heading) or line.endswith(_ENDS_SENTENCE)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def _docx_layout(path: Path, limits: ExtractLimits) -> tuple[Layout, str | None]:
    """The layout and the date the core properties say the document was modified (or made)."""
    if not zipfile.is_zipfile(path):
        raise CorruptDocumentError("the file has a .docx name but is not a DOCX (not a zip)")
    check_zip(path, limits)
    import docx

    try:
        document = docx.Document(str(path))
    except Exception as exc:  # python-docx raises KeyError, ValueError, lxml errors...
        raise CorruptDocumentError(f"the DOCX is damaged and cannot be read ({exc})") from None
    return docx_layout(document), _docx_saved(document)


def _docx_saved(document: DocxDocument) -> str | None:
    """When the core properties say the document was modified (else made); a damaged
    properties part is no date, not a failed upload."""
    try:
        props = document.core_properties
        return property_date(props.modified) or property_date(props.created)
    except Exception:  # python-docx parses the part's XML here: any error is a missing date
        return None


def check_zip(path: Path, limits: ExtractLimits) -> None:
    """Refuse zip bombs before any parser inflates them: the declared sizes (total, ratio per
    member, entry count), then the actual sizes, inflated in pieces and counted."""
    unzipped = f"{limits.max_unzipped_bytes // MIB} MB (STREAM_RAG_MAX_UNZIPPED_MB)"
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            if len(infos) > limits.max_zip_entries:
                raise LimitExceededError(
                    f"the archive has {len(infos):,} entries, more than {limits.max_zip_entries:,}",
                    "STREAM_RAG_MAX_UNZIPPED_MB",
                )
            declared = sum(info.file_size for info in infos)
            if declared > limits.max_unzipped_bytes:
                raise LimitExceededError(
                    f"the archive would unpack to {declared:,} bytes, more than {unzipped}",
                    "STREAM_RAG_MAX_UNZIPPED_MB",
                )
            for info in infos:
                ratio = info.file_size / max(info.compress_size, 1)
                if info.file_size > _RATIO_FLOOR and ratio > limits.max_zip_ratio:
                    raise LimitExceededError(
                        f"{info.filename!r} in the archive inflates {ratio:,.0f} times, more "
                        f"than {limits.max_zip_ratio:g} (STREAM_RAG_MAX_ZIP_RATIO): a zip bomb?",
                        "STREAM_RAG_MAX_ZIP_RATIO",
                    )
            total = 0
            for info in infos:
                with archive.open(info) as member:
                    while piece := member.read(MIB):
                        total += len(piece)
                        if total > limits.max_unzipped_bytes:
                            raise LimitExceededError(
                                f"the archive unpacks to more than {unzipped}",
                                "STREAM_RAG_MAX_UNZIPPED_MB",
                            )
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError) as exc:
        raise CorruptDocumentError(f"the DOCX is damaged and cannot be read ({exc})") from None
