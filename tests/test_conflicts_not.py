"""What is not a conflict: agreement in other words, other subjects, false-positive traps built
from the sample knowledge base's wording, and differences the question does not ask about."""

from __future__ import annotations

from stream_rag.answer.conflicts import LexicalConflictDetector

from .test_conflicts import REFUND_Q, block, find, values

# --- what is not a conflict -----------------------------------------------------------------


def test_identical_statements_do_not_conflict() -> None:
    text = "Annual plans can be refunded within 30 days of purchase."
    assert find(REFUND_Q, text, text) == []


def test_number_words_equal_digits() -> None:
    a = "Annual plans can be refunded within thirty days of purchase."
    b = "Annual plans can be refunded within 30 days of purchase."
    assert find(REFUND_Q, a, b) == []


def test_currency_and_percent_spellings_agree() -> None:
    q = "How much does the Pro plan cost?"
    assert (
        find(q, "The Pro plan costs $8 per month.", "The Pro plan costs 8 dollars per month.") == []
    )
    q = "What discount do students get on the Pro plan?"
    a = "Students get the Pro plan at 50% off with a school email."
    b = "Students get the Pro plan at 50 percent off with a school email."
    assert find(q, a, b) == []


def test_different_subjects_with_different_numbers() -> None:
    q = "How long do export links and deleted notes last?"
    a = "The export download link expires after 7 days."
    b = "Deleted notes stay in the Trash for 30 days."
    assert find(q, a, b) == []


def test_blocks_of_one_document_never_conflict() -> None:
    a = block(1, "refund-policy", "Annual plans can be refunded within 30 days of purchase.")
    b = block(2, "refund-policy", "Annual plans can be refunded within 14 days of purchase.")
    assert LexicalConflictDetector().find(REFUND_Q, [a, b]) == []


def test_only_top_n_blocks_are_compared() -> None:
    filler = [f"Filler paragraph number {i} about themes and fonts." for i in range(3)]
    texts = [
        "Annual plans can be refunded within 30 days of purchase.",
        *filler,
        "Annual plans can be refunded within 14 days of purchase.",
    ]
    assert find(REFUND_Q, *texts) == []  # the contradicting block is 5th
    assert len(find(REFUND_Q, *texts, top_n=5)) == 1


def test_unrelated_numeric_difference_in_the_same_blocks_is_ignored() -> None:
    refunds = "Annual plans can be refunded within 30 days."
    a = f"{refunds} The export download link expires after 7 days."
    b = f"{refunds} The export download link expires after 3 days."
    assert find(REFUND_Q, a, b) == []
    q = "When does the export download link expire?"
    assert values(find(q, a, b)) == [(("7 days",), ("3 days",), "number")]


def test_one_generic_shared_question_term_is_not_enough() -> None:
    # "Notes" is in the product name, so every sentence naming it shares a term with the question.
    q = "How long do deleted notes stay in the Trash?"
    a = "Lumen Notes offers a full refund within 30 days of purchase for annual plans."
    b = "Lumen Notes offers a full refund within 14 days of purchase for annual plans."
    assert find(q, a, b) == []
    assert len(find(q, a, b, min_question_terms=1)) == 1
    # A question with one content term needs only that one ("how long" is how it is asked).
    assert len(find("How long is a refund?", a, b)) == 1


def test_only_the_statements_that_best_match_the_question_count() -> None:
    a = "The Pro plan costs $8 per month. The Pro plan includes 20 GB of storage."
    b = "The Pro plan costs $10 per month. The Pro plan includes 20 GB of storage."
    assert find("How much storage does the Pro plan have?", a, b) == []
    assert len(find("How much does the Pro plan cost?", a, b)) == 1


def test_a_sentence_opening_with_a_pronoun_is_about_the_one_before() -> None:
    a = "The Pro plan costs $8 per month. It includes 20 GB of storage."
    b = "The Pro plan costs $10 per month. It includes 20 GB of storage."
    assert find("How much storage does the Pro plan have?", a, b) == []
    c = "The Pro plan is our most popular plan. It includes 50 GB of storage."
    assert values(find("How much storage does the Pro plan have?", a, c)) == [
        (("20 GB",), ("50 GB",), "number")
    ]


def test_question_without_content_terms_finds_nothing() -> None:
    a = "Annual plans can be refunded within 30 days of purchase."
    b = "Annual plans can be refunded within 14 days of purchase."
    assert find("Why is it so?", a, b) == []


# --- false-positive traps -------------------------------------------------------------------


def test_free_and_pro_plans_are_different_subjects() -> None:
    q = "How many notebooks do the plans include?"
    assert find(q, "Free plan: 3 notebooks", "Pro plan: unlimited notebooks, 20 GB") == []
    q = "How much storage do the plans include?"
    a = "The Free plan includes 2 GB of storage."
    b = "The Pro plan includes 20 GB of storage."
    assert find(q, a, b) == []
    assert find(q, a, b, max_substitutions=1) == []  # "Free" and "Pro" are names


def test_monthly_and_annual_prices_are_not_compared() -> None:
    q = "How much does the Pro plan cost?"
    assert find(q, "The Pro plan costs $8 per month.", "The Pro plan costs $80 per year.") == []
    a = "The Pro plan costs $8 per month."
    b = "The Pro plan costs $96 annually."
    assert find(q, a, b) == []


def test_price_per_same_period_conflicts() -> None:
    q = "How much does the Pro plan cost?"
    a = "The Pro plan costs $8 per month."
    b = "The Pro plan costs $10 a month."
    assert values(find(q, a, b)) == [(("$8 per month",), ("$10 a month",), "number")]


def test_annual_and_monthly_refunds_are_a_substitution() -> None:
    q = "How long is the refund window for plans?"
    a = "Annual plans can be refunded within 30 days of purchase."
    b = "Monthly plans can be refunded within 3 days of purchase."
    assert find(q, a, b) == []
    # Allowing one substituted word trades this trap for paraphrases like plans/subscriptions.
    assert values(find(q, a, b, max_substitutions=1)) == [(("30 days",), ("3 days",), "number")]


def test_comparison_words_keep_subjects_apart() -> None:
    q = "Are large attachments synced?"
    a = "Large attachments over 250 MB are not synced."
    b = "Attachments under 250 MB are synced."
    assert find(q, a, b) == []


def test_a_bound_is_not_a_negation() -> None:
    q = "How long are refunds available after purchase?"
    a = "Refunds are available for no more than 30 days after purchase."
    b = "Refunds are available for 30 days after purchase."
    assert find(q, a, b) == []


def test_question_term_in_only_one_sentence_is_a_different_subject() -> None:
    a = "Plans can be refunded within 30 days of purchase."
    b = "Annual plans can be refunded within 14 days of purchase."
    assert find(REFUND_Q, a, b) == []  # b is about annual plans, a about plans in general


def test_an_extra_value_on_one_side_is_not_a_conflict() -> None:
    a = "Seats can be refunded within 30 days of purchase."
    b = "Seats can be refunded within 30 days of purchase, or 14 days for gift seats."
    assert find("Can seats be refunded?", a, b) == []


def test_short_context_dependent_lines_need_three_shared_terms() -> None:
    q = "When was the refund policy last updated?"
    assert find(q, "Last updated: March 1, 2024.", "Last updated: June 5, 2023.") == []


# --- only what the question asks about (issue 10) -------------------------------------------

RETURNS_45 = (
    "Items can be returned within 45 days of delivery, and there is no restocking fee. "
    "Refunds are issued within 5 business days of receiving the item."
)
RETURNS_60 = (
    "Items can be returned within 60 days of delivery, and there is no restocking fee. "
    "Refunds are issued within 5 business days of receiving the item."
)


def test_a_difference_the_question_does_not_touch_is_no_conflict() -> None:
    assert find("Is there a restocking fee?", RETURNS_45, RETURNS_60) == []
    assert find("How fast are refunds issued?", RETURNS_45, RETURNS_60) == []
    assert find("How much does a return cost?", RETURNS_45, RETURNS_60) == []  # money, not days


def test_where_is_not_asking_how_long() -> None:
    a = "Spare parts are sold in our web shop. We keep spare parts available for seven years."
    b = "We keep spare parts available for ten years after a product is discontinued."
    assert find("Where can I get spare parts?", a, b) == []
    assert len(find("How long do you keep spare parts available?", a, b)) == 1
    # An address is a place: two of them for one shop still disagree.
    shop_a = "Our repair shop is at 12 Harbour Street in the old town."
    shop_b = "Our repair shop is at 14 Harbour Street in the old town."
    assert len(find("Where is your repair shop?", shop_a, shop_b)) == 1


def test_the_difference_the_question_asks_about_is_still_a_conflict() -> None:
    questions = (
        "How long do I have to return an item?",
        "Within how many days can items be returned?",
    )
    for q in questions:
        (conflict,) = find(q, RETURNS_45, RETURNS_60)
        assert (conflict.values_a, conflict.values_b) == (("45 days",), ("60 days",))
        assert conflict.sentence_a.startswith("Items can be returned within 45 days")


def test_a_model_the_question_names_scopes_the_documents() -> None:
    # Two products' manuals say the same thing with different numbers; the question names one.
    x300 = (
        "Acme Router X300 Quick Start\n\nTo factory reset the router, hold the Reset button "
        "for 15 seconds. The Acme Router X300 has a 3-year limited warranty."
    )
    x200 = (
        "Acme Router X200 Quick Start\n\nTo factory reset the router, hold the Reset button "
        "for 10 seconds. The Acme Router X200 has a 2-year limited warranty."
    )
    assert find("How do I factory reset the X300?", x300, x200) == []
    assert find("How long is the x300 warranty?", x200, x300) == []
    # Named by neither, or by both: still a conflict.
    assert values(find("How do I factory reset the router?", x300, x200)) == [
        (("15 seconds",), ("10 seconds",), "number")
    ]
    both = x200.replace("Start", "Start (also for the X300)")
    assert values(find("How do I factory reset the X300?", x300, both)) == [
        (("15 seconds",), ("10 seconds",), "number")
    ]


def test_two_statements_sharing_a_word_or_two_with_a_long_question_are_not_its_conflict() -> None:
    a = "Home delivery of a bike costs 29 euros and takes 5 to 7 working days."
    b = "Home delivery of a bike costs 39 euros and takes 3 to 5 working days."
    c = "You can return a bike within 30 days. Test rides before you buy a bike are free."
    # A situation told first, then the question: only the asking sentence says what is asked,
    # and of that, what the blocks speak of ("return", "ride", "buy" in the third).
    assert find("I threw the box away. Does it cost me anything to return it?", a, b, c) == []
    assert find("Can I take a bike out for a ride before I decide to buy it?", a, b, c) == []
    assert len(find("How much does it cost to have a bike delivered to my house?", a, b, c)) == 1
    assert len(find("How many days does home delivery of a bike take?", a, b, c)) == 1


def test_a_denial_the_other_side_does_not_contradict() -> None:
    given = "You pay a refundable deposit of 150 euros when you pick up the bike."
    assert find("Is there a deposit?", "There is no deposit for members.", given) == []
    assert find("Is there a deposit?", "There is no parking.", given) == []
    assert find("Where can I park?", "There is no deposit.", given) == []
    # The value is another thing's: the deposit is only named beside it.
    other = "The helmet costs 15 euros, and you can ask about the deposit at the desk."
    assert find("Is there a deposit?", "There is no deposit.", other) == []
