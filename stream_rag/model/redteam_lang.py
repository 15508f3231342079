"""The red team's edits in French, German and Spanish: a block written in one of them, edited
with the same closed-class moves as in English (a negation added or dropped, a modal, a
frequency or quantity word, before/after, a paired adjective such as free/paid or
monthly/annual swapped, a bound or an "only" the sentence did not write put before its number
or its verb: "au moins 12 €", "bis zu 28 Tage", "kann nur"). Controls: the sentence behind a
connective that adds nothing ("En outre, ...", "Außerdem gilt: ...", "Además, ...").
"""

from __future__ import annotations

import re

from ..language.detect import detect_language
from .redteam import Option, Scene, case_as

__all__ = ["LANG", "foreign"]


def _pairs(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in text.split("|"):
        a, b = (w.replace("_", " ") for w in pair.split())
        out.setdefault(a, b)
        out.setdefault(b, a)
    return out


# Per language: (modal swaps, frequency/quantity swaps, order swaps, paired adjectives).
_TABLES = {
    "fr": (
        _pairs("peut doit|peuvent doivent|pouvez devez|possible obligatoire"),
        _pairs("toujours parfois|jamais parfois|tous certains|toutes certaines|chaque certains"),
        _pairs("avant après|au_moins au_plus|plus moins|premier dernier|première dernière"),
        _pairs(
            "gratuit payant|gratuite payante|gratuits payants|mensuel annuel|mensuelle annuelle"
            "|ouvert fermé|ouverte fermée|inclus exclu|incluse exclue|disponible indisponible"
            "|remboursable non-remboursable|en_ligne sur_place"
        ),
    ),
    "de": (
        _pairs("kann muss|können müssen|darf muss|dürfen müssen|möglich erforderlich"),
        _pairs("immer manchmal|nie manchmal|alle einige|jeder mancher|jede manche"),
        _pairs("vor nach|vorher nachher|mindestens höchstens|mehr weniger|ersten letzten"),
        _pairs(
            "kostenlos kostenpflichtig|monatlich jährlich|monatliche jährliche"
            "|monatlichen jährlichen|geöffnet geschlossen|inklusive exklusive"
            "|verfügbar nicht_verfügbar|erstattungsfähig nicht_erstattungsfähig"
        ),
    ),
    "es": (
        _pairs("puede debe|pueden deben|puedes debes|posible obligatorio"),
        _pairs("siempre a_veces|nunca a_veces|todos algunos|todas algunas|cada algún"),
        _pairs("antes después|al_menos como_máximo|más menos|primer último|primera última"),
        _pairs(
            "gratuito de_pago|gratuita de_pago|gratis de_pago|mensual anual|abierto cerrado"
            "|abierta cerrada|incluido excluido|incluida excluida|disponible no_disponible"
            "|reembolsable no_reembolsable"
        ),
    ),
}
_VARIANTS = ("modal", "quantity", "order", "adjective")
# Where a negation goes: after the finite verb (German), around it (French), before it (Spanish).
_FINITE = {
    "fr": r"\b(est|sont|peut|peuvent|doit|doivent|a|ont|offre|offrent|inclut|incluent)\b",
    "de": r"\b(ist|sind|kann|können|muss|müssen|wird|werden|hat|haben|gilt|gelten)\b",
    "es": r"\b(es|son|puede|pueden|debe|deben|tiene|tienen|incluye|incluyen|ofrece)\b",
}
_NEGATED = {
    "fr": re.compile(r"\b(?:ne |n['’])(\w+) (?:pas|jamais|plus)\b"),
    "de": re.compile(r" nicht\b"),
    "es": re.compile(r"\bno (?=\w)"),
}
# A bound put before a number, an "only" on the finite verb (after it; Spanish before it).
_BOUNDS = {
    "fr": ("au moins", "jusqu'à"),
    "de": ("mindestens", "bis zu"),
    "es": ("al menos", "hasta"),
}
_ONLY = {"fr": "{} seulement", "de": "{} nur", "es": "solo {}"}
_AMOUNT = re.compile(
    r"(?<![\w,.:-])\d+(?:[.,]\d+)?(?!\s*(?:h\b|uhr\b|heures?\b|horas?\b|:|[.,]?\d))"
)
_ALREADY = re.compile(
    r"\b(?:au moins|jusqu|mindestens|höchstens|bis zu|nur|al menos|hasta|solo|sólo"
    r"|seulement|uniquement|maximum|minimum|máximo|mínimo)\b",
    re.I,
)
_CONTROL = {"fr": "En outre, {}", "de": "Außerdem gilt: {}", "es": "Además, {}"}
_ELIDE = re.compile(r"^[aeiouéèêhâîôû]", re.I)


def _negate(lang: str, s: str) -> list[Option]:
    out = []
    negated = _NEGATED[lang].search(s)
    if negated is not None:
        if lang == "fr":
            dropped = s[: negated.start()] + negated.group(1) + s[negated.end() :]
        else:
            dropped = s[: negated.start()] + s[negated.end() :]
        out.append(Option("drop_negation", dropped, True))
        return out
    verb = re.search(_FINITE[lang], s)
    if verb is None:
        return out
    word = verb.group()
    if lang == "fr":
        ne = "n'" if _ELIDE.match(word) else "ne "
        new = f"{ne}{word} pas"
    elif lang == "de":
        new = f"{word} nicht"
    else:
        new = f"no {word}"
    out.append(Option("add_negation", s[: verb.start()] + new + s[verb.end() :], True))
    kein = re.search(r"\b(ein|eine|einen)\b", s) if lang == "de" else None
    if kein is not None:
        out.append(Option("kein", s[: kein.start()] + "k" + kein.group() + s[kein.end() :], True))
    return out


def foreign(scene: Scene) -> list[Option]:
    """The closed-class edits of English in the sentence's own language (French, German,
    Spanish); nothing for a sentence in another."""
    s = scene.sentence
    lang = detect_language(s)
    if lang not in _TABLES:
        return []
    out = _negate(lang, s)
    for variant, table in zip(_VARIANTS, _TABLES[lang], strict=True):
        pattern = re.compile(
            r"(?<![\w-])("
            + "|".join(sorted(map(re.escape, table), key=len, reverse=True))
            + r")(?![\w-])",
            re.I,
        )
        for match in pattern.finditer(s):
            new = table[match.group().lower()]
            out.append(
                Option(
                    variant,
                    s[: match.start()] + case_as(match.group(), new) + s[match.end() :],
                    True,
                )
            )
    if not _ALREADY.search(s):
        amount = _AMOUNT.search(s)
        if amount is not None:
            head, tail = s[: amount.start()], s[amount.start() :]
            out.extend(
                Option("qualifier", f"{head}{bound} {tail}", True) for bound in _BOUNDS[lang]
            )
        verb = re.search(_FINITE[lang], s)
        if verb is not None and _NEGATED[lang].search(s) is None:  # "no solo": not only
            only = _ONLY[lang].format(verb.group())
            out.append(Option("qualifier", s[: verb.start()] + only + s[verb.end() :], True))
    if s[:1].isupper() and out:
        first = s[0].lower() + s[1:] if lang != "de" else s
        out.append(Option("control_connective", _CONTROL[lang].format(first), False))
    return out


LANG = {"foreign": foreign}
