"""Refusal messages in the question's language: the team's wording per language (a JSON file,
`STREAM_RAG_REFUSAL_TEXTS`), else the built-in one, else the default language's.

A refusal is made in the default wording; `Wording.localise` rewrites its message for the
language the question is written in (`language/detect.py`) when that differs. The reason and
details never change, only the message. Keys: one per reason, `no_answer_in_sources` for a
`no_supported_sentences` refusal saying the sources do not answer, `nothing_close` for an
empty `{nearby}`. `not_answered` fills `{nearby}`; `conflicting_sources` is the lead sentence,
each side following as `“name”: “value” (“sentence”)`, then `older_document` naming the side
whose document was updated before the other's (`{name}`), when the dates tell.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import InvalidFieldError
from ..events import Refusal
from ..language.detect import LANGUAGES

__all__ = ["BUILT_IN", "KEYS", "Wording"]

KEYS = (
    "no_sources",
    "low_evidence",
    "not_answered",
    "nothing_close",
    "conflicting_sources",
    "older_document",
    "no_supported_sentences",
    "no_answer_in_sources",
    "unsupported_answer",
)
_FOR = " so I am not answering."
BUILT_IN: dict[str, dict[str, str]] = {
    "en": {
        "no_sources": "Nothing in the knowledge base matches this question.",
        "low_evidence": "The knowledge base does not seem to cover this question," + _FOR,
        "not_answered": "The knowledge base does not answer this question,"
        + _FOR
        + " It covers nearby: {nearby}.",
        "nothing_close": "nothing close",
        "older_document": "“{name}” is the older document.",
        "conflicting_sources": "The sources disagree on this, so I am not choosing between them.",
        "no_supported_sentences": "I could not give an answer that the sources support,"
        + _FOR
        + " Try rephrasing the question, or read the sources listed.",
        "no_answer_in_sources": "The sources do not answer this question,"
        + _FOR
        + " Read the sources listed, or ask about something they cover.",
        "unsupported_answer": "Two drafts of the answer failed verification against the sources,"
        + _FOR,
    },
    "de": {
        "no_sources": "Nichts in der Wissensdatenbank passt zu dieser Frage.",
        "low_evidence": "Die Wissensdatenbank scheint diese Frage nicht abzudecken, daher "
        "beantworte ich sie nicht.",
        "not_answered": "Die Wissensdatenbank beantwortet diese Frage nicht, daher beantworte "
        "ich sie nicht. Sie behandelt in der Nähe: {nearby}.",
        "nothing_close": "nichts Ähnliches",
        "older_document": "“{name}” ist das ältere Dokument.",
        "conflicting_sources": "Die Quellen widersprechen sich hierzu, daher wähle ich nicht "
        "zwischen ihnen.",
        "no_supported_sentences": "Ich konnte keine Antwort geben, die die Quellen stützen, "
        "daher antworte ich nicht. Formulieren Sie die Frage anders oder lesen Sie die "
        "aufgeführten Quellen.",
        "no_answer_in_sources": "Die Quellen beantworten diese Frage nicht, daher antworte ich "
        "nicht. Lesen Sie die aufgeführten Quellen oder fragen Sie nach etwas, das sie behandeln.",
        "unsupported_answer": "Zwei Entwürfe der Antwort haben die Prüfung an den Quellen nicht "
        "bestanden, daher antworte ich nicht.",
    },
    "fr": {
        "no_sources": "Rien dans la base de connaissances ne correspond à cette question.",
        "low_evidence": "La base de connaissances ne semble pas couvrir cette question, je n'y "
        "réponds donc pas.",
        "not_answered": "La base de connaissances ne répond pas à cette question, je n'y réponds "
        "donc pas. Elle traite de sujets proches : {nearby}.",
        "nothing_close": "rien d'approchant",
        "older_document": "“{name}” est le document le plus ancien.",
        "conflicting_sources": "Les sources se contredisent sur ce point, je ne choisis donc pas "
        "entre elles.",
        "no_supported_sentences": "Je n'ai pas pu donner de réponse appuyée par les sources, je "
        "ne réponds donc pas. Reformulez la question ou consultez les sources indiquées.",
        "no_answer_in_sources": "Les sources ne répondent pas à cette question, je ne réponds "
        "donc pas. Consultez les sources indiquées ou posez une question sur ce qu'elles traitent.",
        "unsupported_answer": "Deux versions de la réponse n'ont pas passé la vérification "
        "auprès des sources, je ne réponds donc pas.",
    },
    "es": {
        "no_sources": "Nada en la base de conocimiento corresponde a esta pregunta.",
        "low_evidence": "La base de conocimiento no parece cubrir esta pregunta, así que no la "
        "respondo.",
        "not_answered": "La base de conocimiento no responde a esta pregunta, así que no la "
        "respondo. Trata temas cercanos: {nearby}.",
        "nothing_close": "nada parecido",
        "older_document": "“{name}” es el documento más antiguo.",
        "conflicting_sources": "Las fuentes no coinciden en esto, así que no elijo entre ellas.",
        "no_supported_sentences": "No pude dar una respuesta respaldada por las fuentes, así que "
        "no respondo. Reformule la pregunta o lea las fuentes indicadas.",
        "no_answer_in_sources": "Las fuentes no responden a esta pregunta, así que no respondo. "
        "Lea las fuentes indicadas o pregunte por algo que traten.",
        "unsupported_answer": "Dos borradores de la respuesta no superaron la verificación con "
        "las fuentes, así que no respondo.",
    },
    "it": {
        "no_sources": "Nella base di conoscenza non c'è nulla che corrisponda a questa domanda.",
        "low_evidence": "La base di conoscenza non sembra trattare questa domanda, quindi non "
        "rispondo.",
        "not_answered": "La base di conoscenza non risponde a questa domanda, quindi non "
        "rispondo. Tratta argomenti vicini: {nearby}.",
        "nothing_close": "niente di simile",
        "older_document": "“{name}” è il documento più vecchio.",
        "conflicting_sources": "Le fonti non concordano su questo punto, quindi non scelgo tra "
        "loro.",
        "no_supported_sentences": "Non sono riuscito a dare una risposta sostenuta dalle fonti, "
        "quindi non rispondo. Riformuli la domanda o consulti le fonti indicate.",
        "no_answer_in_sources": "Le fonti non rispondono a questa domanda, quindi non rispondo. "
        "Consulti le fonti indicate o chieda di qualcosa che trattano.",
        "unsupported_answer": "Due bozze della risposta non hanno superato la verifica con le "
        "fonti, quindi non rispondo.",
    },
    "nl": {
        "no_sources": "Niets in de kennisbank past bij deze vraag.",
        "low_evidence": "De kennisbank lijkt deze vraag niet te behandelen, dus ik beantwoord "
        "haar niet.",
        "not_answered": "De kennisbank beantwoordt deze vraag niet, dus ik beantwoord haar "
        "niet. Ze behandelt wel verwante onderwerpen: {nearby}.",
        "nothing_close": "niets vergelijkbaars",
        "older_document": "“{name}” is het oudere document.",
        "conflicting_sources": "De bronnen spreken elkaar hierover tegen, dus ik kies niet "
        "tussen hen.",
        "no_supported_sentences": "Ik kon geen antwoord geven dat de bronnen ondersteunen, dus "
        "ik antwoord niet. Formuleer de vraag anders of lees de vermelde bronnen.",
        "no_answer_in_sources": "De bronnen beantwoorden deze vraag niet, dus ik antwoord niet. "
        "Lees de vermelde bronnen of vraag naar iets wat ze behandelen.",
        "unsupported_answer": "Twee versies van het antwoord doorstonden de controle aan de "
        "bronnen niet, dus ik antwoord niet.",
    },
    "pt": {
        "no_sources": "Nada na base de conhecimento corresponde a esta pergunta.",
        "low_evidence": "A base de conhecimento não parece abranger esta pergunta, por isso "
        "não respondo.",
        "not_answered": "A base de conhecimento não responde a esta pergunta, por isso não "
        "respondo. Trata de temas próximos: {nearby}.",
        "nothing_close": "nada parecido",
        "older_document": "“{name}” é o documento mais antigo.",
        "conflicting_sources": "As fontes não concordam sobre isto, por isso não escolho entre "
        "elas.",
        "no_supported_sentences": "Não consegui dar uma resposta apoiada pelas fontes, por isso "
        "não respondo. Reformule a pergunta ou consulte as fontes indicadas.",
        "no_answer_in_sources": "As fontes não respondem a esta pergunta, por isso não "
        "respondo. Consulte as fontes indicadas ou pergunte sobre algo que elas tratam.",
        "unsupported_answer": "Duas versões da resposta não passaram na verificação com as "
        "fontes, por isso não respondo.",
    },
}


@dataclass(frozen=True, slots=True)
class Wording:
    """Refusal texts by language and key, the team's over the built-in ones."""

    default: str = "en"
    texts: Mapping[str, Mapping[str, str]] = field(default_factory=lambda: BUILT_IN)

    @classmethod
    def build(
        cls, default: str = "en", path: Path | None = None, not_answered: str | None = None
    ) -> Wording:
        """The table for `default` (STREAM_RAG_LANGUAGE), the team's file (a JSON object of
        languages, each an object of keys and texts) and its default `not_answered` text. A
        bad file or language is an `InvalidFieldError` naming what is wrong."""
        if default not in LANGUAGES:
            raise InvalidFieldError(
                f"STREAM_RAG_LANGUAGE must be one of {', '.join(LANGUAGES)}, not {default!r}"
            )
        table = {lang: dict(keys) for lang, keys in BUILT_IN.items()}
        for lang, keys in (_read(path) if path is not None else {}).items():
            table.setdefault(lang, {}).update(keys)
        if not_answered:
            table.setdefault(default, {})["not_answered"] = not_answered
        return cls(default, table)

    def text(self, language: str | None, key: str) -> str | None:
        """The text for `key` in `language`, else in the default language."""
        own = self.texts.get(language or self.default, {}).get(key)
        return own if own is not None else self.texts.get(self.default, {}).get(key)

    def localise(self, refusal: Refusal, language: str | None) -> Refusal:
        """`refusal` with its message in `language` (None: the default), as far as there is
        wording for it; otherwise as it is."""
        key = refusal.reason
        if key == "no_supported_sentences" and any(
            d.get("cause") == "no_answer_in_sources" for d in refusal.details
        ):
            key = "no_answer_in_sources"
        text = self.text(language, key)
        if text is None:
            return refusal
        if key == "not_answered":
            nearby = [str(h) for d in refusal.details for h in d.get("nearby") or ()]
            close = "; ".join(nearby) or self.text(language, "nothing_close") or ""
            text = text.replace("{nearby}", close)
        elif key == "conflicting_sources":
            if text == BUILT_IN["en"][key]:
                return refusal  # made so, each side's sentence said in English words
            text = " ".join([text, *_sides(refusal), *self._older(refusal, language)])
        return refusal if text == refusal.message else replace(refusal, message=text)

    def _older(self, refusal: Refusal, language: str | None) -> list[str]:
        """The sentence naming the first conflict's older side, if the dates tell one."""
        first = refusal.details[0] if refusal.details else {}
        side = first.get(str(first.get("stale"))) if first.get("stale") in ("a", "b") else None
        text = self.text(language, "older_document")
        if not isinstance(side, Mapping) or text is None:
            return []
        return [text.replace("{name}", str(side.get("name")))]


def _sides(refusal: Refusal) -> list[str]:
    """Each side of the first conflict, in no language's words: its name, values, sentence."""
    first = refusal.details[0] if refusal.details else {}
    out = []
    for side in (first.get("a"), first.get("b")):
        if isinstance(side, Mapping):
            values = " ".join(f"“{v}”" for v in side.get("values") or ())
            said = f": {values}" if values else ""
            when = f" ({side['dated']})" if side.get("dated") else ""
            out.append(
                f"“{side.get('name')}”{when}{said} "
                f"(“{' '.join(str(side.get('sentence')).split())}”)"
            )
    return out


def _read(path: Path) -> dict[str, dict[str, str]]:
    name = f"STREAM_RAG_REFUSAL_TEXTS {path}"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidFieldError(f"{name}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise InvalidFieldError(f"{name}: not JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise InvalidFieldError(f"{name}: expected an object of languages")
    out: dict[str, dict[str, str]] = {}
    for lang, keys in raw.items():
        if lang not in LANGUAGES:
            raise InvalidFieldError(
                f"{name}: {lang!r} is not a language questions are read in ({', '.join(LANGUAGES)})"
            )
        if not isinstance(keys, dict):
            raise InvalidFieldError(f"{name}: {lang}: expected an object of texts")
        for key, text in keys.items():
            if key not in KEYS:
                raise InvalidFieldError(f"{name}: {lang}: unknown key {key!r} ({', '.join(KEYS)})")
            if not isinstance(text, str) or not text.strip():
                raise InvalidFieldError(f"{name}: {lang}.{key}: expected a non-empty string")
        out[lang] = dict(keys)
    return out
