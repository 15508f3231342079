"""The question read once (`language/question.py`) and the answer that leads with the sentence
that answers it (`model/passages.py`, `model/extractive.select`)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Sequence

import pytest

from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.language.question import AnswerKind, offers, read_question
from stream_rag.model.extractive import SentenceVectors, select
from stream_rag.model.passages import depends, rank_sentences


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How long is someone with flu infectious?", "duration"),
        ("How much notice do I need to give?", "duration"),
        ("How much does a replacement card cost?", "money"),
        ("Do I have to pay for a new recycling bin?", "money"),
        ("When is the recycling centre open in winter?", "time"),
        ("At what age is the second dose given?", "age"),
        ("How many notebooks can I have?", "count"),
        ("How do I freeze my card?", "steps"),
        ("Can I put plastic bags in the blue bin?", "yesno"),
        ("What is chickenpox?", None),
        ("How much does the Basic plan cost and how long is the trial?", None),
        # A customer telling their situation first: the kind is the asking sentence's.
        ("I returned an e-bike last week. When will I get my money back?", "time"),
        ("My bin broke in the storm. How much is a new one?", "money"),
        ("I bought it two weeks ago. Can I still send it back?", "yesno"),
        ("Who owns the hotel?", "who"),
        ("Can people who are not members come in?", "yesno"),
        ("How does online check-in work?", "steps"),
        # Whether one may do something about a price asks whether, not how much.
        ("Can I pay my fees in cash at the office?", "yesno"),
        ("Could we spread the cost over several months?", "yesno"),
        ("Is there a fee for paying in dollars?", "money"),
        ("How much can I pay in cash?", "money"),
        # How early one must act is a duration ("up to 7 days ahead"), not an open question.
        ("How far in advance can I book a study room?", "duration"),
        ("How long ahead do I need to book?", "duration"),
        # How often asks when, whatever it is about ("the membership price").
        ("How often does the gym change its membership price?", "time"),
        ("How frequently are the bottle banks emptied?", "time"),
    ],
)
def test_the_kind_of_answer_a_question_wants(question: str, kind: str | None) -> None:
    assert read_question(question).kind == kind


def test_the_question_is_one_value_with_its_parts_and_names() -> None:
    asked = read_question("What does the Pro plan cost and how long is the Basic trial?")
    assert asked.parts == ("What does the Pro plan cost", "how long is the Basic trial?")
    assert asked.names == ("Pro", "Basic")
    assert read_question(asked.text) is asked  # read once


def test_a_month_is_no_name_the_sources_must_hold() -> None:
    asked = read_question("I paid the deposit in October, can the landlord still keep it?")
    assert asked.names == ()
    assert read_question("Is the Riverside pool open in August?").names == ("Riverside",)


@pytest.mark.parametrize(
    ("sentence", "kind", "offered"),
    [
        ("Up to three large items cost 35 pounds.", "money", True),
        ("Replacement recycling bins are free.", "money", True),
        ("Order a replacement bin online.", "money", False),
        ("A new card arrives within 5 working days.", "duration", True),
        ("Spots appear 10 to 21 days after contact.", "duration", True),
        ("Residents can apply for a permit.", "duration", False),
        ("The router has a 2-year limited warranty.", "duration", True),
        ("The motor has a five-year warranty.", "duration", True),
        ("It is open from 8 am to 4 pm.", "time", True),
        ("Tell us when you move.", "count", False),
        ("Anyone can ask.", "yesno", True),
        ("The hotel has been run by the Berger family since 1987.", "who", True),
        ("Our hygienist is Maya Holt.", "who", True),
        ("Smoking is not allowed anywhere inside the hotel.", "who", False),
        ("Closed on Sunday and Monday.", "who", False),
        # A capital names no one at a sentence's, clause's or list item's opening, nor on a
        # German noun; a title or a company's legal form does (review findings).
        ("Returns take 5 days. Refunds follow by card.", "who", False),
        ("Note: Bring your receipt.", "who", False),
        ("Die Rückgabe ist innerhalb von 30 Tagen möglich.", "who", False),
        ("Ihre Ansprechpartnerin ist Frau Müller.", "who", True),
        ("Die Rechnung kommt von der Stadtwerke Musterstadt GmbH.", "who", True),
        # "No fee" modifying a noun is no price of nothing; "not free" and "feel free" neither.
        ("There is no fee reduction for members.", "money", False),
        ("Members pay no fee for their first visit.", "money", True),
        ("There is no charge.", "money", True),
        ("Returns are not free.", "money", False),
        ("Feel free to call us.", "money", False),
        ("Delivery comes at no extra cost.", "money", True),
    ],
)
def test_whether_a_sentence_states_an_answer_of_a_kind(
    sentence: str, kind: AnswerKind, offered: bool
) -> None:
    assert offers(sentence, kind) is offered


PERMITS = (
    "# Parking permits\n\n"
    "Residents of a parking zone can apply for a permit to park in their zone. "
    "Permits for residents are issued within five working days of the application."
)
TRANSFERS = (
    "# International transfers\n\n"
    "Transfers in euros cost 2 pounds and arrive within one working day. "
    "For all other currencies, the fee is 1% of the amount and the money arrives within "
    "three to five working days."
)
STEPS = (
    "# Freezing your card\n\n"
    "If you lose your card, you can freeze it in the app.\n\n"
    "1. Open the app and tap Cards.\n"
    "2. Choose the card you want to freeze.\n"
    "3. Tap Freeze card and confirm with your passcode.\n"
    "4. Check that the card shows as frozen.\n\n"
    "A frozen card declines every payment."
)


def test_the_answer_leads_with_the_sentence_of_the_kind_asked(minilm: MiniLMEmbedder) -> None:
    dense = SentenceVectors(minilm)
    chosen = select("What does a euro transfer cost?", {1: TRANSFERS}, dense=dense)
    assert chosen[0].text.startswith("Transfers in euros cost 2 pounds")
    chosen = select("How long does a permit for residents take?", {1: PERMITS}, dense=dense)
    assert chosen[0].text.startswith("Permits for residents are issued within five")


GYM = (
    "# Gym membership\n\n"
    "The membership price is 30 euros a month and includes the pool and the classes. "
    "The price is reviewed once a year, in January."
)


def test_how_often_leads_with_the_sentence_saying_when(minilm: MiniLMEmbedder) -> None:
    dense = SentenceVectors(minilm)
    chosen = select("How often does the gym change its membership price?", {1: GYM}, dense=dense)
    assert chosen[0].text.startswith("The price is reviewed once a year")


def test_a_sentence_going_on_from_another_comes_with_it_first() -> None:
    chosen = select("What is the fee for all other currencies?", {1: TRANSFERS})
    texts = [c.text for c in chosen]
    assert texts[0].startswith("Transfers in euros")
    assert texts[1].startswith("For all other currencies")


def test_a_procedure_is_quoted_whole_and_in_order() -> None:
    chosen = select("How do I freeze my card in the app?", {1: STEPS}, limit=2)
    steps = [c.text for c in chosen if c.item]
    assert steps == [
        "Open the app and tap Cards.",
        "Choose the card you want to freeze.",
        "Tap Freeze card and confirm with your passcode.",
        "Check that the card shows as frozen.",
    ]


def test_every_is_a_duration_only_with_a_time_after_it() -> None:
    assert offers("Water new plants every day.", "duration")
    assert offers("Feed them every two weeks.", "duration")
    assert not offers("Our workshop services every make of bike.", "duration")


def test_an_hour_is_a_duration() -> None:
    # "a day" was one and "an hour" not: "in about an hour" lost to sentences stating no time
    # at all as the answer to "How long does ... take?".
    assert offers("The guided walk takes about an hour.", "duration")
    assert offers("Allow half an hour to park and check in.", "duration")
    assert not offers("The guided walk starts at the north gate.", "duration")


def test_no_limit_is_a_count() -> None:
    assert offers("Residents bring unlimited guests.", "count")
    assert offers("Meeting rooms are free, with no monthly hour limit.", "count")
    assert not offers("Guests sign in at reception.", "count")


def test_a_number_written_out_matches_its_digits() -> None:
    rooms = (
        "## Rooms\n\nAtlas: Seats 4, Equipment TV screen.\n\n"
        "Borealis: Seats 8, Equipment Projector.\n"
    )
    chosen = select("Which room has space for eight people?", {1: rooms})
    assert chosen[0].text.startswith("Borealis")


def test_a_plan_named_free_is_no_price() -> None:
    assert not offers("Lumen Notes has three plans: Free, Pro and Team.", "money")
    assert offers("Free delivery on every order.", "money")
    # A table row's price cell: "Free" under the price column's header is an amount.
    assert offers("Resident card: Who it is for People who live here, Price Free.", "money")
    assert not offers("Pro plan: Storage 10 GB, Includes Free and Team features.", "money")


RETURNS = """## Returns

You can return an unused bike within 30 days of delivery for a full refund.

To send a bike back, follow these steps:

1. Sign in to your account and open Orders.
2. Select the bike and choose Request a return.
3. Hand the box to the courier and keep the receipt.
"""


def test_a_question_not_asking_how_is_not_answered_with_some_steps() -> None:
    chosen = select("Can I return a bike I never used for a refund?", {1: RETURNS})
    assert [c.text for c in chosen] == [
        "You can return an unused bike within 30 days of delivery for a full refund."
    ]
    steps = select("How do I return a bike by courier?", {1: RETURNS})
    assert [c.text for c in steps if c.step] == [
        "Sign in to your account and open Orders.",
        "Select the bike and choose Request a return.",
        "Hand the box to the courier and keep the receipt.",
    ]


def test_a_bulleted_list_item_is_a_statement_not_a_step() -> None:
    benefits = "## Members get\n\n- 10% off all plants.\n- free home delivery on every order.\n"
    chosen = select("What discount do members get on plants?", {1: benefits})
    assert chosen[0].text == "10% off all plants."
    assert not chosen[0].step


CLUB = """# Rider Club

Rider Club membership costs 49 euros a year and is open to anyone who owns a bike.

## What members get

- puncture repairs in our workshop are free, as often as you need them.
- one free safety check every year.
"""


def test_a_heading_is_the_context_of_the_sections_under_it() -> None:
    # "Rider Club" is the title of the benefits too: the sentence under it alone does not
    # win for sharing the club's name with the question.
    chosen = select("I'm in the Rider Club. Do I have to pay to get a puncture fixed?", {1: CLUB})
    assert chosen[0].text.startswith("puncture repairs in our workshop are free")


REGISTERING = """# Appointments

New patients are welcome at our practice; a first visit takes about 45 minutes.

## Booking your first appointment

To register as a new patient, do the following:
1. Fill in the medical history form on our website.
2. Call reception to choose a time.
3. Bring your insurance card to the first visit.
"""


def test_a_list_is_read_under_its_lead_in() -> None:
    # The heading says "booking"; the lead-in says what the steps do: "register".
    chosen = select("How do I register as a new patient?", {1: REGISTERING})
    assert [c.text for c in chosen] == [
        "Fill in the medical history form on our website.",
        "Call reception to choose a time.",
        "Bring your insurance card to the first visit.",
    ]


def test_a_sentence_saying_there_is_something_stands_alone() -> None:
    faq = (
        "## Is the clinic accessible?\n\nThe clinic has a step-free entrance.\n\n"
        "## Is there parking?\n\nThere is a public car park behind the building; the first "
        "hour is free."
    )
    chosen = select("Is parking free?", {1: faq})
    assert chosen[0].text.startswith("There is a public car park")


@pytest.mark.parametrize("apostrophe", ["'", "\u2019"])
def test_there_s_states_something_of_its_own_with_either_apostrophe(apostrophe: str) -> None:
    # A typographic apostrophe (Word, most web pages) read "There\u2019s a ..." as going on from
    # the sentence before it.
    assert not depends(f"There{apostrophe}s a public car park behind the building.")
    assert depends("There you can park for free.")


def test_an_item_of_a_list_of_facts_under_another_heading_may_answer() -> None:
    club = CLUB + "- free bike delivery anywhere in town.\n"
    chosen = select(
        "As a Rider Club member, what do I pay for having my bike delivered?", {1: club}
    )
    assert "free bike delivery anywhere in town." in [c.text for c in chosen]


HANDBOOK = """# Member handbook

## Printing

Printing costs 10 cents a page in black and white and 30 cents a page in colour.
"""
RESIDENTS = """# Resident plan

Residents rent a lockable private office.

## Included for residents

- printing is free up to 500 pages a month.
"""


def test_the_page_about_the_plan_asked_is_not_ranked_below_the_general_page() -> None:
    # Retrieval ranked the general page first; it never mentions residents, and the resident
    # plan's page says what it is about (printing) too: its sentences are not decayed below.
    question = "Do residents have to pay for printing?"
    alone = rank_sentences(question, {1: RESIDENTS})
    second = rank_sentences(question, {1: HANDBOOK, 2: RESIDENTS})
    # (Not the first block's decay, 0.75: only the IDF over more sentences moves the score.)
    assert max(c.score for c in second if c.n == 2) > 0.9 * alone[0].score
    # Not past a page about something else the question asks ("the app"), which it lacks.
    app = "# Sharing with the app\n\nInvite up to five members from the device page in the app."
    grinder = "# Grinder\n\n## Cleaning the grinder\n\nBrush the burrs of the grinder monthly."
    ranked = rank_sentences("Can my flatmates use the app to run my grinder?", {1: app, 2: grinder})
    assert ranked[0].n == 1
    # Nor past a page about more of what is asked ("Seeblick Friends" over "room").
    friends = "# Seeblick Friends\n\n- late check-out until 14:00 at no extra cost."
    rooms = "# Rooms\n\nA late check-out costs 25 euros. Seeblick Friends get extras."
    question = "As a Seeblick Friends member, what does it cost me to keep my room until 2 pm?"
    alone = rank_sentences(question, {1: rooms})
    second = rank_sentences(question, {1: friends, 2: rooms})
    assert max(c.score for c in second if c.n == 2) < 0.8 * max(c.score for c in alone)


def test_an_faq_entry_ranks_with_its_documents_first_block() -> None:
    # One FAQ in three chunks: the entry that answers is in the third, retrieval having
    # ranked the others by their best entries; an entry of another document still decays.
    blocks = {
        1: "## Am I guaranteed a room in halls?\n\n"
        "First-year students who apply by 1 July are guaranteed a room in halls.",
        2: "## When can I move in?\n\nRooms are ready from the arrivals weekend in September.",
        3: "## Can I bring my car?\n\n"
        "There is no parking at any of our halls, except for blue badge holders.",
    }
    question = "Is there parking at the halls?"
    same = {n: "halls.html" for n in blocks}
    assert select(question, blocks, names=same)[0].n == 3
    other = {1: "halls.html", 2: "halls.html", 3: "transport.html"}
    assert select(question, blocks, names=other)[0].n == 1
    # Two documents of one collection may share a name ("faq.md" of two offices): their
    # ids, when known, tell them apart.
    ids = {1: "doc-halls", 2: "doc-halls", 3: "doc-transport"}
    assert select(question, blocks, names=same, docs=ids)[0].n == 1
    assert select(question, blocks, names=same, docs=dict.fromkeys(blocks, "doc-halls"))[0].n == 3


def test_rankings_kept_for_a_scorer_do_not_keep_it_alive() -> None:
    """A closed Services' sentence vectors go with it: the rankings kept for a scorer (its
    cosines) are dropped with the scorer, not held by a module-level cache (review finding)."""

    class Scorer:
        calls = 0

        def __call__(self, question: str, sentences: Sequence[str]) -> list[float]:
            Scorer.calls += 1
            return [0.5] * len(sentences)

    scorer = Scorer()
    question = "How long do residents keep their permit?"
    first = rank_sentences(question, {1: RESIDENTS}, scorer)
    assert rank_sentences(question, {1: RESIDENTS}, scorer) == first
    assert Scorer.calls == 1  # kept while the scorer lives
    gone = weakref.ref(scorer)
    del scorer
    gc.collect()
    assert gone() is None


def test_a_bulleted_list_of_labelled_fees_is_a_list_not_table_rows() -> None:
    # Extraction writes table rows as "label: values." lines with no marker; a bulleted list
    # of "Fee: amount" items was read as rows and quoted with its "- " marker.
    fees = (
        "# Fees\n\n"
        "We charge a fee only when a booking does not go as agreed.\n\n"
        "- Late return: 20 euros per started half hour.\n"
        "- Cleaning fee: 60 euros if the car is returned dirty.\n"
        "- Lost key card: 25 euros.\n"
    )
    ranked = rank_sentences("What is the cleaning fee?", {1: fees})
    assert ranked[0].text == "Cleaning fee: 60 euros if the car is returned dirty."
    assert not any(c.text.startswith("-") or c.row for c in ranked)


def test_a_periods_adjective_matches_its_unit() -> None:
    # "hourly" asks for the price per hour, "daily" for the one a day.
    prices = "# Fares\n\nThe day price is 40 euros a day.\n\nThe hour price is 6 euros an hour.\n"
    ranked = rank_sentences("What is the hourly price?", {1: prices})
    assert ranked[0].text == "The hour price is 6 euros an hour."
    assert ranked[0].score > ranked[1].score
    ranked = rank_sentences("What is the daily price?", {1: prices})
    assert ranked[0].text == "The day price is 40 euros a day."
