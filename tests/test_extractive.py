"""The local extractive generator: which block it answers from, which sentences it quotes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from stream_rag.embed.backends import Vectors
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.gate.lexical import GateContext, check_sentence
from stream_rag.model.extractive import SentenceVectors, select
from stream_rag.model.passages import block_sentences, restates, titles

WARRANTY = (
    "# What does the Zephyr Kettle warranty cover?\n\n"
    "Every Zephyr Kettle comes with a two-year warranty from the date of purchase. "
    "This protection includes the heating plate, the thermostat, the lid hinge and the "
    "power cord against faults in materials and workmanship. Limescale and scratches are "
    "excluded."
)
CLAIM = (
    "# How do I claim under the warranty?\n\n"
    "Send a photo of the fault and your order number to the support team. A claim under the "
    "Zephyr Kettle warranty is answered within two business days."
)
DESCALE = (
    "# How often should I descale the kettle?\n\n"
    "Descale the Zephyr Kettle every four weeks in hard-water areas. Use equal parts water and "
    "white vinegar."
)


def test_warranty_answer_lists_what_it_covers(minilm: MiniLMEmbedder) -> None:
    blocks = {1: CLAIM, 2: WARRANTY, 3: DESCALE}
    chosen = select(
        "What does the Zephyr Kettle warranty cover?", blocks, dense=SentenceVectors(minilm)
    )
    assert {c.n for c in chosen} == {2}  # one entry, not a mix
    texts = [c.text for c in chosen]
    assert any(t.startswith("This protection includes the heating plate") for t in texts)
    assert texts == sorted(texts, key=WARRANTY.index)  # in the block's own order
    assert not any(t.endswith("?") for t in texts)
    context = GateContext(list(blocks.values()), ["a", "b", "c"])
    for c in chosen:
        assert check_sentence(f"{c.text} [{c.n}]", context).ok


def test_answers_from_the_entry_whose_question_matches(minilm: MiniLMEmbedder) -> None:
    blocks = {1: WARRANTY, 2: CLAIM, 3: DESCALE}
    chosen = select("How can I make a warranty claim?", blocks, dense=SentenceVectors(minilm))
    assert chosen
    assert {c.n for c in chosen} == {2}
    chosen = select("How do I file a claim?", blocks)  # lexical only: the fake model's way
    assert {c.n for c in chosen} == {2}


def test_several_entries_in_one_block_answer_under_their_heading(minilm: MiniLMEmbedder) -> None:
    faq = (
        "# Returns\n\nYou can return unused products within 45 days of delivery.\n\n"
        "## Is there a restocking fee?\n\nA fee of 15 euros applies to opened appliances. "
        "Unopened appliances are returned free of charge.\n\n"
        "## How fast are refunds issued?\n\nRefunds reach your account within 5 business days."
    )
    chosen = select("Do you charge a restocking fee?", {1: faq}, dense=SentenceVectors(minilm))
    assert chosen[0].text == "A fee of 15 euros applies to opened appliances."
    assert all("Refunds" not in c.text for c in chosen)


def test_headings_and_questions_are_not_quoted() -> None:
    text = (
        "Contacting support\n\nMy grinder rattles loudly. Is that normal?\n\n"
        "# A heading that ends with a full stop.\n"
        "A short rattle when the hopper runs empty is normal.\n\n- a list item without a stop"
    )
    assert block_sentences(text) == ["A short rattle when the hopper runs empty is normal."]
    assert titles(text) == [
        "Contacting support",
        "My grinder rattles loudly. Is that normal?",
        "A heading that ends with a full stop.",
    ]


def test_restating_the_question_is_not_an_answer() -> None:
    question = {"refund", "issu", "fast"}
    assert restates(question, {"refund", "issu", "fast"})
    assert not restates(question, {"refund", "issu", "within", "business", "day"})
    assert not restates(set(), {"refund"})


class CountingEmbedder:
    """MiniLM, counting the texts it is asked to embed."""

    def __init__(self, inner: MiniLMEmbedder) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts.extend(texts)
        return self.inner.embed(texts)


def test_sentence_vectors_are_cached_by_text(minilm: MiniLMEmbedder) -> None:
    counting = CountingEmbedder(minilm)
    vectors = SentenceVectors(counting, capacity=3)
    first = vectors("refund window", ["Refunds take 5 days.", "Sync needs internet."])
    assert first[0] > first[1]
    assert vectors("refund window", ["Refunds take 5 days."]) == pytest.approx(first[:1])
    assert len(counting.texts) == 3  # nothing embedded twice
    vectors("new question", ["Another sentence here."])
    assert len(vectors._cache) == 3  # bounded


def test_indexing_warms_the_sentence_vectors(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    from stream_rag.config import Settings
    from stream_rag.index.folders import ingest_paths
    from stream_rag.model.extractive import ExtractiveModel
    from stream_rag.services import open_services

    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "warranty.md").write_text(WARRANTY)
    settings = Settings(data_dir=tmp_path / "data")
    services = open_services(settings, embedder=minilm)
    try:
        ingest_paths(services.store, [tmp_path / "kb"], settings, indexer=services.indexer)
        model = getattr(services.model, "model", services.model)
        assert isinstance(model, ExtractiveModel)
        assert model.dense is not None
        cached = set(model.dense._cache)
        assert set(block_sentences(WARRANTY)) <= cached
        assert "What does the Zephyr Kettle warranty cover?" in cached
    finally:
        services.close()


def test_the_question_vector_of_retrieval_is_reused(minilm: MiniLMEmbedder) -> None:
    counting = CountingEmbedder(minilm)
    asked = minilm.embed(["refund window"])[0]
    vectors = SentenceVectors(counting, known={"refund window": asked}.get)
    scores = vectors("refund window", ["Refunds take 5 days.", "Sync needs internet."])
    assert counting.texts == ["Refunds take 5 days.", "Sync needs internet."]
    assert scores[0] > scores[1]
    vectors("another question", ["Refunds take 5 days."])  # not known: embedded here
    assert counting.texts[-1] == "another question"


def test_a_sentence_adding_a_number_does_not_restate_the_question() -> None:
    question = {"mani", "volt", "zorblax", "devic", "need"}
    assert not restates(question, {"zorblax", "devic", "need", "12", "volt"})
    assert restates(question, {"zorblax", "devic", "need", "volt"})
    # A number the question already has is nothing new.
    assert restates(question | {"12"}, {"zorblax", "devic", "need", "12", "volt"})


# An account FAQ kept in one file: retrieval returns chunks holding several entries, each
# entry's answer worded much like its neighbours'.
ACCOUNT_FAQ = (
    "# Account help\n\n"
    "## How do I change my email address?\n"
    "Open Settings, choose Profile, and edit the Email field. We send a confirmation message "
    "to the new address.\n\n"
    "## How do I change my billing address?\n"
    "Open Settings, choose Billing, and edit the Address field. Invoices issued after the "
    "change show the new address.\n\n"
    "## How much does the Basic plan cost?\n"
    "The Basic plan costs $9 per user per month.\n\n"
    "## How much does the Business plan cost?\n"
    "The Business plan costs $29 per user per month and includes audit logs.\n\n"
    "## How much storage does the Basic plan include?\n"
    "The Basic plan includes 50 GB of storage per user.\n"
)


@pytest.mark.parametrize(
    ("question", "entry"),
    [
        ("How do I change my billing address?", "Open Settings, choose Billing"),
        ("How can I update the email on my account?", "Open Settings, choose Profile"),
        ("What is the price of the Business plan?", "The Business plan costs"),
        ("How much storage comes with Basic?", "The Basic plan includes 50 GB"),
    ],
)
def test_an_faq_block_is_quoted_from_the_entry_that_answers(
    minilm: MiniLMEmbedder, question: str, entry: str
) -> None:
    chosen = select(question, {1: ACCOUNT_FAQ}, dense=SentenceVectors(minilm))
    assert any(entry in c.text for c in chosen), [c.text for c in chosen]
    # Every quoted sentence comes from that entry: none from the neighbours worded like it.
    section = ACCOUNT_FAQ[ACCOUNT_FAQ.rindex("##", 0, ACCOUNT_FAQ.index(entry)) :]
    section = section.split("\n\n")[0]
    assert all(c.text in section for c in chosen), [c.text for c in chosen]


def test_a_question_asking_two_things_is_quoted_from_both_entries(minilm: MiniLMEmbedder) -> None:
    chosen = select(
        "How much does the Basic plan cost and how much storage does it include?",
        {1: ACCOUNT_FAQ},
        dense=SentenceVectors(minilm),
    )
    texts = [c.text for c in chosen]
    assert "The Basic plan costs $9 per user per month." in texts
    assert "The Basic plan includes 50 GB of storage per user." in texts
    assert not any("Business" in t for t in texts)


def test_a_sentence_that_negates_the_question_answers_it() -> None:
    question = {"warranty", "cover", "water", "damag"}
    assert not restates(question, {"warranty", "not", "cover", "water", "damag"})
    assert restates(question | {"not"}, {"warranty", "not", "cover", "water", "damag"})
    block = (
        "# Warranty\n\nThe X200 router has a 2-year limited warranty. "
        "The warranty does not cover water damage."
    )
    chosen = select("Does the warranty cover water damage?", {1: block})
    assert [c.text for c in chosen][-1:] == ["The warranty does not cover water damage."]


def test_a_block_about_another_model_than_the_question_names_is_not_quoted(
    minilm: MiniLMEmbedder,
) -> None:
    x200 = "# Warranty\n\nThe Acme Router X200 has a 2-year limited warranty."
    x300 = "# Warranty\n\nThe Acme Router X300 has a 3-year limited warranty."
    for blocks in ({1: x200, 2: x300}, {1: x300, 2: x200}):
        chosen = select("How long is the x200 warranty?", blocks)
        assert [c.text for c in chosen] == ["The Acme Router X200 has a 2-year limited warranty."]
    # Named by the document's name only: that counts too.
    names = {1: "router-x300-guide.pdf", 2: "router-x200-guide.pdf"}
    plain = "# Warranty\n\nThe router has a {} limited warranty."
    blocks = {1: plain.format("3-year"), 2: plain.format("2-year")}
    dense = SentenceVectors(minilm)
    chosen = select("How long is the X200 warranty?", blocks, names=names, dense=dense)
    assert [c.n for c in chosen] == [2]
    # A model no block names leaves the blocks as they were.
    chosen = select("How long is the Z9 warranty?", blocks, names=names, dense=dense)
    assert [c.n for c in chosen] == [1]


def test_a_short_instruction_is_quoted() -> None:
    # "Do not use solvents." is two BM25 tokens ("not" is a stop word); it was never quotable.
    block = (
        "# Cleaning the fan\n\nWipe the fan with a dry cloth. Do not use solvents. "
        "Clean it every 10 weeks."
    )
    assert "Do not use solvents." in block_sentences(block)
    chosen = select("Can I use solvents on the fan?", {1: block})
    assert "Do not use solvents." in [c.text for c in chosen]
    assert block_sentences("# Notes\n\nSee below. It works. Yes.") == []


EXIT_CODES = (
    "## Exit codes\n\n| Code | Meaning |\n|------|---------|\n| 0 | Success |\n"
    "| 2 | Bad arguments |\n| 4 | Not logged in |\n| 7 | Network error |\n\n"
    "## Upload limits\n\nThe largest file you can upload is 50 GB."
)
ICONS = (  # a table as HTML and DOCX extraction gives it: a paragraph a row
    "Sync status\n\nThe tray icon shows how syncing goes.\n\nStatus icon | Meaning\n\n"
    "Green tick | All files are up to date\n\nRed cross | Sync stopped because of an error"
)
SHIPPING = (
    "# Shipping\n\n| Region | Standard days | Express price |\n|---|---|---|\n"
    "| Canada | 7 | $19.99 |\n| Japan | 12 | $32.00 |"
)


@pytest.mark.parametrize(
    ("question", "block", "quoted"),
    [
        ("What does exit code 4 mean?", EXIT_CODES, "Code 4: Not logged in."),
        (
            "What does the red cross icon mean?",
            ICONS,
            "Red cross: Sync stopped because of an error.",
        ),
        (
            "How much is express shipping to Japan?",
            SHIPPING,
            "Japan: Standard days 12, Express price $32.00.",
        ),
    ],
)
def test_a_table_row_is_quoted_as_a_sentence(
    minilm: MiniLMEmbedder, question: str, block: str, quoted: str
) -> None:
    # Rows end in no full stop, so no row was ever quotable: questions answered by a table
    # were refused.
    chosen = select(question, {1: block, 2: DESCALE}, dense=SentenceVectors(minilm))
    assert [c.text for c in chosen][:1] == [quoted]
    context = GateContext([block, DESCALE], ["a", "b"])
    assert check_sentence(f"{quoted} [1]", context).ok
    assert "Code | Meaning" not in " ".join(block_sentences(block))  # headers are not rows


QA_FAQ = (
    "Frequently asked questions\n\n"
    "Q: How do I change my email address?\n"
    "A: Open Settings, choose Profile, and edit the Email field. We send a confirmation "
    "message to the new address.\n\n"
    "Q: How do I change my billing address?\n"
    "A: Open Settings, choose Billing, and edit the Address field. Invoices issued after the "
    "change show the new address.\n"
    "Q: How do I delete my account?\n"
    "A: Contact support. Deletion takes up to 7 days.\n"
)


def test_a_q_and_a_faq_is_quoted_from_its_entry_without_the_label(
    minilm: MiniLMEmbedder,
) -> None:
    # "Q:" lines were no headings (a paragraph of two lines), so the entries were one section
    # and their questions unused; the quotes began with "A:".
    assert titles(QA_FAQ)[1:] == [
        "Q: How do I change my email address?",
        "Q: How do I change my billing address?",
        "Q: How do I delete my account?",
    ]
    dense = SentenceVectors(minilm)
    chosen = select("How can I update the email on my account?", {1: QA_FAQ}, dense=dense)
    assert [c.text for c in chosen] == [
        "Open Settings, choose Profile, and edit the Email field.",
        "We send a confirmation message to the new address.",
    ]
    chosen = select("How do I delete my account?", {1: QA_FAQ}, dense=dense)
    assert [c.text for c in chosen] == ["Contact support.", "Deletion takes up to 7 days."]


LIBRARY_FAQ = """# Library help

## Can I renew a book online?
Sign in to your library account and choose Renew next to the loan. A loan can be renewed three
times unless another reader has reserved it.

## What happens if I return a book late?
Adult loans are charged 20 pence a day. Children's books carry no charge.

## How many books can I borrow?
Adults may borrow up to 12 items at a time on one card.
"""


def test_the_entry_read_whole_answers_a_paraphrase(minilm: MiniLMEmbedder) -> None:
    # Neither the entry's question nor one of its sentences is close to "keep ... longer
    # without coming in"; the entry read whole is (a renewal), not the late-return charges.
    question = "Can I keep my book longer without coming in?"
    chosen = select(question, {1: LIBRARY_FAQ}, dense=SentenceVectors(minilm))
    assert chosen[0].title == "Can I renew a book online?"
    overdue = select(
        "Is there a fine for overdue books?", {1: LIBRARY_FAQ}, dense=SentenceVectors(minilm)
    )
    assert overdue[0].title == "What happens if I return a book late?"


ZOO_PAGE = (
    "# Visiting the zoo\n\n"
    "## Guided tours\n\n"
    "Guided tours start at the main gate at 11:00 and 14:00 and last one hour.\n\n"
    "## School visits\n\n"
    "School groups get a free guided tour with every booked visit.\n\n"
    "## Paying\n\n"
    "You can pay for tours and tickets by card at the gate.\n"
)
ZOO_FAQ = (
    "Zoo questions\n"
    "Can I bring my dog?\n"
    "Dogs are not allowed in the zoo, except assistance dogs.\n"
    "Which languages are the tours in?\n"
    "Our tours are given in English, French and Spanish.\n"
    "Can I bring a picnic?\n"
    "Picnics are welcome in the meadow next to the playground.\n"
)


def test_sentences_under_other_headings_do_not_carry_a_block(minilm: MiniLMEmbedder) -> None:
    # The page's best sentence ("School groups get a free guided tour") and its next best,
    # under another heading, outweighed the FAQ entry that answers: a sentence answering
    # something else does not make the passage a better answer.
    chosen = select(
        "Can my group have a tour in Spanish?",
        {1: ZOO_PAGE, 2: ZOO_FAQ},
        dense=SentenceVectors(minilm),
    )
    assert [c.text for c in chosen][:1] == ["Our tours are given in English, French and Spanish."]


TICKETS = (
    "# Tickets\n\n"
    "## Family ticket\n\n"
    "It costs 34 euros and lets in two adults and up to three children. "
    "Each extra child on a family ticket costs 5 euros.\n\n"
    "## Annual pass\n\n"
    "It costs 60 euros and lets you in as often as you like for a year.\n"
)


@pytest.mark.parametrize("dense", [False, True])
def test_a_sentence_opening_its_section_with_it_speaks_of_the_heading(
    minilm: MiniLMEmbedder, dense: bool
) -> None:
    # "It costs 60 euros" under "## Annual pass" was never quoted (it seemed to go on from the
    # family ticket's sentence), so the pass's price was answered with the extra child's.
    vectors = SentenceVectors(minilm) if dense else None
    chosen = select("How much is the annual pass?", {1: TICKETS}, dense=vectors)
    assert [c.text for c in chosen] == [
        "It costs 60 euros and lets you in as often as you like for a year."
    ]
    chosen = select("How much is a family ticket?", {1: TICKETS}, dense=vectors)
    assert "It costs 34 euros and lets in two adults and up to three children." in [
        c.text for c in chosen
    ]
