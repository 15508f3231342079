from __future__ import annotations

import pytest

from stream_rag.language.quantities import Quantity, Stated, canonical, quantities, scan


def stated(text: str) -> Stated:
    return Stated.of(*scan(canonical(text)))


def test_number_words_become_digits() -> None:
    assert canonical("Twenty-five people, one hundred and five, two million") == (
        "25 people, 105, 2000000"
    )
    assert canonical("fourteen days, three to seven, twenty twenty") == ("14 days, 3 to 7, 20 20")


def test_one_stays_a_word() -> None:
    assert canonical("one of them, no one, someone, often") == "one of them, no one, someone, often"
    assert canonical("one hundred") == "100"


def test_chinese_numerals_become_digits() -> None:
    assert canonical("三十天、十五个、一百元、二〇二四年、一天") == "30天、15个、100元、2024年、1天"


def test_chinese_numerals_inside_words_stay() -> None:
    assert canonical("十分方便、万一、一些、统一") == "十分方便、万一、一些、统一"


def test_canonical_normalises() -> None:
    assert canonical("\uff21\uff22\uff23 \uff13\uff10 Thirty") == "abc 30 30"


def test_quantities_in_order_of_kind() -> None:
    found = quantities(canonical("On May 1, 2024 at 5pm it cost $3.50, 20% off; 1950s."))
    assert [q.text for q in found] == ["may 1, 2024", "5pm", "$3.50", "20%", "1950s"]
    assert found[0].dates == ((2024, 5, 1),)
    assert found[1].times == ((17, 0),)
    assert found[2].values == ((3.5, "$"),)
    assert found[3].values == ((20.0, "%"),)
    assert found[4].values == ((1950.0, None),)


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("1,500,000 files", ((1500000.0, None),)),
        ("1.5 million", ((1500000.0, None),)),
        ("$8 million", ((8000000.0, "$"),)),
        ("8 dollars", ((8.0, "$"),)),
        ("8 USD", ((8.0, "$"),)),
        ("3.50 euros", ((3.5, "€"),)),
        ("40 per cent", ((40.0, "%"),)),
        ("the 7th", ((7.0, None),)),
    ],
)
def test_values_and_units(text: str, values: tuple[tuple[float, str | None], ...]) -> None:
    [found] = quantities(canonical(text))
    assert found.values == values


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        ("2024-05-01", ((2024, 5, 1),)),
        ("May 1st, 2024", ((2024, 5, 1),)),
        ("1 of May 2024", ((2024, 5, 1),)),
        ("Sept. 3", ((None, 9, 3),)),
        ("March 2020", ((2020, 3, None),)),
        ("05/01/24", ((2024, 1, 5), (2024, 5, 1))),
        ("13/01/2024", ((2024, 1, 13),)),
    ],
)
def test_dates(text: str, dates: tuple[tuple[int | None, int, int | None], ...]) -> None:
    [found] = quantities(canonical(text))
    assert found.dates == dates


@pytest.mark.parametrize(
    ("text", "times"),
    [
        ("9:00", ((9, 0), (21, 0))),
        ("9 am", ((9, 0),)),
        ("9:30 p.m.", ((21, 30),)),
        ("12pm", ((12, 0),)),
        ("12 am", ((0, 0),)),
        ("17:45", ((17, 45),)),
    ],
)
def test_times(text: str, times: tuple[tuple[int, int], ...]) -> None:
    [found] = quantities(canonical(text))
    assert found.times == times


def test_not_numbers() -> None:
    assert quantities(canonical("b2c mp3 covid")) == []
    assert quantities(canonical("they may go, 5 amazing days")) == [
        Quantity("5 amazing", values=((5.0, None),))
    ]


def test_digits_after_cjk_text_are_numbers() -> None:
    assert [q.text for q in quantities(canonical("购买后45天内"))] == ["45天"]


def test_scan_blanks_dates_and_times_for_the_term_check() -> None:
    found, words = scan(canonical("Released June 1, 2024 at 9 pm for 30 days"))
    assert len(found) == 3
    assert "june" not in words
    assert "pm" not in words
    assert "30 days" in words


def test_a_block_vouches_leniently() -> None:
    block = stated("Released 2024-05-01 at 9:00 am; 1.5 million users; it costs 8; third.")
    assert block.vouches_for(quantities("2024")[0])  # a part of a date
    assert block.vouches_for(quantities("1.5")[0])  # the number before a scale
    assert block.vouches_for(quantities(canonical("$8"))[0])  # unitless 8 allows any unit
    assert block.vouches_for(quantities("3")[0])  # "third"
    assert not block.vouches_for(quantities(canonical("9 pm"))[0])
    assert not block.vouches_for(quantities(canonical("$9"))[0])  # 9 is only an hour


def test_a_unit_must_agree_when_both_state_one() -> None:
    block = stated("Shipping costs $8 and takes 50% longer.")
    assert block.vouches_for(quantities(canonical("8 dollars"))[0])
    assert block.vouches_for(quantities("8")[0])
    assert not block.vouches_for(quantities("8%")[0])
    assert not block.vouches_for(quantities(canonical("50 dollars"))[0])


def test_a_date_without_year_in_the_block_takes_its_year_from_the_block() -> None:
    block = stated("In 2023 the office moved; it reopened on March 3.")
    assert block.vouches_for(quantities(canonical("March 3, 2023"))[0])
    assert not block.vouches_for(quantities(canonical("March 3, 2022"))[0])
    assert not block.vouches_for(quantities(canonical("March 4"))[0])


def test_a_year_range_written_short_ends_on_the_year_it_names() -> None:
    block = stated("Fees rise over the 2024-2025 academic year.")
    ends = quantities(canonical("the 2024–25 academic year"))[1]
    assert ends.values == ((25.0, None), (2025.0, None))
    assert block.vouches_for(ends)
    assert not block.vouches_for(quantities(canonical("the 2024–26 academic year"))[1])
    # Only a forward range after a year: pages and backward pairs keep their one reading.
    assert quantities("pages 12-19")[1].values == ((19.0, None),)
    assert quantities("from 2019-18")[1].values == ((18.0, None),)
    assert quantities(canonical("1,2018-19"))[1].values == ((19.0, None),)
