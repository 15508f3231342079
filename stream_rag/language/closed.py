"""Closed classes of French, German and Spanish that bind a claim: negation, modals (may/must),
quantity (all/some), order (before/after, first/last, at least/at most), calendar names and
time units, and a few paired adjectives of help-centre text (free/paid, open/closed).

Hand-written function words and their inflections, not any knowledge base's: the English
tables (opposites.py, the thesaurus) do not read these languages. Each class's members never
stand for each other; a word of one member in the place of another's says something else.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["CLASSES", "NEGATIONS", "members", "negations", "qualifiers", "tokens"]

NEGATIONS: dict[str, frozenset[str]] = {
    "fr": frozenset("ne n sans aucun aucune jamais".split()),
    "de": frozenset(
        "nicht kein keine keinen keinem keiner keines nie niemals ohne keinesfalls".split()
    ),
    "es": frozenset("no nunca jamás ningún ninguna ninguno sin tampoco".split()),
}


def _class(*members: str) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(m.split()) for m in members)


_WEEKDAYS = {
    "fr": "lundi mardi mercredi jeudi vendredi samedi dimanche",
    "de": "montag dienstag mittwoch donnerstag freitag samstag sonntag",
    "es": "lunes martes miércoles jueves viernes sábado domingo",
}
_MONTHS = {
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "de": "januar februar märz april mai juni juli august september oktober november dezember",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre "
    "diciembre",
}

# Per language, classes of members; a member is a set of word forms.
CLASSES: dict[str, tuple[tuple[frozenset[str], ...], ...]] = {
    "fr": (
        _class(
            "peut peuvent pouvez pouvons peux pourra pourront possible facultatif facultative",
            "doit doivent devez devons dois devra devront obligatoire obligatoires faut",
        ),
        _class(
            "toujours tous toutes chaque chacun chacune",
            "parfois certains certaines quelques souvent rarement",
        ),
        _class("avant", "après"),
        _class("premier première premiers premières", "dernier dernière derniers dernières"),
        _class("minimum", "maximum"),
        _class("moins", "plus"),
        _class(
            "jour jours quotidien quotidienne",
            "nuit nuits",
            "semaine semaines hebdomadaire",
            "mois mensuel mensuelle mensuels mensuelles",
            "an ans année années annuel annuelle annuels annuelles",
        ),
        _class("heure heures", "minute minutes"),
        _class("gratuit gratuite gratuits gratuites", "payant payante payants payantes"),
        _class("ouvert ouverte ouverts ouvertes", "fermé fermée fermés fermées"),
        _class("inclus incluse incluses", "exclu exclue exclus exclues"),
        _class("disponible disponibles", "indisponible indisponibles"),
        _class(
            "autorisé autorisée autorisés autorisées", "interdit interdite interdits interdites"
        ),
        _class("remboursable remboursables", "non-remboursable non-remboursables"),
    ),
    "de": (
        _class(
            "kann können kannst könnt darf dürfen darfst dürft möglich optional freiwillig",
            "muss müssen musst müsst soll sollen erforderlich verpflichtend pflicht",
        ),
        _class("immer alle jeder jede jedes jeden jedem", "manchmal einige manche oft selten"),
        _class("vor vorher bevor", "nach nachher danach"),
        _class("mindestens", "höchstens"),
        _class("weniger", "mehr"),
        _class("unter", "über"),
        _class("erste ersten erster erstes", "letzte letzten letzter letztes"),
        _class(
            "tag tage tagen täglich tägliche",
            "nacht nächte nächten",
            "woche wochen wöchentlich wöchentliche",
            "monat monate monaten monatlich monatliche monatlichen",
            "jahr jahre jahren jährlich jährliche jährlichen",
        ),
        _class("stunde stunden", "minute minuten"),
        _class("kostenlos kostenlose kostenlosen gratis", "kostenpflichtig kostenpflichtige"),
        _class("geöffnet offen", "geschlossen"),
        _class("inklusive enthalten", "exklusive"),
        _class("verfügbar verfügbare", "unverfügbar"),
        _class("erlaubt erlaubte", "verboten verbotene"),
    ),
    "es": (
        _class(
            "puede pueden puedes podemos podrá podrán posible opcional opcionales",
            "debe deben debes debemos deberá deberán obligatorio obligatoria obligatorios",
        ),
        _class("siempre todos todas cada", "veces algunos algunas frecuentemente raramente"),
        _class("antes", "después"),
        _class("primer primera primero primeros primeras", "último última últimos últimas"),
        _class("mínimo mínima", "máximo máxima"),
        _class("menos", "más"),
        _class("menor menores", "mayor mayores"),
        _class(
            "día días diario diaria",
            "noche noches",
            "semana semanas semanal semanales",
            "mes meses mensual mensuales",
            "año años anual anuales",
        ),
        _class("hora horas", "minuto minutos"),
        _class("gratuito gratuita gratuitos gratuitas gratis", "pago"),
        _class("abierto abierta abiertos abiertas", "cerrado cerrada cerrados cerradas"),
        _class("incluido incluida incluidos incluidas", "excluido excluida excluidos excluidas"),
        _class("disponible disponibles", "indisponible indisponibles"),
        _class("permitido permitida permitidos permitidas", "prohibido prohibida prohibidos"),
        _class("reembolsable reembolsables", "no-reembolsable"),
    ),
}
# A weekday's plural ("les lundis", "los sábados") and German's adverb ("montags").
_DAY_FORMS = {"fr": ("", "s"), "de": ("", "s"), "es": ("", "s")}
for _lang in CLASSES:
    CLASSES[_lang] += (
        tuple(
            frozenset(d + end for end in _DAY_FORMS[_lang] if not d.endswith("s") or not end)
            for d in _WEEKDAYS[_lang].split()
        ),
        tuple(frozenset([m]) for m in _MONTHS[_lang].split()),
    )

_TOKEN = re.compile(r"[^\W_]+(?:-[^\W_]+)*")


def tokens(text: str) -> list[str]:
    """Lowercased words and numbers, split at apostrophes ("n'est" -> "n", "est"); hyphens
    kept."""
    return _TOKEN.findall(text.casefold())


# French "ne ... que" restricts ("ne sont admis que le soir": only in the evening), it does not
# negate; "ne" negates with one of these after it.
_FR_PARTNERS = frozenset(
    "pas plus jamais rien personne aucun aucune guère point nul nulle ni".split()
)


def negations(lang: str, words: list[str]) -> int:
    """How many negating words `words` hold (a French "ne ... que" none)."""
    count = sum(w in NEGATIONS[lang] for w in words)
    if lang == "fr" and {"que", "qu"} & set(words) and not _FR_PARTNERS & set(words):
        count -= sum(w in ("ne", "n") for w in words)
    return count


@lru_cache(maxsize=8)
def members(lang: str) -> dict[str, tuple[int, int]]:
    """Each word form of `lang`'s classes -> (class, member)."""
    out: dict[str, tuple[int, int]] = {}
    for c, group in enumerate(CLASSES[lang]):
        for m, forms in enumerate(group):
            for form in forms:
                out.setdefault(form, (c, m))
    return out


# Words that bound or restrict a claim, per language: at least, at most or up to, only. A
# clause writing one of a sense its statement does not write narrows or widens what it says
# ("kostet mindestens 20 Euro" of "kostet 20 Euro"). Phrases as tokens ("jusqu'à": "jusqu à").
_QUALIFIERS = {
    "fr": (
        "au moins|au minimum|pas moins de|minimum",
        "au plus|au maximum|pas plus de|maximum|jusqu à",
        "seulement|uniquement|exclusivement",
    ),
    "de": (
        "mindestens|wenigstens|minimal|minimum",
        "höchstens|maximal|maximum|bis zu",
        "nur|ausschließlich|lediglich|bloß",
    ),
    "es": (
        "al menos|por lo menos|como mínimo|mínimo",
        "como máximo|a lo sumo|máximo|hasta",
        "solo|sólo|solamente|únicamente|exclusivamente",
    ),
}
_PHRASES = {
    lang: tuple((sense, tuple(p.split())) for sense, g in enumerate(groups) for p in g.split("|"))
    for lang, groups in _QUALIFIERS.items()
}
# "jusqu'à 18 h", "hasta las 22 horas": until a time, not a bound on an amount; "nicht nur".
_UNTIL = frozenset("jusqu à hasta".split())
_TIME_AFTER = frozenset("h uhr heures horas la las el l minuit midi medianoche".split())
_NOT_ONLY = frozenset("nicht non no".split())


def qualifiers(lang: str, words: list[str]) -> list[tuple[int, str]]:
    """The bounding or restricting phrases of `words` (`tokens`), each with its sense (0 at
    least, 1 at most or up to, 2 only)."""
    out = []
    for i in range(len(words)):
        for sense, phrase in _PHRASES.get(lang, ()):
            end = i + len(phrase)
            if tuple(words[i:end]) != phrase:
                continue
            if i and words[i - 1] in _NOT_ONLY and sense == 2:
                continue
            if phrase[-1] in _UNTIL:
                after = words[end : end + 2]
                if not after or not after[0].isdigit() or _TIME_AFTER & set(after):
                    continue
            out.append((sense, " ".join(phrase)))
            break
    return out
