"""A word of the question is in a block as written, stemmed, or derived ("cancel" in
"Cancellations"): in the evidence score's term share and in what the parts of a question the
blocks cover (`language/coverage.py`)."""

from __future__ import annotations

from stream_rag.answer.evidence import evidence_score
from stream_rag.language.coverage import derived, has_word, own_words
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
