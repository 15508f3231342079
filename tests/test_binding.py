"""What a clause's small words bind (gate/binding.py, through the lexical gate): bounds on
numbers, modals, words of scope and excess, opposites the overlap reads as glue, a range's
end alone, a dropped condition, a frame that denies the clause. Blocks of domains the
fixtures and the benchmarks do not use; each rule fails its edit and passes a faithful one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_rag.gate import binding
from stream_rag.gate.lexical import GateContext, check_sentence
from stream_rag.gate.normalise import normalise_unit

from .gating import verdict

LIBRARY = (
    "Members can borrow at most 8 books at a time. Loans last up to 21 days and can be "
    "renewed twice. Overdue books are charged 20 cents per day after the due date."
)
CLINIC = (
    "Patients must book an appointment online before visiting. Walk-in visits are not "
    "accepted. Blood tests take 2 to 4 days to process. Results are sent by post if the "
    "patient has no account."
)
PARKING = (
    "Residents park for free with a permit. Visitors pay 3 euros per hour for a maximum of "
    "4 hours. Vans without a permit are towed."
)
BLOCKS = (LIBRARY, CLINIC, PARKING)


def judge(sentence: str, block: int) -> tuple[bool, str]:
    return verdict(BLOCKS, sentence, block)


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Members can borrow at least 8 books at a time.", 1),  # at most -> at least
        ("Loans last more than 21 days and can be renewed twice.", 1),
        ("Overdue books are charged 20 cents per day before the due date.", 1),
        ("Members must borrow at most 8 books at a time.", 1),  # can -> must
        ("Patients can book an appointment online before visiting.", 2),  # must -> can
        ("Residents park for free with a permit, and visitors park for free too.", 3),
        ("Loans last up to 21 days and can be renewed twice instantly.", 1),
        ("Visitors pay 3 euros per hour for unlimited hours.", 3),
        ("Vans with a permit are towed.", 3),  # without -> with
        ("Blood tests take 2 days to process.", 2),  # one end of "2 to 4 days"
        ("Results are sent by post.", 2),  # the "if" dropped
        ("It is not true that walk-in visits are not accepted.", 2),  # double negation
        ("It is not the case that members can borrow at most 8 books at a time.", 1),
        ("Loans last up to twenty-five days and can be renewed twice.", 1),  # a number in words
        ("Loans last up to twenty days and can be renewed twice.", 1),  # the 20 of "20 cents"
        ("Visitors pay more than residents per hour.", 3),  # a comparison no span makes
        ("Visitors pay twice as much per hour as residents.", 3),
        ("Residents are refused parking for free with a permit.", 3),  # a denying verb
    ],
)
def test_an_edit_of_what_the_block_binds_fails(sentence: str, block: int) -> None:
    ok, detail = judge(sentence, block)
    assert not ok, detail


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Members can borrow at most 8 books at a time.", 1),
        ("Members can borrow up to 8 books at a time.", 1),  # another upper bound
        ("Loans last up to twenty-one days and can be renewed twice.", 1),
        ("Patients must book an appointment online before visiting.", 2),
        ("Patients have to book an appointment online before visiting.", 2),
        ("Blood tests take 2 to 4 days to process.", 2),
        ("Blood tests take between 2 and 4 days to process.", 2),
        ("If the patient has no account, results are sent by post.", 2),
        ("Residents park for free with a permit.", 3),
        ("Vans without a permit are towed.", 3),
        ("Visitors pay 3 euros per hour for a maximum of 4 hours.", 3),
        ("It is not true that walk-in visits are accepted.", 2),
    ],
)
def test_a_faithful_restatement_passes(sentence: str, block: int) -> None:
    ok, detail = judge(sentence, block)
    assert ok, detail


@pytest.mark.parametrize(
    "sentence",
    [
        "Walk-in visits are n**o**t accepted.",
        "Walk-in visits are no`t` accepted.",
    ],
)
def test_markup_inside_a_word_is_read_as_the_word_shown(sentence: str) -> None:
    shown = normalise_unit(sentence + " [2]").text
    assert "*" not in shown
    assert "`" not in shown
    assert check_sentence(shown, GateContext(BLOCKS)).ok


PASSES = (
    "The Silver pass costs 20 euros a month. It includes two guest visits and a locker. "
    "The Gold pass costs 35 euros a month. It adds sauna access and towel service."
)


@pytest.mark.parametrize(
    ("sentence", "ok"),
    [
        ("The Silver pass includes two guest visits and a locker.", True),
        ("The Gold pass adds sauna access and towel service.", True),
        ("The Gold pass includes two guest visits and a locker.", False),  # the Silver's
        ("Silver adds sauna access and towel service.", False),  # the Gold's
    ],
)
def test_what_it_says_is_said_of_what_it_names(sentence: str, ok: bool) -> None:
    """A statement opening with "It" is said of what the statement before names."""
    ctx = GateContext([PASSES])
    verdict = check_sentence(f"{sentence} [1]", ctx)
    assert verdict.ok is ok, verdict.detail


PARTED = (
    "## Should I rinse the filter?\nNo. Never rinse the filter: water clogs the fibres for good. "
    "Shaking it out over a bin removes the dust."
)


@pytest.mark.parametrize(
    ("sentence", "ok"),
    [
        # The negating part is held to the span's negating part, the rest to theirs.
        ("Never rinse the filter: water clogs the fibres for good. [1]", True),
        ("Never rinse the filter: water does not clog the fibres. [1]", False),
        ("Rinse the filter: water never clogs the fibres for good. [1]", False),
        ("Shaking it out over a bin does not remove the dust. [1]", False),
    ],
)
def test_a_clause_of_several_parts_is_negated_part_by_part(sentence: str, ok: bool) -> None:
    verdict = check_sentence(sentence, GateContext([PARTED]))
    assert verdict.ok is ok, verdict.detail


# -- a run of scope words, read once ------------------------------------------------------------


def _content_before(tokens: Sequence[str], i: int, step: int) -> str | None:
    """binding._content as it was: a search from `i` by `step` (quadratic over a run)."""
    j = i + step
    while 0 <= j < len(tokens):
        if tokens[j] not in binding._FILLER and tokens[j] not in binding._SCOPE:
            return tokens[j]
        j += step
    return None


@given(st.lists(st.sampled_from(["only", "free", "all", "the", "for", "of", "gb", "days", "x"])))
def test_the_nearest_word_is_the_one_a_search_from_each_place_found(tokens: list[str]) -> None:
    ahead, behind = binding._nearest(tokens, 1), binding._nearest(tokens, -1)
    for i in range(-2, len(tokens) + 2):
        assert binding._at(ahead, i + 1) == _content_before(tokens, i, 1)
        assert binding._at(behind, i - 1) == _content_before(tokens, i, -1)


class _Counted(Sequence[str]):
    """A clause's tokens that count how often they are read."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.reads = 0

    def __len__(self) -> int:
        return len(self.tokens)

    @overload
    def __getitem__(self, k: int) -> str: ...
    @overload
    def __getitem__(self, k: slice) -> list[str]: ...
    def __getitem__(self, k: int | slice) -> str | list[str]:
        self.reads += 1
        return self.tokens[k]


def test_a_run_of_scope_words_is_read_once() -> None:
    mine = _Counted(["refunds", "take"] + ["only"] * 2_000 + ["5", "days"])
    theirs = ["refunds", "take", "only", "5", "days"]
    assert binding._scope(mine, theirs, frozenset()) == ""
    assert mine.reads < 20 * len(mine)  # a search from each "only" read ~2M


GALLERY = (
    "Lockers are free. Photos are only permitted if no flash is used. Sketching is allowed in "
    "every room."
)


@pytest.mark.parametrize(
    ("sentence", "faithful"),
    [
        # "only" before the clause's last word states no condition: the span's "if ..." is cut
        ("Photos are only permitted.", False),
        ("Photos are only permitted if no flash is used.", True),
        ("Photos are permitted only if no flash is used.", True),
    ],
)
def test_only_before_the_last_word_leaves_the_condition_out(sentence: str, faithful: bool) -> None:
    ok, why = verdict((GALLERY,), sentence, 1)
    assert ok == faithful, why


# A condition whose words the claim writes too: the words only the condition writes tell
# whether a clause states it.
CONDITIONED = (
    "Parking permits\nIf you sell the car, you can transfer the permit within 30 days, using "
    "the online form with proof that the car was sold.",
    "Gym fees\nYou pay the membership in 12 monthly instalments, on the 1st of each month, "
    "unless you ask to pay the membership in one go.",
)


@pytest.mark.parametrize(
    ("sentence", "block", "ok"),
    [
        (
            "You can transfer the permit within 30 days, using the online form with proof that "
            "the car was sold.",
            1,
            False,
        ),
        ("You pay the membership in 12 monthly instalments, on the 1st of each month.", 2, False),
        ("If you sell the car, you can transfer the permit within 30 days.", 1, True),
        ("Once you sell the car, the permit can be transferred within 30 days.", 1, True),
        (
            "Unless you ask to pay the membership in one go, you pay it in 12 monthly instalments.",
            2,
            True,
        ),
    ],
)
def test_a_condition_sharing_the_claims_words_is_still_dropped(
    sentence: str, block: int, ok: bool
) -> None:
    assert verdict(CONDITIONED, sentence, block)[0] is ok, verdict(CONDITIONED, sentence, block)
