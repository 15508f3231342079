from __future__ import annotations

import codecs
import io
import zipfile
from pathlib import Path

import pytest

from stream_rag.errors import (
    CorruptDocumentError,
    EncryptedPdfError,
    InvalidPdfError,
    InvalidTextError,
    NoTextError,
    UnsupportedTypeError,
)
from stream_rag.ingest.extract import DOCX, extract_text, media_type_for

from .helpers import make_docx, make_encrypted_pdf, make_pdf, pdf_file


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a.txt", "text/plain"),
        ("A.MD", "text/markdown"),
        ("page.htm", "text/html"),
        ("x.pdf", "application/pdf"),
        ("report.docx", DOCX),
    ],
)
def test_media_type_by_extension(name: str, expected: str) -> None:
    assert media_type_for(name) == expected


@pytest.mark.parametrize("name", ["image.png", "archive.zip", "noext", "old.doc"])
def test_unsupported_extension_names_the_supported_ones(name: str) -> None:
    with pytest.raises(UnsupportedTypeError, match=r"\.docx"):
        media_type_for(name)


def test_text_is_read_exactly_and_newlines_normalised(tmp_path: Path) -> None:
    path = write(tmp_path, "a.txt", "Grüße, 世界.\r\nSecond line.\r\n".encode())
    text, served = extract_text(path, "text/plain")
    assert text == "Grüße, 世界.\nSecond line."
    assert served == "text/plain; charset=utf-8"


def test_utf8_bom_and_utf16_bom_are_accepted(tmp_path: Path) -> None:
    bom8 = write(tmp_path, "a.md", codecs.BOM_UTF8 + b"# Title")
    assert extract_text(bom8, "text/markdown")[0] == "# Title"
    utf16 = write(tmp_path, "b.txt", "Hello UTF-16 ✓".encode("utf-16"))
    text, served = extract_text(utf16, "text/plain")
    assert text == "Hello UTF-16 ✓"
    assert served.endswith("charset=utf-16")


def test_invalid_utf8_is_rejected_with_the_offset(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.txt", b"caf\xe9 au lait")
    with pytest.raises(InvalidTextError, match=r"offset 3.*rejected"):
        extract_text(path, "text/plain")


def test_nul_bytes_mean_binary(tmp_path: Path) -> None:
    path = write(tmp_path, "bin.txt", b"abc\x00def")
    with pytest.raises(InvalidTextError, match="NUL"):
        extract_text(path, "text/plain")


def test_whitespace_only_text_has_no_text(tmp_path: Path) -> None:
    with pytest.raises(NoTextError):
        extract_text(write(tmp_path, "blank.txt", b" \n\t\n "), "text/plain")


def test_html_keeps_text_and_blocks_drops_scripts(tmp_path: Path) -> None:
    html = (
        "<html><head><title>Guide</title><style>p{}</style></head><body>"
        "<h1>Refunds</h1><p>Within <b>30&nbsp;days</b> &amp; more.</p>"
        "<script>var secret = 1;</script><ul><li>One</li><li>Two</li></ul></body></html>"
    )
    text, _ = extract_text(write(tmp_path, "g.html", html.encode()), "text/html")
    # Headings are `#` lines in every format; a list stays one paragraph, each item a sentence.
    assert text.split("\n\n") == [
        "# Guide",
        "# Refunds",
        "Within 30 days & more.",
        "- One.\n- Two.",
    ]
    assert "secret" not in text


def test_html_table_rows_are_sentences_with_their_headers(tmp_path: Path) -> None:
    # Cells were run together ("Red crossSync stopped"): words no search or check could find;
    # then parted by " | ", a row no longer said what its cells were.
    html = (
        "<p>Icons:</p><table><thead><tr><th>Icon</th><th>Meaning</th></tr></thead>"
        "<tbody><tr><td>Red <b>cross</b></td><td>Sync stopped</td></tr>"
        "<tr><td>Green tick</td><td></td><td>Up to date</td></tr></tbody></table>"
        "<dl><dt>Term</dt><dd>Its definition.</dd></dl>"
    )
    text, _ = extract_text(write(tmp_path, "t.html", html.encode()), "text/html")
    assert text.split("\n\n") == [
        "Icons:\nRed cross: Sync stopped.\nGreen tick: Up to date.",
        "# Term",
        "Its definition.",
    ]


def test_html_details_summary_faq_entries_are_paragraphs(tmp_path: Path) -> None:
    # An FAQ page in <details>/<summary> ran each question into its answer ("Can I get a
    # refund?Refunds are..."): no heading, and a word that is neither.
    html = (
        "<h2>FAQ</h2><details><summary>Can I get a refund?</summary>Refunds are available "
        "within 14 days.</details><details><summary>Which browsers work?</summary>"
        "<p>Chrome and Firefox.</p></details><table><caption>Prices</caption>"
        "<tr><td>Pro</td><td>$12</td></tr></table>"
    )
    text, _ = extract_text(write(tmp_path, "faq.html", html.encode()), "text/html")
    assert text.split("\n\n") == [
        "## FAQ",
        "### Can I get a refund?",
        "Refunds are available within 14 days.",
        "### Which browsers work?",
        "Chrome and Firefox.",
        "### Prices",
        "Pro: $12.",
    ]


def test_pdf_text_per_page(tmp_path: Path) -> None:
    path = write(tmp_path, "d.pdf", make_pdf(["First page text.", "Second page (two)."]))
    text, served = extract_text(path, "application/pdf")
    assert served == "application/pdf"
    assert text == "First page text.\n\nSecond page (two)."


def lines_pdf(lines: list[str]) -> bytes:
    """A one-page PDF with each of `lines` on a line of its own (pypdf keeps no blank lines)."""
    escaped = (line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") for line in lines)
    shown = "".join(f"({line}) '\n" for line in escaped)
    stream = f"BT /F1 11 Tf 50 760 Td 14 TL\n{shown}ET".encode("latin-1")
    return pdf_file(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>",
            b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
    )


def test_a_pdf_heading_line_is_a_paragraph_of_its_own(tmp_path: Path) -> None:
    # pypdf joins a page's lines with single newlines: a heading ran into the sentence after it
    # ("Warranty The router has..."), and was quoted so.
    pdf = lines_pdf(
        [
            "Router X200 Quick Start",
            "Power the router with the supplied 12 V adapter. The default Wi-Fi password is",
            "printed on the label under the router, next to the serial number of the",
            "Router X200 and its MAC address.",
            "Warranty",
            "The router has a 2-year limited warranty.",
            "Page 1",
        ]
    )
    text, _ = extract_text(write(tmp_path, "q.pdf", pdf), "application/pdf")
    assert text.split("\n\n") == [
        "Router X200 Quick Start",
        "Power the router with the supplied 12 V adapter. The default Wi-Fi password is\n"
        "printed on the label under the router, next to the serial number of the\n"
        "Router X200 and its MAC address.",
        "Warranty",
        "The router has a 2-year limited warranty.\nPage 1",
    ]


def test_not_a_pdf(tmp_path: Path) -> None:
    with pytest.raises(InvalidPdfError, match="not a PDF"):
        extract_text(write(tmp_path, "d.pdf", b"just some text"), "application/pdf")


def test_encrypted_pdf(tmp_path: Path) -> None:
    path = write(tmp_path, "d.pdf", make_encrypted_pdf("Top secret."))
    with pytest.raises(EncryptedPdfError, match="password"):
        extract_text(path, "application/pdf")


def test_corrupt_pdf(tmp_path: Path) -> None:
    data = make_pdf(["Hello"])
    with pytest.raises(CorruptDocumentError):
        extract_text(write(tmp_path, "d.pdf", data[:40]), "application/pdf")


def test_pdf_without_text(tmp_path: Path) -> None:
    with pytest.raises(NoTextError, match="OCR"):
        extract_text(write(tmp_path, "d.pdf", make_pdf([""])), "application/pdf")


def test_docx_paragraphs_and_tables(tmp_path: Path) -> None:
    data = make_docx(["Heading", "Body text here."], table=[["Plan", "Price"], ["Pro", "$8"]])
    text, _ = extract_text(write(tmp_path, "r.docx", data), DOCX)
    assert text == "Heading\n\nBody text here.\n\nPro: $8."


def test_docx_that_is_not_a_zip(tmp_path: Path) -> None:
    with pytest.raises(CorruptDocumentError, match="not a DOCX"):
        extract_text(write(tmp_path, "r.docx", b"plain text"), DOCX)


def test_docx_zip_without_document(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("hello.txt", "not a word document")
    with pytest.raises(CorruptDocumentError, match="damaged"):
        extract_text(write(tmp_path, "r.docx", buffer.getvalue()), DOCX)


def test_pdf_headings_one_after_another() -> None:
    from stream_rag.ingest.extract import _pdf_paragraphs

    page = "Manual\nChapter 1\nSetup\nPlug it in. Then press\nStart to begin.\nSee page 2"
    assert _pdf_paragraphs(page).split("\n\n") == [
        "Manual",
        "Chapter 1",
        "Setup",
        "Plug it in. Then press\nStart to begin.\nSee page 2",
    ]
    # A list's items are not headings, however short.
    items = "Features\n\u2022 Fast sync\n\u2022 Offline mode\n1. Setup wizard\nIt runs on Windows."
    assert _pdf_paragraphs(items).split("\n\n") == [
        "Features",
        "\u2022 Fast sync\n\u2022 Offline mode\n1. Setup wizard\nIt runs on Windows.",
    ]
