from __future__ import annotations

from stream_rag.answer.statements import terms_of
from stream_rag.text import tokenize


def test_lowercase_stop_words_and_punctuation() -> None:
    assert tokenize("The Refund window, for ANNUAL plans: 30 days!") == [
        "refund",
        "window",
        "annual",
        "plans",
        "30",
        "days",
    ]


def test_unicode_is_normalised() -> None:
    assert tokenize("ÉCOLE Straße ﬁne") == ["école", "strasse", "fine"]


def test_numbers_keep_their_decimal_point() -> None:
    assert tokenize("It costs $3.50 per month.") == ["costs", "3.50", "month"]


def test_chinese_becomes_character_bigrams() -> None:
    assert tokenize("退款期限为三十天。") == [
        "退款",
        "款期",
        "期限",
        "限为",
        "为三",
        "三十",
        "十天",
    ]


def test_japanese_mixed_with_latin_and_digits() -> None:
    assert tokenize("Lumen の返金は30日") == ["lumen", "の返", "返金", "金は", "30", "日"]


def test_single_cjk_character_is_kept() -> None:
    assert tokenize("价 plan") == ["价", "plan"]


def test_a_hyphenated_word_is_also_one_word() -> None:
    # "e-bike" and "ebike", "wi-fi" and "wifi", "check-out" and "checkout" must meet in BM25,
    # the evidence score and the gate: the parts stay terms, the joined word is one more.
    assert tokenize("The e-bike costs") == ["bike", "ebike", "costs"]
    assert tokenize("Free Wi-Fi, check-out by noon") == [
        "free",
        "wi",
        "fi",
        "wifi",
        "check",
        "checkout",
        "noon",
    ]
    assert "ebike" in tokenize("how much for an ebike")
    assert tokenize("state-of-the-art") == ["state", "art", "stateoftheart"]


def test_a_lone_small_letter_before_a_word_is_also_joined_to_it() -> None:
    assert tokenize("an e bike or an e mail") == ["bike", "ebike", "mail", "email"]
    # a capital letter names a plan or an option; numbers and ranges are not words
    assert tokenize("Plan B covers it") == ["plan", "covers"]
    assert tokenize("X-300, 1-2 days, 9-5") == ["300", "1", "2", "days", "9", "5"]


def test_a_lone_small_letter_is_not_joined_to_a_stop_word() -> None:
    # "plan b on sale" typed in lower case made "bon" a term of the question: no block has it,
    # so it lowered the question's term share (the evidence score) like a word no source says.
    assert tokenize("is plan b on sale") == ["plan", "sale"]
    assert tokenize("vitamin d in winter, option c for students") == [
        "vitamin",
        "winter",
        "option",
        "students",
    ]
    assert tokenize("an e bike") == ["bike", "ebike"]


def test_a_statement_ending_in_a_lone_letter_gives_the_next_one_no_term() -> None:
    # `terms_of` reads its statements in one `tokenize` call, joined by a separator word: the
    # letter was joined to it, and the next statement had the term "bqqstatementbreakqq".
    assert (
        terms_of(["Choose plan b", "Refunds take ten days."])[1]
        == terms_of(["Refunds take ten days."])[0]
    )
