"""Documents read with their structure: tables as row sentences with their headers, lists
with their numbers and lead-in, headings as context, markup removed with the span back to the
original bytes, PDF pages on every chunk."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from loadtests.kb_fixtures import write_docx, write_pdf
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.events import block_ref
from stream_rag.ingest.chunking import chunk_spans, heading_context
from stream_rag.ingest.extract import DOCX, extract
from stream_rag.ingest.extract_pool import InProcessExtractor
from stream_rag.ingest.html import html_layout
from stream_rag.ingest.layout import Place
from stream_rag.ingest.markdown import markdown_layout
from stream_rag.ingest.sentences import sentence_spans
from stream_rag.ingest.tables import row_sentences
from stream_rag.model.extractive import ExtractiveModel
from stream_rag.prompt_format import parse_blocks, user_message
from stream_rag.retrieve.hybrid import Block
from stream_rag.services import open_services
from stream_rag.store.documents import DocumentStore, insert_chunks

from .conftest import wait_indexed
from .test_jobs import add

MARKDOWN = """---
title: Returns
owner: care
---

# Returns and refunds

You can return **unused tools** within *30 days*; see the [store list](https://x.test/s).[^1]

Gift cards are `not` returnable.

[^1]: Plants damaged by frost are not covered.

## Fees

| Item | Return fee |
|------|-----------|
| Garden furniture | 25 euros |
| Gift cards | - |

To return an item by post, follow these steps:

1. Log in and open **My orders**.
2. Print the return label.
3. Drop the parcel at a post office.
"""


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_markdown_markup_front_matter_and_footnotes(tmp_path: Path) -> None:
    extraction = extract(write(tmp_path, "r.md", MARKDOWN.encode()), "text/markdown")
    assert extraction.text.split("\n\n") == [
        "# Returns and refunds",
        "You can return unused tools within 30 days; see the store list.",
        # A footnote is read after the paragraph that refers to it.
        "Plants damaged by frost are not covered.",
        "Gift cards are not returnable.",
        "## Fees",
        "Garden furniture: 25 euros.\nGift cards.",
        "To return an item by post, follow these steps:\n1. Log in and open My orders.\n"
        "2. Print the return label.\n3. Drop the parcel at a post office.",
    ]


def test_markdown_spans_point_at_the_original_bytes(tmp_path: Path) -> None:
    source = ("Café **prices** é\n\n" + MARKDOWN).encode()
    extraction = extract(write(tmp_path, "r.md", source), "text/markdown")
    text = extraction.text
    for phrase, original in [
        ("prices", b"prices"),
        ("unused tools within 30 days", b"unused tools** within *30 days"),
        ("2. Print the return label.", b"2. Print the return label."),
        ("Garden furniture: 25 euros.", b"| Garden furniture | 25 euros |"),
    ]:
        start = text.index(phrase)
        place = extraction.places([(start, start + len(phrase))])[0]
        assert place.source_start is not None
        assert place.source_end is not None
        assert source[place.source_start : place.source_end] == original


def test_utf16_and_bom_spans_are_byte_offsets(tmp_path: Path) -> None:
    for data, width, bom in [
        ("\ufeffé *ok* done".encode(), 1, 3),
        ("é *ok* done".encode("utf-16"), 2, 2),
    ]:
        extraction = extract(write(tmp_path, "u.md", data), "text/markdown")
        start = extraction.text.index("ok")
        place = extraction.places([(start, start + 2)])[0]
        raw = data[place.source_start : place.source_end]
        assert raw.decode("utf-8" if width == 1 else "utf-16-le") == "ok"
        assert place.source_start is not None
        assert place.source_start >= bom


def test_html_drops_navigation_and_footer_and_reads_faq_structures(tmp_path: Path) -> None:
    html = (
        "<html><head><title>Stores</title></head><body><nav><a href='/'>Home</a></nav>"
        "<header><p>Since 1987</p></header><div class='cookie-banner'>We use cookies</div>"
        "<main><h1>Stores</h1><table><tr><th>Store</th><th>Weekdays</th><th>Sunday</th></tr>"
        "<tr><td>Main Street store</td><td>9 am to 6 pm</td><td>Closed</td></tr></table>"
        "<dl><dt>Is there a café?</dt><dd>Yes, at Riverside.</dd></dl>"
        "<ol start='3'><li>Third</li><li>Fourth</li></ol></main>"
        "<footer>Copyright</footer></body></html>"
    )
    extraction = extract(write(tmp_path, "s.html", html.encode()), "text/html")
    assert extraction.text.split("\n\n") == [
        "# Stores",
        "Main Street store: Weekdays 9 am to 6 pm, Sunday Closed.",
        "## Is there a café?",
        "Yes, at Riverside.",
        "3. Third.\n4. Fourth.",
    ]


def test_a_pages_header_is_left_out_only_beside_its_main_content() -> None:
    # Without a main element a header may hold the page's own title: it is kept.
    bare = "<header><nav>Home</nav><h1>Refunds</h1></header><p>Within 30 days.</p>"
    assert html_layout(bare).text() == "# Refunds\n\nWithin 30 days."
    site = "<header><p>Since 1987</p></header><main><h1>Refunds</h1><p>Within 30 days.</p></main>"
    assert html_layout(site).text() == "# Refunds\n\nWithin 30 days."


def test_row_sentences_merged_cells_and_no_header() -> None:
    rows = [["Zone", "Price", "Days"], ["Far", "Not available", "Not available"]]
    assert row_sentences(rows, header=True) == ["Far: Price and Days Not available."]
    assert row_sentences([["Pro", "$8"], ["Team", "$12"]], header=False) == [
        "Pro: $8.",
        "Team: $12.",
    ]


def test_docx_tables_stay_in_place_and_lists_keep_numbers(tmp_path: Path) -> None:
    path = tmp_path / "d.docx"
    write_docx(
        path,
        [
            ("h1", "Delivery"),
            ("p", "To book a day, follow these steps:"),
            ("num", "Place the order."),
            ("num", "Choose a day."),
            ("table", [["Distance", "Price", "Days"], ["Near", "Free", "Tuesday"],
                       ["Mid", "35 euros", "^"], ["Far", "Not available", "<"]]),
            ("p", "We do not deliver to islands."),
        ],
    )  # fmt: skip
    text = extract(path, DOCX).text
    assert text.split("\n\n") == [
        "# Delivery",
        "To book a day, follow these steps:\n1. Place the order.\n2. Choose a day.",
        "Near: Price Free, Days Tuesday.\nMid: Price 35 euros, Days Tuesday.\n"
        "Far: Price and Days Not available.",
        "We do not deliver to islands.",
    ]


def test_pdf_chunks_know_their_pages(tmp_path: Path) -> None:
    path = tmp_path / "p.pdf"
    first = [f"Sentence number {i} on the first page of the guide." for i in range(12)]
    second = [f"Sentence number {i} on the second page of the guide." for i in range(12)]
    write_pdf(path, [first, second])
    extracted = InProcessExtractor().extract(path, "application/pdf", 300, 0)
    pages = [(p.page_start, p.page_end) for p in extracted.places]
    assert pages[0] == (1, 1)
    assert pages[-1] == (2, 2)
    for (s, e), place in zip(extracted.spans, extracted.places, strict=True):
        on_first = "first page" in extracted.text[s:e]
        on_second = "second page" in extracted.text[s:e]
        assert place.page_start == (1 if on_first else 2)
        assert place.page_end == (2 if on_second else 1)


def test_list_items_are_sentences_and_stay_with_their_lead_in() -> None:
    intro = " ".join(f"Filler sentence {i} about something else entirely." for i in range(8))
    steps = "Follow these steps:\n1. Log in.\n2. Open My orders\n3. Print the label\n- and smile"
    text = f"{intro}\n\n{steps}\n\nAfter that, wait."
    start = text.index("Follow")
    sentences = [text[s:e] for s, e in sentence_spans(text, start, start + len(steps))]
    assert sentences == [
        "Follow these steps:",
        "1. Log in.",
        "2. Open My orders",
        "3. Print the label",
        "- and smile",
    ]
    chunks = [text[s:e] for s, e in chunk_spans(text, 500, 0)]
    assert any(steps in chunk for chunk in chunks)


def test_headings_of_every_format_are_context(tmp_path: Path) -> None:
    html = "<h1>Stores</h1><h2>Opening hours</h2><p>Open daily.</p>"
    text = extract(write(tmp_path, "h.html", html.encode()), "text/html").text
    assert heading_context(text, [text.index("Open daily")]) == [["Stores", "Opening hours"]]


def test_chunks_store_the_headings_they_stand_under(tmp_path: Path) -> None:
    md = tmp_path / "shop.md"
    section = " ".join(f"Parcels sent on day {i} arrive within a week." for i in range(12))
    md.write_text(f"# Shop\n\n## Delivery\n\n{section}\n\n{section}\n", encoding="utf-8")
    store = DocumentStore(tmp_path / "data", chunk_chars=300, chunk_overlap_chars=0)
    try:
        added = store.add(store.blobs.stage_file(md, 10**9), filename="shop.md")
        chunks = store.chunks(added.document.id, 1)
    finally:
        store.close()
    assert len(chunks) > 2
    assert chunks[0].headings == ()  # the first holds its own headings
    # A chunk starting mid-section stands under the section, each heading at its level.
    assert {c.headings for c in chunks[1:]} == {("# Shop", "## Delivery")}
    assert chunks[1].to_json()["headings"] == ["Shop", "Delivery"]
    block = Block(
        1, "c", "d", 1, "s", "shop.md", "shop.md", 0, 1, "Parcels.", {}, headings=chunks[1].headings
    )
    assert block.framed == "# Shop\n\n## Delivery\n\nParcels."
    assert block.to_json()["text"] == "Parcels."  # citations quote the chunk alone


def test_markdown_layout_exact_pieces_are_verbatim() -> None:
    layout = markdown_layout(MARKDOWN)
    text = layout.text()
    for t_start, t_end, s_start, s_end, exact in layout.pieces:
        if exact:
            assert text[t_start:t_end] == MARKDOWN[s_start:s_end]


def test_store_keeps_pages_and_spans_and_blocks_link_to_pages(tmp_path: Path) -> None:
    pdf = tmp_path / "g.pdf"
    write_pdf(pdf, [["Page one says hello."], ["Page two says goodbye."]])
    store = DocumentStore(tmp_path / "data", chunk_chars=100, chunk_overlap_chars=0)
    try:
        added = store.add(store.blobs.stage_file(pdf, 10**9), filename="g.pdf")
        chunks = store.chunks(added.document.id, 1)
        assert [(c.page_start, c.page_end) for c in chunks] == [(1, 2)]
        md = tmp_path / "r.md"
        md.write_bytes(b"# Title\n\nSome **bold** words.")
        added = store.add(store.blobs.stage_file(md, 10**9), filename="r.md")
        (chunk,) = store.chunks(added.document.id, 1)
        assert chunk.text == "# Title\n\nSome bold words."
        assert (chunk.source_start, chunk.source_end) == (0, len(md.read_bytes()))
        assert chunk.page_start is None
    finally:
        store.close()
    block = Block(1, "c", "doc_x", 2, "sha", "n", "g.pdf", 0, 1, "t", {}, page=3)
    assert block.url.endswith("/versions/2/content#page=3")
    assert block.to_json()["page"] == 3


def test_versions_of_an_older_extraction_are_extracted_again_at_start(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    data = tmp_path / "data"
    services = open_services(Settings(data_dir=data), embedder=minilm)
    try:
        services.indexer.reconcile()
        doc_id, version = add(services.store, "r.md", MARKDOWN)
        services.indexer.index_version(doc_id, version)
        fresh = [c.text for c in services.store.chunks(doc_id, version)]
        sha = services.store.version(doc_id, version).sha256
        # As an older release stored it: markup kept, three chunks, no extraction version.
        with services.store.transaction() as db:
            db.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
            insert_chunks(db, doc_id, version, MARKDOWN, [(0, 10), (10, 20), (20, 30)],
                          [Place()] * 3)  # fmt: skip
            db.execute(
                "UPDATE versions SET text = ?, chunk_count = 3, extraction = NULL WHERE doc_id = ?",
                (MARKDOWN, doc_id),
            )
        services.indexer.index_version(doc_id, version)
        assert services.index.count() == 3
    finally:
        services.close()
    services = open_services(Settings(data_dir=data), embedder=minilm)
    try:
        assert services.store.outdated_versions() == [(doc_id, version)]
        assert services.indexer.reconcile() == [(doc_id, version)]
        assert services.store.outdated_versions() == []
        assert [c.text for c in services.store.chunks(doc_id, version)] == fresh
        record = services.store.version(doc_id, version)
        assert (record.sha256, record.chunk_count) == (sha, len(fresh))
        assert "**" not in services.store.text(doc_id, version)
        assert services.index.count() == len(fresh)  # the points of chunks no more are gone
        services.indexer.index_version(doc_id, version)
        assert services.index.count() == len(fresh)
        assert services.store.version(doc_id, version).status == "ready"
    finally:
        services.close()


def test_a_live_version_extracted_again_is_indexed_again_though_not_the_newest(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    # Version 2 failed to index, so version 1 still answers: extracted again at start, its
    # points must be made again from its new chunks (not only the newest version's).
    data = tmp_path / "data"
    services = open_services(Settings(data_dir=data), embedder=minilm)
    try:
        services.indexer.reconcile()
        doc_id, _ = add(services.store, "r.md", MARKDOWN)
        services.indexer.index_version(doc_id, 1)
        stager = services.store.blobs.stager(10**7)
        stager.write(MARKDOWN.encode() + b"\n\nA second version.")
        services.store.add_version(doc_id, stager.finish(), filename="r.md")
        services.store.set_failed(doc_id, 2, "the embedder was down")
        with services.store.transaction() as db:
            db.execute("UPDATE versions SET extraction = NULL WHERE doc_id = ?", (doc_id,))
    finally:
        services.close()
    services = open_services(Settings(data_dir=data), embedder=minilm)
    try:
        assert services.store.live_versions([doc_id]) == {doc_id: 1}
        assert (doc_id, 1) in services.indexer.reconcile()
        # So too when everything is indexed again (another embedder, index or extraction).
        services.store.set_meta("index_fingerprint", "another embedder")
        assert (doc_id, 1) in services.indexer.reconcile()
    finally:
        services.close()


def test_a_chunk_does_not_end_with_a_heading() -> None:
    first = " ".join(f"Sentence {i} of the first section is here." for i in range(20))
    second = " ".join(f"Sentence {i} of the second section is here." for i in range(5))
    text = f"# Guide\n\n{first}\n\n## Moving house\n\n{second}"
    chunks = [text[s:e] for s, e in chunk_spans(text, len(first) + 40, 100)]
    assert not any(chunk.rstrip().endswith("Moving house") for chunk in chunks)
    assert chunks[-1].startswith("## Moving house\n\nSentence 0 of the second")


def test_the_next_chunk_does_not_open_with_the_last_steps_of_a_list() -> None:
    intro = " ".join(f"Sentence {i} says something about the plan." for i in range(14))
    steps = "To cancel a plan:\n1. Email us.\n2. Give the date.\n3. Return your card.\n4. Keep it."
    text = f"{intro}\n\n{steps}\n\nA day pass needs no cancellation."
    chunks = [text[s:e] for s, e in chunk_spans(text, len(intro) + len(steps) + 4, 150)]
    assert len(chunks) == 2
    assert chunks[1] == "A day pass needs no cancellation."


def test_answers_read_a_chunk_under_its_headings() -> None:
    # Block 2 answers the question only under its heading: its own text never says "departure".
    under = ("# Rooms", "## Departure time")
    breakfast, leave = "Breakfast time is 7:00 to 10:30.", "Please leave the room by 11:00."
    blocks = [
        Block(1, "a", "d1", 1, "s", "stay.md", "stay.md", 0, 1, breakfast, {}),
        Block(2, "b", "d2", 1, "s", "rooms.md", "rooms.md", 0, 1, leave, {}, headings=under),
    ]
    prompt = user_message("What is the departure time?", blocks)
    assert "## Departure time\n\nPlease leave" in prompt
    assert parse_blocks(prompt)[2] == blocks[1].framed
    assert ExtractiveModel().answer(prompt) == "Please leave the room by 11:00. [2]"
    assert block_ref(blocks[1])["section"] == ["Rooms", "Departure time"]  # what citations show
    assert block_ref(blocks[0])["section"] == []


def test_lists_are_numbered_as_a_renderer_numbers_them() -> None:
    markdown = "Steps:\n\n1. a\n1. b\n   1. x\n   1. y\n1. c\n\n3) d\n4) e\n- f\n"
    assert markdown_layout(markdown).text() == (
        "Steps:\n1. a.\n2. b.\n1. x.\n2. y.\n3. c.\n3) d.\n4) e.\n- f."
    )
    # A loose HTML list: paragraphs inside an item are its text, not items without numbers.
    html = "<p>Steps:</p><ol><li><p>Log in.</p><p>Then wait</p></li><li><p>Open</p></li></ol>"
    assert html_layout(html).text() == "Steps:\n1. Log in. Then wait.\n2. Open."


def test_a_chunk_starts_on_the_page_of_its_new_text(tmp_path: Path) -> None:
    # The overlap does not reach back across a page: a chunk whose new text is on page 2
    # starts there, so its citation opens the PDF at the page the passage is on.
    path = tmp_path / "p.pdf"
    first = [f"Sentence number {i} on the first page of the guide." for i in range(12)]
    write_pdf(path, [first, ["The lantern runs for twelve hours on one charge."]])
    extracted = InProcessExtractor().extract(path, "application/pdf", 400, 150)
    (s, e), place = extracted.spans[-1], extracted.places[-1]
    assert extracted.text[s:e] == "The lantern runs for twelve hours on one charge."
    assert (place.page_start, place.page_end) == (2, 2)


def test_docx_chunks_know_their_paragraphs_and_table_rows(tmp_path: Path) -> None:
    import docx

    path = tmp_path / "d.docx"
    filler = [("p", f"Paragraph {i} says something about delivery and returns.") for i in range(9)]
    write_docx(
        path,
        [
            ("h1", "Delivery"),
            *filler[:5],
            ("table", [["Distance", "Price"], ["Near", "Free"], ["Mid", "35 euros"],
                       ["Far", "Not available"]]),
            ("num", "Place the order."),
            ("num", "Choose a day."),
            *filler[5:],
        ],
    )  # fmt: skip
    # The body's paragraphs and table rows in document order, read here on their own.
    items: list[str] = []
    for item in docx.Document(str(path)).iter_inner_content():
        if hasattr(item, "rows"):
            items += [" ".join(c.text for c in row.cells) for row in item.rows]
        else:
            items.append(item.text)
    extracted = InProcessExtractor().extract(path, DOCX, 200, 0)
    assert len(extracted.spans) > 3
    for (s, e), place in zip(extracted.spans, extracted.places, strict=True):
        assert place.source_start is not None
        assert place.source_end is not None
        assert place.page_start is None
        placed = items[place.source_start : place.source_end]
        for line in extracted.text[s:e].split("\n"):
            # Each line of the chunk is one of its items: a paragraph (its heading mark or
            # list number aside) or a table row (its first cell leads the row's sentence).
            line = line.lstrip("# ").removeprefix("1. ").removeprefix("2. ")
            if line:
                assert any(line == i or line.startswith(i.split()[0] + ":") for i in placed), (
                    line,
                    placed,
                )
        assert items[place.source_start].split()[0] in extracted.text[s:e]


def test_pdf_chunks_know_their_offsets_in_their_pages_texts(tmp_path: Path) -> None:
    path = tmp_path / "p.pdf"
    first = [f"Sentence number {i} on the first page of the guide." for i in range(12)]
    second = [f"Sentence number {i} on the second page of the guide." for i in range(12)]
    write_pdf(path, [first, second])
    extraction = extract(path, "application/pdf")
    starts = [offset for offset, _ in extraction.pages] + [len(extraction.text) + 2]
    page_texts = {
        number: extraction.text[offset : starts[k + 1] - 2]
        for k, (offset, number) in enumerate(extraction.pages)
    }
    assert page_texts[1].startswith("Sentence number 0 on the first page")
    extracted = InProcessExtractor().extract(path, "application/pdf", 300, 0)
    for (s, e), place in zip(extracted.spans, extracted.places, strict=True):
        assert place.page_start is not None
        assert place.page_end is not None
        assert place.source_start is not None
        assert place.source_end is not None
        chunk = extracted.text[s:e]
        assert page_texts[place.page_start][place.source_start :].startswith(chunk[:40])
        assert page_texts[place.page_end][: place.source_end].endswith(chunk[-40:])


def test_the_readers_passage_places_a_docx_or_pdf_chunk_in_the_original(
    tmp_path: Path, client: TestClient
) -> None:
    docx_path, pdf_path = tmp_path / "d.docx", tmp_path / "p.pdf"
    write_docx(docx_path, [("h1", "Delivery"), ("p", "Standard delivery takes 2 to 4 days.")])
    write_pdf(pdf_path, [["Page one says hello."], ["Page two says goodbye."]])
    expected = {
        "d.docx": {"docx_items": [0, 2]},
        "p.pdf": {"page": 1, "page_offset": 0, "end_page": 2, "end_page_offset": 22},
    }
    for path in (docx_path, pdf_path):
        added = client.post("/v1/documents", files={"file": (path.name, path.read_bytes())})
        assert added.status_code == 201, added.text
        doc_id = added.json()["document"]["id"]
        wait_indexed(client, doc_id)
        (chunk,) = client.get(f"/v1/documents/{doc_id}/versions/1/chunks").json()["chunks"]
        body = client.get(
            f"/v1/documents/{doc_id}/versions/1/text", params={"chunk": chunk["id"]}
        ).json()
        passage = body["passage"]
        placed = {k: v for k, v in passage.items() if k not in ("chunk_id", "start", "end")}
        assert placed == expected[path.name]
