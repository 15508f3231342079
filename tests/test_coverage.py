"""A word of the question is in a block as written, stemmed, or derived ("cancel" in
"Cancellations"): in the evidence score's term share and in what the parts of a question the
blocks cover (`language/coverage.py`)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from stream_rag.answer.evidence import evidence_score
from stream_rag.language.coverage import _may_have, derived, has_word, own_words
from stream_rag.retrieve.hybrid import Block

POLICY = "Cancellations made 24 hours before pick-up are refunded in full."


def block(text: str) -> Block:
    return Block(1, "c1", "doc_1", 1, "", "n", "n.txt", 0, len(text), text, {"dense": 0.5}, None)


def test_a_derivation_of_five_letters_or_more_is_the_same_word() -> None:
    have = frozenset({"cancellation", "refund", "encrypt", "park", "statement"})
    assert derived("cancel", have)
    assert derived("encryption", have)
    assert derived("refundable", have)
    assert derived("state", have)  # one root, as far as a lookup can tell
    assert not derived("parking", have)  # "park": four letters, too short to tell
    assert not derived("cancer", have)
    assert has_word(POLICY, "cancel")
    assert not has_word(POLICY, "booking")


def test_the_evidence_score_counts_a_derived_term() -> None:
    # "cancel" (derived) and "booking" (absent) of two terms: (0.5 + dense 0.5) / 2
    assert evidence_score("Can I cancel my booking?", [block(POLICY)]) == 0.5
    assert evidence_score("Can I cancel?", [block(POLICY)]) == 0.75


def test_how_a_part_asks_is_not_what_it_asks_about() -> None:
    assert own_words(["How big is the deposit", "can I pay with PayPal?"]) == [
        {"deposit"},
        {"pay", "paypal"},
    ]


def test_a_hyphenated_word_counts_as_its_parts_found_in_either_form() -> None:
    wifi = block("The Wi-Fi password is on the counter.")
    # reset, wi, fi, router: two of four, as before "wifi" was a token too (not three of five)
    assert evidence_score("How do I reset my Wi-Fi router?", [wifi]) == 0.5
    assert evidence_score("Do you have wifi?", [wifi]) == 0.75
    assert evidence_score("Is there Wi-Fi?", [block("We have free wifi.")]) == 0.75
    assert evidence_score("What does an e-bike cost?", [block("An ebike costs 38 euros.")]) == 0.75


def test_a_hyphenated_word_is_found_joined_but_not_as_one_of_its_parts() -> None:
    assert has_word("Free wifi in the shop.", "Wi-Fi")
    assert has_word("An ebike costs 38 euros.", "e-bike")
    assert not has_word("City bikes cost 15 euros.", "e-bike")  # the city bike's


def _as_written(text: str, word: str) -> bool:
    """The regex `has_word` tries first, on its own: the oracle for its ASCII pre-test."""
    return bool(re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.IGNORECASE))


_ALPHABET = "abeiksKSI- .,'\u017f\u212a\u0130\u0131"  # long s, Kelvin sign, dotted/dotless I


@settings(max_examples=400, deadline=None)
@given(
    text=st.text(alphabet=_ALPHABET, max_size=40),
    word=st.text(alphabet=_ALPHABET, min_size=1, max_size=6),
)
def test_the_ascii_pre_test_never_hides_a_word_the_regex_finds(text: str, word: str) -> None:
    # has_word skips the regex when `_may_have` says the word cannot be there: wherever the
    # regex alone finds it, the pre-test must let it look (the terms has_word tries next
    # would hide a wrong skip in most texts, so the pre-test is checked on its own).
    if _as_written(text, word):
        assert _may_have(text, word)


def test_a_word_in_other_case_or_with_a_non_ascii_case_twin_is_found() -> None:
    assert has_word("Ask the SUPPORT desk.", "support")
    assert has_word("a \u017fhop", "shop")  # re's IGNORECASE: the long s is an s
    assert has_word("5 \u212ailo", "kilo")  # and the Kelvin sign a k
    assert not has_word("Ask the support desk.", "gym")
