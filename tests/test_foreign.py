"""gate/foreign.py: French, German and Spanish sentences held to the statement they restate: a
negation added or dropped, or a closed-class word (modal, quantity, order, time unit, weekday,
paired adjective) in the place of another of its class, is refused; quotes and faithful
restatements pass (issue 27, the red team's fifth round)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_rag.gate.foreign import foreign_mismatch
from stream_rag.model.passages import block_sentences
from stream_rag.model.redteam import Scene, options_for
from stream_rag.model.redteam_lang import foreign

from .gating import verdict

# Blocks of another domain than loadtests/answers/polyglot_kb, written for these tests.
BLOCKS = [
    "La piscine est ouverte du lundi au vendredi. Les enfants doivent porter un bonnet. "
    "L'entrée est gratuite pour les moins de 6 ans. Les casiers sont toujours disponibles.",
    "Die Werkstatt ist samstags geschlossen. Reparaturen können online gebucht werden. "
    "Die Garantie gilt zwei Jahre. Ersatzteile werden nicht erstattet.",
    "El museo abre todos los días a las 10 horas. Los grupos deben reservar con antelación. "
    "La entrada es gratuita los domingos. No se permiten fotos con flash.",
]


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("La piscine n'est pas ouverte du lundi au vendredi.", 1),  # negation added
        ("La piscine est ouverte du mardi au vendredi.", 1),  # weekday
        ("Les enfants peuvent porter un bonnet.", 1),  # must -> may
        ("L'entrée est payante pour les moins de 6 ans.", 1),  # free -> paid
        ("Les casiers sont parfois disponibles.", 1),  # always -> sometimes
        ("Die Werkstatt ist samstags geöffnet.", 2),  # closed -> open
        ("Reparaturen müssen online gebucht werden.", 2),  # can -> must
        ("Die Garantie gilt zwei Monate.", 2),  # years -> months
        ("Ersatzteile werden erstattet.", 2),  # negation dropped
        ("Reparaturen können nicht online gebucht werden.", 2),
        ("El museo abre algunos días a las 10 horas.", 3),  # all -> some
        ("Los grupos pueden reservar con antelación.", 3),  # must -> may
        ("La entrada es gratuita los sábados.", 3),  # weekday
        ("Se permiten fotos con flash.", 3),  # negation dropped
    ],
)
def test_a_closed_class_edit_is_refused(sentence: str, block: int) -> None:
    ok, why = verdict(BLOCKS, sentence, block)
    assert not ok, why


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("La piscine est ouverte du lundi au vendredi.", 1),
        ("En outre, les enfants doivent porter un bonnet.", 1),
        ("Die Garantie gilt zwei Jahre.", 2),
        ("Ersatzteile werden nicht erstattet.", 2),
        ("Además, la entrada es gratuita los domingos.", 3),
        ("No se permiten fotos con flash.", 3),
    ],
)
def test_quotes_and_restatements_pass(sentence: str, block: int) -> None:
    # The lexical stage alone: a connective it does not find leaves the sentence grey (the
    # semantic stage decides it on the routes), never refused as another claim.
    ok, why = verdict(BLOCKS, sentence, block)
    assert ok or why.startswith("overlap"), why
    assert foreign_mismatch(sentence, [BLOCKS[block - 1]]) == ""


def test_english_is_left_to_the_english_checks() -> None:
    assert foreign_mismatch("No refunds are given after 30 days.", ["Refunds are given."]) == ""


POLYGLOT = Path(__file__).parents[1] / "loadtests" / "answers" / "polyglot_kb"
KB = [p.read_text() for p in sorted(POLYGLOT.iterdir())] + BLOCKS
PAIRS = [(n, s) for n, text in enumerate(KB, start=1) for s in block_sentences(text)]


@given(pair=st.sampled_from(PAIRS), seed=st.integers(0, 2**16))
def test_the_knobs_false_edits_are_refused_and_its_controls_pass(
    pair: tuple[int, str], seed: int
) -> None:
    n, sentence = pair
    issued = dict(enumerate(KB, start=1))
    scene = Scene(n, sentence, block_sentences(KB[n - 1]), issued, random.Random(seed))
    for option in options_for(foreign, scene):
        ok, why = verdict(KB, option.text, n)
        if option.false:
            assert not ok, (option, why)
        else:
            assert ok or why.startswith("overlap"), (option, why)
            assert foreign_mismatch(option.text, [KB[n - 1]]) == "", option


@pytest.mark.parametrize(
    ("block", "sentence"),
    [
        # "ne ... que" restricts (only), it does not negate
        (
            "Les chiens ne sont pas admis au restaurant.",
            "Les chiens ne sont admis qu'au restaurant.",
        ),
        (
            "Les chiens ne sont admis qu'au restaurant.",
            "Les chiens ne sont pas admis au restaurant.",
        ),
    ],
)
def test_french_ne_que_is_not_a_negation(block: str, sentence: str) -> None:
    assert foreign_mismatch(sentence, [block]) != ""
    assert foreign_mismatch(block, [block]) == ""


@pytest.mark.parametrize(
    ("block", "sentence"),
    [
        ("Le parking coûte 12 euros par nuit.", "Le parking coûte 12 euros par semaine."),
        ("Das Parken kostet 12 Euro pro Nacht.", "Das Parken kostet 12 Euro pro Tag."),
        (
            "El aparcamiento cuesta 12 euros por noche.",
            "El aparcamiento cuesta 12 euros por semana.",
        ),
    ],
)
def test_a_night_is_a_period_of_its_own(block: str, sentence: str) -> None:
    assert foreign_mismatch(sentence, [block]) != ""
    assert foreign_mismatch(block, [block]) == ""


@pytest.mark.parametrize(
    ("block", "sentence"),
    [
        (
            "Kinder unter 6 Jahren haben freien Eintritt.",
            "Kinder über 6 Jahren haben freien Eintritt.",
        ),
        (
            "Los niños menores de 6 años entran gratis.",
            "Los niños mayores de 6 años entran gratis.",
        ),
    ],
)
def test_an_age_limit_turned_round_is_refused(block: str, sentence: str) -> None:
    assert foreign_mismatch(sentence, [block]) != ""
    assert foreign_mismatch(block, [block]) == ""


# A bakery, a swimming club and a bus company: a bound or an "only" no statement writes.
QUALIFIED = [
    "Le pain complet coûte 3 €. La boulangerie est ouverte de 7 h à 19 h. "
    "Les commandes sont livrées au moins 2 jours plus tard.",
    "Ein Kurs dauert 10 Wochen. Kinder dürfen nur mit Begleitung schwimmen. "
    "Das Bad ist von 8 bis 20 Uhr geöffnet.",
    "El billete sencillo cuesta 2 €. Los niños viajan gratis hasta los 6 años. "
    "La oficina abre de 9 a 14 horas.",
]


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Le pain complet coûte au moins 3 €.", 1),
        ("Le pain complet coûte jusqu'à 3 €.", 1),
        ("Le pain complet coûte seulement 3 €.", 1),
        ("Ein Kurs dauert mindestens 10 Wochen.", 2),
        ("Ein Kurs dauert höchstens 10 Wochen.", 2),
        ("Ein Kurs dauert bis zu 10 Wochen.", 2),
        ("Ein Kurs dauert nur 10 Wochen.", 2),
        ("El billete sencillo cuesta al menos 2 €.", 3),
        ("El billete sencillo cuesta hasta 2 €.", 3),
        ("El billete sencillo cuesta solo 2 €.", 3),
    ],
)
def test_a_bound_or_an_only_the_statement_does_not_write_is_refused(
    sentence: str, block: int
) -> None:
    ok, why = verdict(QUALIFIED, sentence, block)
    assert not ok, why
    assert foreign_mismatch(sentence, [QUALIFIED[block - 1]]), why


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Le pain complet coûte 3 €.", 1),
        ("Les commandes sont livrées au minimum 2 jours plus tard.", 1),  # same sense
        ("La boulangerie est ouverte jusqu'à 19 h.", 1),  # until a time
        ("Kinder dürfen ausschließlich mit Begleitung schwimmen.", 2),
        ("Das Bad ist bis 20 Uhr geöffnet.", 2),
        ("Los niños viajan gratis hasta los 6 años.", 3),
        ("La oficina abre hasta las 14 horas.", 3),
    ],
)
def test_a_bound_the_statement_writes_or_a_time_passes(sentence: str, block: int) -> None:
    assert foreign_mismatch(sentence, [QUALIFIED[block - 1]]) == ""
