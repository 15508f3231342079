"""A conflict is the question's only when the answer would rest on it: one of its sentences is
a good answering candidate. Two delivery prices do not refuse a question about returning a
bike without its box; they still refuse one about the delivery price."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import anyio

from stream_rag.answer.conflicts import LexicalConflictDetector
from stream_rag.answer.results import AnswerResult, Options
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.index.folders import ingest_paths
from stream_rag.retrieve.hybrid import Block
from stream_rag.services import open_services
from stream_rag.types import Turn

from .answering import answers_over

KB = {
    "delivery.md": (
        "# Bike delivery\n\nHome delivery of a bike costs 39 euros and takes 3 to 5 working "
        "days. The driver carries the bike to your front door.\n"
    ),
    "delivery-old.md": (
        "# Bike delivery\n\nHome delivery of a bike costs 29 euros and takes 5 to 7 working days.\n"
    ),
    "returns.md": (
        "# Returns\n\nYou can return an unused bike within 30 days of delivery. Bikes sent back "
        "without their original box are charged a packaging fee of 20 euros.\n"
    ),
}


def ask(tmp_path: Path, minilm: MiniLMEmbedder, questions: list[str]) -> list[AnswerResult]:
    kb = tmp_path / "kb"
    kb.mkdir()
    for name, text in KB.items():
        (kb / name).write_text(text)
    return answers_over(kb, Settings(data_dir=tmp_path / "data"), minilm, questions)


def test_a_conflict_the_answer_would_not_rest_on_does_not_refuse(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    brushed, asked = ask(
        tmp_path,
        minilm,
        [
            "I threw away the cardboard box my bike came in. Does that cost me anything if I "
            "return it?",
            "How much does home delivery of a bike cost?",
        ],
    )
    assert brushed.refusal is None, brushed.refusal
    assert "20 euros" in brushed.text
    assert asked.refusal is not None
    assert asked.refusal.reason == "conflicting_sources"


def test_a_follow_up_is_refused_over_a_conflict_only_when_it_asks_about_it(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    first = "How much does home delivery of a bike cost?"
    kb = tmp_path / "kb"
    kb.mkdir()
    for name, text in KB.items():
        (kb / name).write_text(text)
    local = Settings(data_dir=tmp_path / "data")
    services = open_services(local, embedder=minilm)
    try:
        ingest_paths(services.store, [kb], local, indexer=services.indexer, quiet=True)

        async def run() -> list[AnswerResult]:
            answerer = services.answerer
            try:
                earlier = await answerer.answer(first, Options())
                assert earlier.refusal is not None
                said = (Turn(first, earlier.refusal.message),)
                asked = ["Does the driver carry it to my front door?", "How long does it take?"]
                return [await answerer.answer(q, Options(history=said)) for q in asked]
            finally:
                await services.aclose()

        other, same = anyio.run(run)
    finally:
        services.close()
    assert other.query != "Does the driver carry it to my front door?"  # resolved with the first
    assert other.refusal is None, other.refusal
    assert "front door" in other.text
    assert same.refusal is not None
    assert same.refusal.reason == "conflicting_sources"  # the delivery time, 3-5 or 5-7 days


def _block(n: int, name: str, text: str) -> Block:
    return Block(n, f"c{n}", f"d{n}", 1, "0" * 64, name, name, 0, len(text), text, {})


PRICE_LIST = "Hive Works price list 2024\n\nDay pass: 20 euros a day.\nHot desk: 160 euros a month."
# A Markdown table's rows as extraction reads them (ingest/tables.py).
PLANS = (
    "# Membership plans\n\nPrices below are valid from 1 January 2026.\n\n"
    "Day pass: Price 25 euros a day, Access Weekdays, 8:00 to 20:00.\n"
    "Hot desk: Price 190 euros a month, Access Weekdays, 8:00 to 20:00."
)


def test_a_price_list_line_and_a_table_row_of_one_label_conflict() -> None:
    blocks = [_block(1, "price-list-2024.txt", PRICE_LIST), _block(2, "plans.md", PLANS)]
    detector = LexicalConflictDetector()
    (desk,) = detector.find("How much is a hot desk per month?", blocks)
    assert (desk.values_a, desk.values_b) == (("160 euros a month",), ("190 euros a month",))
    (day,) = detector.find("What does a day pass cost?", blocks)
    assert day.sentence_a == "Day pass: 20 euros a day."


def test_one_label_over_other_subjects_is_no_conflict() -> None:
    shipping = _block(1, "shipping.md", "Shipping options.\n\nStandard: 4.90 euros per parcel.")
    plans = _block(2, "plans.md", "Plans.\n\nStandard: Price 9 euros a month, Seats 1.")
    assert LexicalConflictDetector().find("How much is standard?", [shipping, plans]) == []
    other = _block(2, "plans.md", "Plans.\n\nFixed desk: Price 290 euros a month, Seats 1.")
    desk = _block(1, "list.txt", "Price list.\n\nHot desk: 160 euros a month.")
    assert LexicalConflictDetector().find("How much is a desk a month?", [desk, other]) == []


def test_a_document_retrieval_left_out_is_looked_up_for_the_value_the_answer_leads_with(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    for name, text in KB.items():
        (kb / name).write_text(text)
    (kb / "price-list-2024.txt").write_text(PRICE_LIST)
    (kb / "plans.md").write_text(
        "# Membership plans\n\n| Plan | Price | Access |\n|---|---|---|\n"
        "| Day pass | 25 euros a day | Weekdays |\n| Hot desk | 190 euros a month | Weekdays |\n"
    )
    local = Settings(data_dir=tmp_path / "data")
    services = open_services(local, embedder=minilm)
    questions = [
        "How much is a hot desk per month?",
        "How much does home delivery of a bike cost?",
        "I threw away the cardboard box my bike came in. Does that cost me anything if I "
        "return it?",
    ]
    try:
        ingest_paths(services.store, [kb], local, indexer=services.indexer, quiet=True)

        async def run() -> list[AnswerResult]:
            try:
                # One block retrieved: the other side is only found by looking it up.
                one = Options(top_k=1)
                return [await services.answerer.answer(q, one) for q in questions]
            finally:
                await services.aclose()

        desk, delivery, box = anyio.run(run)
    finally:
        services.close()
    for result in (desk, delivery):
        assert result.refusal is not None, result.text
        assert result.refusal.reason == "conflicting_sources"
        sides = {result.refusal.details[0]["a"]["name"], result.refusal.details[0]["b"]["name"]}
        assert result.blocks[0].name in sides
        assert len(sides) == 2
        # The side found by the look-up is sent with the sources, after the one retrieved:
        # every side's number is a block the client received.
        assert len(result.blocks) == 2
        given = {b.n: b for b in result.blocks}
        for detail in result.refusal.details:
            for side in (detail["a"], detail["b"]):
                assert given[side["n"]].chunk_id == side["chunk_id"]
                assert given[side["n"]].name == side["name"]
    assert box.refusal is None, box.refusal


def test_a_stale_and_a_current_side_conflict_whichever_ranks_first() -> None:
    from stream_rag.answer.prechecks import refusal

    pairs = [
        (_block(1, "price-list-2024.txt", PRICE_LIST), _block(2, "plans.md", PLANS)),
        (
            _block(1, "delivery-old.md", KB["delivery-old.md"]),
            _block(2, "delivery.md", KB["delivery.md"]),
        ),
    ]
    questions = ["How much is a hot desk per month?", "How much does home delivery of a bike cost?"]
    for (stale, current), question in zip(pairs, questions, strict=True):
        told = []
        for blocks in ([stale, current], [current, stale]):
            numbered = [replace(b, n=i) for i, b in enumerate(blocks, start=1)]
            refused = refusal(question, numbered, 0.0, True, detector=LexicalConflictDetector())
            assert refused is not None, (question, [b.name for b in blocks])
            assert refused.reason == "conflicting_sources"
            sides = refused.details[0]["a"], refused.details[0]["b"]
            told.append(sorted((s["name"], tuple(s["values"])) for s in sides))
        assert told[0] == told[1]


BOOKING = (
    "# Large items\n\nBooking a delivery day for a large item costs 35 euros.\n\n"
    "To book a delivery day for a large item, follow these steps:\n\n"
    "1. Place the order online or in a store.\n"
    "2. Wait for the text message with a link to the booking calendar.\n"
    "3. Choose a free day in the calendar and confirm it.\n{deadline}"
)
BOOKING_OLD = "# Large items\n\nBooking a delivery day for a large item costs 45 euros.\n"


def test_a_question_asking_how_rests_on_the_steps_not_on_a_value_beside_them() -> None:
    from stream_rag.answer.prechecks import refusal

    detector = LexicalConflictDetector()
    how = "How do I book a delivery day for a large item?"
    price = "How much does booking a delivery day for a large item cost?"
    current = _block(1, "delivery.docx", BOOKING.format(deadline=""))
    blocks = [current, _block(2, "delivery-2024.md", BOOKING_OLD)]
    assert detector.find(how, blocks), "the prices disagree"
    assert refusal(how, blocks, 0.0, True, detector=detector) is None
    refused = refusal(price, blocks, 0.0, True, detector=detector)
    assert refused is not None
    assert refused.reason == "conflicting_sources"
    # Two deadlines within the steps are what the answer rests on.
    step = "4. Book the delivery day for your large item within {} days of the order.\n"
    deadlines = [
        _block(n, name, BOOKING.format(deadline=step.format(days)))
        for n, name, days in ((1, "delivery.docx", 14), (2, "delivery-2024.md", 30))
    ]
    refused = refusal(how, deadlines, 0.0, True, detector=detector)
    assert refused is not None
    assert refused.reason == "conflicting_sources"
