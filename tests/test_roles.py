"""Who does what to whom, of how many, how surely (gate/roles.py): subject and object traded
around their verb, "some"/"most" of what the span says of all, "will" of what it says "can";
on blocks of other domains than the fixtures, each edit failing and a faithful restatement
(a passive, a fronted phrase, the span's own quantifier and modal) passing."""

from __future__ import annotations

import pytest

from .gating import verdict

CLINIC = (
    "Registered patients receive a reminder text two days before each appointment. "
    "The duty nurse phones every patient after surgery. All prescriptions are checked by a "
    "pharmacist. Some vaccines can be booked online. Patients can cancel an appointment up "
    "to 24 hours before it starts. The clinic will close at 4 pm on public holidays. "
    "Blood tests are done before 10 am. After that the lab closes. It offers free flu jabs. "
    "Seniors get 30% off dental check-ups."
)
BLOCKS = (CLINIC,)


def judge(sentence: str) -> tuple[bool, str]:
    return verdict(BLOCKS, sentence, 1)


@pytest.mark.parametrize(
    "sentence",
    [
        "A reminder text receives registered patients two days before each appointment.",
        "Every patient phones the duty nurse after surgery.",
        "Some prescriptions are checked by a pharmacist.",
        "Most prescriptions are checked by a pharmacist.",
        "Patients will cancel an appointment up to 24 hours before it starts.",
        "Free flu jabs offer it.",  # a pronoun subject traded
        "After that blood tests are done before 10 am.",  # a time another statement sets
        "Seniors get 30 off dental check-ups.",  # the span's share written bare
    ],
)
def test_roles_traded_fewer_or_surer_fails(sentence: str) -> None:
    ok, why = judge(sentence)
    assert not ok, why


@pytest.mark.parametrize(
    "sentence",
    [
        "Registered patients receive a reminder text two days before each appointment.",
        "Every patient is phoned by the duty nurse after surgery.",  # a passive
        "After surgery, the duty nurse phones every patient.",  # a phrase fronted
        "Some vaccines can be booked online.",  # the span's own "some"
        "The clinic will close at 4 pm on public holidays.",  # the span's own "will"
        "After that the lab closes.",  # the span's own "After that"
        "Seniors get 30 percent off dental check-ups.",
    ],
)
def test_a_faithful_restatement_passes(sentence: str) -> None:
    ok, why = judge(sentence)
    assert ok, why


FORM = "Write the names of all passengers and the number of each bag on the form."


@pytest.mark.parametrize(
    ("sentence", "shown"),
    [
        ("Write the names of most passengers and the number of each bag on the form.", False),
        ("Write the names of some passengers on the form.", False),
        ("Write the names of all the passengers on the form.", True),
        ("Write the names of all passengers on the form.", True),
    ],
)
def test_part_of_all_after_of(sentence: str, shown: bool) -> None:
    """ "of most passengers" where the span says "of all passengers": the part's "of" before
    the quantifier does not make it a part named ("some of the ...")."""
    ok, why = verdict((FORM,), sentence, 1)
    assert ok == shown, why


GYM = (
    "Lockers are free. You get a key at the desk by showing your card. We send a receipt by "
    "email after each visit."
)


@pytest.mark.parametrize(
    ("sentence", "faithful"),
    [
        # the subject pronoun written after the span's verb: its object made the subject
        ("A receipt send we by email after each visit.", False),
        ("A key get you at the desk by showing your card.", False),
        ("We send a receipt by email after each visit.", True),
        ("At the desk you get a key by showing your card.", True),
    ],
)
def test_a_subject_pronoun_after_its_verb_fails(sentence: str, faithful: bool) -> None:
    ok, why = verdict((GYM,), sentence, 1)
    assert ok == faithful, why
