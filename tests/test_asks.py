"""A question asking several things is answered by the local generator from the block that
answers each, every sentence cited to its own block (over real HTTP); what it does not split."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.language.asks import asks
from stream_rag.model.extractive import SentenceVectors, compose

from .helpers import running_server
from .test_chat_http import upload


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "What are the prices of the Basic and Pro plans?",
            ["What are the prices of the Basic plans?", "What are the prices of Pro plans?"],
        ),
        (
            "What are the opening hours and can guests visit?",
            ["What are the opening hours", "can guests visit?"],
        ),
        (
            "How much is a day pass? Is Wi-Fi included?",
            ["How much is a day pass?", "Is Wi-Fi included?"],
        ),
        (
            "How do I clean the kettle and the blender?",
            ["How do I clean the kettle?", "How do I clean the blender?"],
        ),
        (
            "What do the city bike and the e-bike cost per day?",
            ["What do the city bike cost per day?", "What do the e-bike cost per day?"],
        ),
        ("Can I use Dropbox and Google Drive?", ["Can I use Dropbox?", "Can I use Google Drive?"]),
        (
            "What about the cargo bike, the city bike and the e-bike?",
            ["What about the cargo bike?", "What about the city bike?", "What about the e-bike?"],
        ),
        (
            "How much are the city bike and the e-bike per day?",
            ["How much are the city bike per day?", "How much are the e-bike per day?"],
        ),
        (
            "What do the city bike and the kids' bike cost per day?",
            ["What do the city bike cost per day?", "What do the kids' bike cost per day?"],
        ),
        (
            "Is the owner’s manual or the user's guide online?",
            ["Is the owner’s manual online?", "Is the user's guide online?"],
        ),
        (
            "Does the X200 or the X300 support 5 GHz?",
            ["Does the X200 support 5 GHz?", "Does the X300 support 5 GHz?"],
        ),
    ],
)
def test_a_question_asking_several_things_is_split_into_them(
    question: str, parts: list[str]
) -> None:
    assert asks(question) == parts


@pytest.mark.parametrize(
    "question",
    [
        "Can I pause and resume sync?",
        "How can I remove my account and data?",
        "Where and when can I pick it up?",
        "And how do I claim it?",
        "Is there a student discount?",
        "Pro and Team plans: what do they cost?",  # a first word's capital names nothing
        "And how do I claim it? claim (Nimbus Blender warranty cover)",  # a resolved follow-up
    ],
)
def test_a_question_asking_one_thing_is_left_whole(question: str) -> None:
    assert asks(question) == [question]


BASIC = b"# Basic plan\n\nThe Basic plan costs 5 euros per month and includes 10 GB of storage.\n"
PRO = b"# Pro plan\n\nThe Pro plan costs 12 euros per month and includes 1 TB of storage.\n"
SPACE = b"""# Visiting the office

## When are you open?
The office is open from 9:00 to 17:00 on weekdays.

## Is there parking?
There are twelve parking spaces behind the building.
"""
BIKES = b"""# Rental prices

| Bike | Per hour | Per day |
|---|---|---|
| City bike | 4 euros | 18 euros |
| E-bike | 9 euros | 39 euros |
| Cargo bike | 12 euros | 55 euros |
"""
GUESTS = b"""House rules

Guests must sign in at reception and may stay for up to two hours.
"""


def ask(base_url: str, question: str) -> dict[str, Any]:
    response = httpx.post(f"{base_url}/v1/answer", json={"question": question}, timeout=120)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def cited(result: dict[str, Any]) -> list[tuple[str, list[str]]]:
    return [(s["text"], [c["name"] for c in s["citations"]]) for s in result["sentences"]]


def test_each_thing_asked_is_answered_from_its_own_block(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    with running_server(create_app(settings, embedder=minilm)) as base_url:
        for name, data in (
            ("basic.md", BASIC),
            ("pro.md", PRO),
            ("office.md", SPACE),
            ("rules.txt", GUESTS),
            ("bikes.md", BIKES),
        ):
            upload(base_url, name, data)

        prices = ask(base_url, "What are the prices of the Basic and Pro plans?")
        assert cited(prices) == [
            ("The Basic plan costs 5 euros per month and includes 10 GB of storage.", ["basic.md"]),
            ("The Pro plan costs 12 euros per month and includes 1 TB of storage.", ["pro.md"]),
        ]
        visit = ask(base_url, "When are you open and how long can guests stay?")
        assert cited(visit) == [
            ("The office is open from 9:00 to 17:00 on weekdays.", ["office.md"]),
            ("Guests must sign in at reception and may stay for up to two hours.", ["rules.txt"]),
        ]
        rows = ask(base_url, "What do the city bike and the e-bike cost per day?")
        assert cited(rows) == [
            ("City bike: Per hour 4 euros, Per day 18 euros.", ["bikes.md"]),
            ("E-bike: Per hour 9 euros, Per day 39 euros.", ["bikes.md"]),
        ]
        # What no block answers is not answered with the nearest entry (the parking one).
        gym = ask(base_url, "When are you open and is there a gym?")
        assert cited(gym) == [
            ("The office is open from 9:00 to 17:00 on weekdays.", ["office.md"]),
        ]


def test_a_part_asking_mostly_what_no_block_names_is_not_answered() -> None:
    blocks = {1: SPACE.decode(), 2: "Meeting rooms cost 15 euros an hour."}
    question = "When is the office open and how much does a gym cost?"
    assert [c.text for c in compose(question, blocks)] == [
        "The office is open from 9:00 to 17:00 on weekdays."
    ]
    both = "When is the office open and how much does a meeting room cost?"
    assert [(c.n, c.text) for c in compose(both, blocks)] == [
        (1, "The office is open from 9:00 to 17:00 on weekdays."),
        (2, "Meeting rooms cost 15 euros an hour."),
    ]


PRICING = (
    "# Plans and pricing\n\nLumen Notes has three plans: Free, Pro and Team.\n\nThe Free plan "
    "includes up to 3 notebooks, 100 MB of storage and sync across 2 devices.\n\nThe Pro plan "
    "costs $8 per month, or $80 per year when billed annually.\n\nThe Team plan costs $12 per "
    "user per month."
)
REFUNDS = (
    "Lumen Notes offers a full refund within 30 days of purchase for annual plans. Refunds are "
    "returned to the original payment method within 5 to 10 business days."
)


def test_a_part_about_a_name_no_block_has_is_left_out(minilm: MiniLMEmbedder) -> None:
    # The finding: "How much does the Basic plan cost?" beside a refund question was answered
    # with the Free, Pro and Team plans' prices: true, cited, and about something else.
    blocks = {1: PRICING, 2: REFUNDS}
    names = {1: "pricing.md", 2: "refund-policy.md"}
    dense = SentenceVectors(minilm)
    question = "How much does the Basic plan cost, and how long do refunds take?"
    chosen = compose(question, blocks, names=names, dense=dense)
    assert [c.n for c in chosen] == [2, 2], chosen
    # A name in the document's name counts as the block's.
    titled = {1: PRICING.replace("Pro plan", "plan"), 2: REFUNDS}
    plan = "How much does the Pro plan cost, and how long do refunds take?"
    chosen = compose(plan, titled, names={1: "pro-plan.md", 2: "refunds.md"}, dense=dense)
    assert {c.n for c in chosen} == {1, 2}, chosen


def test_how_a_part_asks_is_not_what_it_asks_about(minilm: MiniLMEmbedder) -> None:
    """ "How much" is how the first part asks: its subject, the deposit, is in a block."""
    blocks = {
        1: "A deposit of 100 euros is blocked on your card when you pick up the bike.",
        2: "Bring a photo ID and a credit card for the deposit.",
    }
    question = "How much is the deposit? And what do I need to bring?"
    assert [c.n for c in compose(question, blocks, dense=SentenceVectors(minilm))] == [1, 2]


@pytest.mark.parametrize(
    "question",
    [
        # Every word a model name both ways ("X1": a capital, and letters then a digit), no
        # "and": each word's two readings were tried against each other, 2**n of them.
        "Is " + " ".join(["X1"] * 60) + " good?",
        "Is " + ", ".join(["Ab1"] * 60) + " good?",
        # A run of spaces: a clause separator was tried at every split of it, n**3 steps.
        "What" + " " * 4000 + "is it?",
    ],
)
def test_a_question_built_to_backtrack_is_split_in_linear_time(question: str) -> None:
    # Not a speed target: without the fix these take hours to centuries (2**60 steps, or
    # 4000**3), with it milliseconds, so the generous limit only turns a hang into a failure.
    # A subprocess, because `re` holds the GIL and a thread cannot be given up on.
    code = "import sys; from stream_rag.language.asks import asks; asks(sys.stdin.read())"
    subprocess.run([sys.executable, "-c", code], input=question, text=True, check=True, timeout=120)
