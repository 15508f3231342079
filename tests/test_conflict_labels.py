"""A line and a table row of one label are compared on the value the question asks, whichever
is stale: a list item, a line naming the plan a table's rows leave to their column header, or
a row with other columns beside the value."""

from __future__ import annotations

from stream_rag.answer.conflicts import LexicalConflictDetector
from stream_rag.retrieve.hybrid import Block


def _block(n: int, name: str, text: str) -> Block:
    return Block(n, f"c{n}", f"d{n}", 1, "0" * 64, name, name, 0, len(text), text, {})


# A table's rows as extraction reads them (ingest/tables.py): the first column is the label,
# each other cell its header and value; the first column's header ("Plan") is in no row.
TABLE = (
    "# Tariffs\n\n"
    "Occasional: Monthly fee Free, Per hour 7.50 euros, Per km 0.35 euros.\n"
    "Regular: Monthly fee 12 euros, Per hour 6 euros, Per km 0.30 euros.\n"
)
LINES = (
    "Price list\n\n"
    "Occasional plan: no monthly fee, 7 euros per hour, 0.35 euros per km.\n"
    "Regular plan: 9 euros a month, 5.50 euros per hour, 0.30 euros per km.\n"
)


def find(question: str, first: Block, second: Block) -> list[tuple[str, ...]]:
    found = LexicalConflictDetector().find(question, [first, second])
    return [(*c.values_a, "|", *c.values_b) for c in found]


def test_a_stale_line_conflicts_with_the_current_row_of_its_label_either_way_round() -> None:
    table, lines = _block(1, "tariffs.md", TABLE), _block(2, "tariffs-2024.txt", LINES)
    question = "How much is the Regular plan a month?"
    assert find(question, table, lines) == [("12 euros", "|", "9 euros a month")]
    assert find(question, lines, table) == [("9 euros a month", "|", "12 euros")]


def test_a_value_the_row_and_the_line_agree_on_is_no_conflict() -> None:
    table, lines = _block(1, "tariffs.md", TABLE), _block(2, "tariffs-2024.txt", LINES)
    assert find("What does it cost per km on the Regular plan?", table, lines) == []


def test_a_list_item_and_a_row_with_other_columns_conflict() -> None:
    current = _block(1, "fees.html", "# Fees\n\n- Late return: 20 euros per started half hour.")
    old = _block(
        2,
        "fees-2023.docx",
        "# Fees\n\nLate return: Amount 15 euros per started half hour, When The car is "
        "returned after the booking ends.\nCleaning fee: Amount 40 euros, When The car is "
        "returned dirty.",
    )
    assert find("How much is the late return fee?", current, old) == [
        ("20 euros per started", "|", "15 euros per started")
    ]
    # Both say "Cleaning fee", and each says more than the other: one label all the same.
    cleaning = _block(1, "fees.html", "- Cleaning fee: 60 euros if the car is returned dirty.")
    assert find("What is the cleaning fee?", cleaning, old) == [("60 euros", "|", "40 euros")]


def test_labels_differing_in_a_word_the_question_does_not_ask_are_other_subjects() -> None:
    table, lines = _block(1, "tariffs.md", TABLE), _block(2, "list.txt", LINES)
    # "plan" is what tells "Regular plan:" from "Regular:" apart here, and is not asked.
    assert find("How much is Regular a month?", table, lines) == []


def test_a_denial_in_another_column_does_not_dispute_a_value_both_state() -> None:
    current = _block(1, "fees.html", "- Lost key card: 25 euros.")
    old = _block(
        2, "fees-2023.docx", "Lost key card: Amount 25 euros, When The key card is not returned."
    )
    assert find("How much do I pay if I lose the key card?", current, old) == []


def test_a_line_and_a_sentence_giving_its_label_a_value_conflict_either_way_round() -> None:
    line = _block(1, "price-list-2024.txt", "Price list\n\nDay rate: 55 euros.")
    prose = _block(
        2,
        "tariffs.md",
        "# Day rate\n\nA day rate of 59 euros applies when it is cheaper than the hourly price.",
    )
    assert find("How much is the day rate?", line, prose) == [("55 euros", "|", "59 euros")]
    assert find("How much is the day rate?", prose, line) == [("59 euros", "|", "55 euros")]


def test_a_sentence_naming_the_label_but_giving_the_value_to_something_else_is_no_conflict() -> (
    None
):
    line = _block(1, "price-list-2024.txt", "Price list\n\nDay rate: 55 euros.")
    for said in (
        "The day rate for vans at the airport branch is 59 euros on weekends.",
        "The day rate applies only when the hourly charges pass 59 euros.",
    ):
        assert find("How much is the day rate?", line, _block(2, "vans.md", said)) == [], said


EXTRAS = (
    "Guesthouse Alder - price list for extras 2025\n"
    "Valid from 1 January 2025 to 31 December 2025.\n\n"
    "Parking in the guesthouse car park: 12 euros a night.\n"
    "Airport transfer: 35 euros each way.\n"
)
ARRIVING = (
    "# Getting here | Guesthouse Alder\n\n## By car\n\n"
    "Our car park behind the guesthouse has 18 spaces. Parking costs 15 euros a night and "
    "cannot be reserved.\n"
)


def test_a_line_and_a_sentence_whose_subject_is_words_of_its_label_conflict() -> None:
    extras, arriving = _block(1, "extras.txt", EXTRAS), _block(2, "getting-here.html", ARRIVING)
    question = "How much does it cost to park at the guesthouse?"
    assert find(question, extras, arriving) == [("12 euros a night", "|", "15 euros a night")]
    assert find(question, arriving, extras) == [("15 euros a night", "|", "12 euros a night")]


def test_a_subject_in_a_label_is_no_conflict_about_another_place_or_another_thing() -> None:
    station = _block(1, "station.txt", "Services\n\nParking at the station: 5 euros a night.")
    arriving = _block(2, "getting-here.html", ARRIVING)
    # The question asks about the station, which the guesthouse page's headings never name.
    assert find("How much is parking at the station?", station, arriving) == []
    # The sentence's subject is not a word of the label ("Charging", not "Parking").
    charging = _block(
        2,
        "getting-here.html",
        "# Getting here | Guesthouse Alder\n\n## By car\n\n"
        "Charging costs 15 euros a night at the guesthouse car park.",
    )
    extras = _block(1, "extras.txt", EXTRAS)
    assert find("How much does it cost to park at the guesthouse?", extras, charging) == []


# A page naming each ticket only in the heading over its price ("It costs ...").
TICKETS = (
    "# Tickets\n\n"
    "## Family ticket\n\n"
    "It costs 34 euros and lets in two adults and up to three children.\n\n"
    "## Annual pass\n\n"
    "It costs 60 euros and lets you in as often as you like for a year.\n"
)
OLD_PRICES = "Museum prices 2024\n\nFamily ticket: 30 euros.\nAnnual pass: 60 euros.\n"


def test_a_sentence_naming_its_subject_only_in_its_heading_conflicts_with_a_stale_line() -> None:
    tickets, old = _block(1, "tickets.md", TICKETS), _block(2, "prices-2024.txt", OLD_PRICES)
    question = "How much is a family ticket?"
    assert find(question, tickets, old) == [("34 euros", "|", "30 euros")]
    assert find(question, old, tickets) == [("30 euros", "|", "34 euros")]
    # The pass's price is the same in both, and its heading is not the family ticket's.
    assert find("How much is the annual pass?", tickets, old) == []
