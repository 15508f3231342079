"""Write the dev knowledge bases' DOCX and PDF files from the text kept here, so the repository
holds no binary blobs: `python -m loadtests.kb_fixtures` before `stream-rag eval answers`.

The PDF writer is a minimal one of our own (one Helvetica font, one line per text operator):
it is enough for pypdf to read the pages back as a customer's exported PDF would read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import kb_documents, kb_documents_services, kb_documents_shops, kb_documents_unseen
from .kb_files import DocxBlock, KbFile, Page

HERE = Path(__file__).parent / "answers"

GARDEN_DELIVERY: list[DocxBlock] = [
    ("h1", "Delivery"),
    ("p", "Standard home delivery costs 6.95 euros and takes 2 to 4 working days."),
    (
        "p",
        "Large items such as sheds, greenhouses and garden furniture are delivered by our own "
        "van on a booked day.",
    ),
    ("h2", "Booking a delivery day for large items"),
    ("p", "To book a delivery day for a large item, follow these steps:"),
    ("num", "Place the order online or in a store."),
    ("num", "Wait for the text message with a link to the booking calendar."),
    ("num", "Choose a free day in the calendar and confirm it."),
    ("num", "Make sure someone aged 18 or over is at home on the day to sign for the delivery."),
    ("h2", "Delivery prices for large items"),
    (
        "table",
        [
            ["Distance from the store", "Price", "Delivery days"],
            ["Up to 10 km", "Free", "Tuesday and Thursday"],
            ["10 to 30 km", "35 euros", "^"],
            ["More than 30 km", "Not available", "<"],
        ],
    ),
    ("p", "Deliveries to islands are not possible. We do not deliver on public holidays."),
]

GARDEN_CARE_PDF: list[Page] = [
    [
        "Greenleaf plant care guide",
        "Watering",
        "Water new plants every day for the first two weeks after planting.",
        "After that, water them twice a week in summer and once a week in spring",
        "and autumn, early in the morning.",
        "Feeding",
        "Feed flowering plants with liquid fertiliser every two weeks from April",
        "to September. Do not feed plants in winter.",
    ],
    [
        "Winter protection",
        "Move potted citrus trees and olive trees indoors when the night temperature",
        "falls below 5 degrees Celsius.",
        "Wrap terracotta pots in fleece so that they do not crack in frost.",
        "Pruning",
        "Prune roses in late February or early March, cutting just above an",
        "outward-facing bud.",
    ],
]


CLINIC_APPOINTMENTS: list[DocxBlock] = [
    ("h1", "Appointments"),
    ("p", "New patients are welcome at Brightsmile Dental; a first visit takes about 45 minutes."),
    ("h2", "Booking your first appointment"),
    ("p", "To register as a new patient, do the following:"),
    ("num", "Fill in the medical history form on our website."),
    ("num", "Call reception on 020 555 0142 to choose a time."),
    ("num", "Bring your insurance card and a photo ID to the first visit."),
    ("h2", "What to bring"),
    ("bullet", "a list of the medicines you take"),
    ("bullet", "your previous dental X-rays, if you have them"),
    ("h2", "Opening hours"),
    (
        "table",
        [
            ["Day", "Morning", "Afternoon"],
            ["Monday to Thursday", "8:00 to 12:30", "13:30 to 18:00"],
            ["Friday", "8:00 to 12:30", "Closed"],
            ["Saturday", "9:00 to 13:00 (emergencies only)", "<"],
        ],
    ),
    (
        "p",
        "On Sundays and public holidays, call the regional emergency dentist line on 020 555 0199.",
    ),
]

CLINIC_AFTERCARE_PDF: list[Page] = [
    [
        "Aftercare after treatment",
        "After a tooth extraction",
        "Do not eat or drink anything hot for two hours after the extraction.",
        "Do not rinse your mouth on the first day; from the second day, rinse gently",
        "with warm salt water after meals.",
    ],
    [
        "After a filling",
        "A white filling is hard straight away, so you can eat as soon as the",
        "numbness wears off, usually after two to three hours.",
        "Sensitivity to cold for a week after a filling is normal. Call us if it lasts",
        "longer than two weeks.",
    ],
]

# Where each is written, under loadtests/answers.
FILES = (
    KbFile.docx("garden_kb/delivery.docx", GARDEN_DELIVERY),
    KbFile.docx("clinic_kb/appointments.docx", CLINIC_APPOINTMENTS),
    KbFile.pdf("garden_kb/plant-care.pdf", GARDEN_CARE_PDF),
    KbFile.pdf("clinic_kb/aftercare.pdf", CLINIC_AFTERCARE_PDF),
)


def write_docx(path: Path, blocks: list[DocxBlock], saved: str | None = None) -> None:
    """`saved`: the core properties' modified time (ISO), as a word processor records it."""
    import datetime

    import docx

    document = docx.Document()
    for kind, value in blocks:
        if kind in ("h1", "h2"):
            document.add_heading(str(value), level=int(kind[1]))
        elif kind == "p":
            document.add_paragraph(str(value))
        elif kind == "num":
            document.add_paragraph(str(value), style="List Number")
        elif kind == "bullet":
            document.add_paragraph(str(value), style="List Bullet")
        elif kind == "table":
            rows: list[list[str]] = value  # type: ignore[assignment]
            table = document.add_table(rows=len(rows), cols=len(rows[0]))
            table.style = "Table Grid"
            for r, row in enumerate(rows):
                for c, text in enumerate(row):
                    if text not in ("<", "^"):
                        table.cell(r, c).text = text
            for r, row in enumerate(rows):
                for c, text in enumerate(row):
                    if text == "<":
                        table.cell(r, c - 1).merge(table.cell(r, c))
                    elif text == "^":
                        table.cell(r - 1, c).merge(table.cell(r, c))
        else:
            raise ValueError(f"unknown block kind {kind!r}")
    document.core_properties.author = "stream_rag fixtures"
    if saved is not None:
        when = datetime.datetime.fromisoformat(saved)
        document.core_properties.created = when
        document.core_properties.modified = when
    document.save(str(path))


def _pdf_string(text: str) -> str:
    return "(" + text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def write_pdf(path: Path, pages: list[Page], saved: str | None = None) -> None:
    """A PDF with one page per list, each line drawn on its own; a line that reads as a heading
    (short, no closing punctuation) is drawn larger, as a word processor would. `saved`: the
    document information's ModDate (a PDF date, "D:20260120103000Z")."""
    objects: list[bytes] = []
    page_ids = [4 + 2 * i for i in range(len(pages))]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{p} 0 R" for p in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, lines in enumerate(pages):
        ops = ["BT", "72 760 Td"]
        for line in lines:
            size = 11 if line.endswith((".", ",")) or len(line) > 40 else 14
            ops.append(f"/F1 {size} Tf {_pdf_string(line)} Tj 0 -18 Td")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {page_ids[i] + 1}"
            " 0 R /Resources << /Font << /F1 3 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    if saved is not None:
        objects.append(f"<< /ModDate ({saved}) /CreationDate ({saved}) >>".encode())
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    info = b" /Info %d 0 R" % len(objects) if saved is not None else b""
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        info,
        xref,
    )
    path.write_bytes(bytes(out))


def write_all(root: Path = HERE) -> list[Path]:
    written = []
    for kb_file in _every_file():
        path = root / kb_file.path
        if kb_file.blocks:
            write_docx(path, list(kb_file.blocks), kb_file.saved)
        else:
            write_pdf(path, list(kb_file.pages), kb_file.saved)
        written.append(path)
    return written


def _every_file() -> tuple[KbFile, ...]:
    modules = (kb_documents, kb_documents_unseen, kb_documents_shops, kb_documents_services)
    return FILES + tuple(f for module in modules for f in module.FILES)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=HERE, help="the loadtests/answers folder")
    args = parser.parse_args(argv)
    for path in write_all(args.root):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
