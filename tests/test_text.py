from __future__ import annotations

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
