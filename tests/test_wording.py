"""Refusals in the question's language: the language read from the question's own words, the
team's wording per language over the built-in one, the default language otherwise."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from stream_rag.answer import answerable, pipeline, prechecks, refusals
from stream_rag.answer.results import AnswerResult, Options
from stream_rag.answer.wording import BUILT_IN, KEYS, Wording
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.errors import InvalidFieldError
from stream_rag.events import Refusal
from stream_rag.http.chatview import refusal_text
from stream_rag.index.folders import ingest_paths
from stream_rag.language.detect import LANGUAGES, detect_language
from stream_rag.language.question import read_question
from stream_rag.services import open_services

ROOT = Path(__file__).resolve().parent.parent

# Written after the detector's word lists were set, none of them used to set them.
ASKED = {
    "de": [
        "Wie viel kostet ein Ersatzakku für den Rasenmäher?",
        "Ich habe mein Passwort vergessen, was soll ich tun?",
        "Bis wann kann ich meine Bestellung noch ändern?",
        "Liefert ihr auch in die Schweiz?",
        "Muss ich für die Rücksendung bezahlen?",
    ],
    "fr": [
        "Est-ce que je peux payer en plusieurs fois ?",
        "Mon colis est arrivé abîmé, que dois-je faire ?",
        "Combien de temps dure la garantie sur les tondeuses ?",
        "Où se trouve votre magasin le plus proche ?",
        "Livrez-vous aussi le samedi ?",
    ],
    "es": [
        "¿Se puede pagar a plazos?",
        "Mi paquete llegó dañado, ¿qué tengo que hacer?",
        "¿Cuánto dura la garantía de los cortacéspedes?",
        "¿Hacen envíos a las islas?",
        "¿Tengo que pagar la devolución?",
    ],
    "nl": [
        "Hoe lang duurt de levering naar België?",
        "Mijn pakket is beschadigd aangekomen, wat moet ik doen?",
    ],
    "it": ["Quanto dura la garanzia sui tosaerba?", "Come posso cambiare la mia password?"],
    "pt": ["Quanto tempo demora a entrega?", "Como posso mudar a minha senha?"],
}


def test_a_questions_language_is_read_from_its_words() -> None:
    asked = [(lang, q) for lang, qs in ASKED.items() for q in qs]
    read = [(lang, q, detect_language(q)) for lang, q in asked]
    assert [r for r in read if r[2] not in (r[0], None)] == []  # never another language
    assert sum(r[2] == r[0] for r in read) >= 19  # of 21; unread ones keep the default
    assert all(read_question(q).language == got for _, q, got in read)


def test_no_english_dev_question_is_read_as_another_language() -> None:
    files = sorted((ROOT / "loadtests" / "answers").glob("*.jsonl"))
    questions = [
        json.loads(line)["question"]
        for path in files
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    questions += (ROOT / "loadtests" / "offtopic_questions.txt").read_text().splitlines()
    assert len(questions) > 400
    other = [(q, lang) for q in questions if (lang := detect_language(q)) not in ("en", None)]
    assert other == []


def test_too_few_clues_or_another_script_is_no_language() -> None:
    for text in ("Pricing?", "X500 firmware", "料金はいくらですか？", "Цена доставки?", ""):
        assert detect_language(text) is None


def test_the_english_wording_is_the_messages_made_before_it() -> None:
    en = BUILT_IN["en"]
    assert en["no_sources"] == prechecks.NO_SOURCES
    assert en["low_evidence"] == prechecks.LOW_EVIDENCE
    assert en["not_answered"] == answerable.NOT_ANSWERED
    assert en["conflicting_sources"] == refusals.CONFLICT_LEAD
    assert en["older_document"] == refusals.OLDER_DOCUMENT
    assert en["no_supported_sentences"] == pipeline.NOTHING_SUPPORTED
    assert en["no_answer_in_sources"] == refusals.NOT_ANSWERED
    assert en["unsupported_answer"] == pipeline.UNSUPPORTED_ANSWER
    for lang, texts in BUILT_IN.items():
        assert set(texts) == set(KEYS), lang
        assert "{nearby}" in texts["not_answered"], lang


def _conflict() -> Refusal:
    side = {"name": "refund-policy.md", "values": ["30 days"]}
    side["sentence"] = "Refunds within 30 days."
    other = {"name": "billing-faq.md", "values": ["14 days"]}
    other["sentence"] = "Refunds within 14 days."
    message = refusals.CONFLICT_LEAD + " “refund-policy.md” says “30 days”: “...”"
    return Refusal("conflicting_sources", message, [{"kind": "number", "a": side, "b": other}])


def test_each_reason_is_worded_in_the_questions_language(tmp_path: Path) -> None:
    wording = Wording.build()
    near = Refusal("not_answered", "x", [{"nearby": ["Preise", "Kurse"], "on_kind": False}])
    assert wording.localise(near, "de").message == (
        "Die Wissensdatenbank beantwortet diese Frage nicht, daher beantworte ich sie nicht. "
        "Sie behandelt in der Nähe: Preise; Kurse."
    )
    nothing = Refusal("not_answered", "x", [{"nearby": []}])
    assert wording.localise(nothing, "es").message.endswith("Trata temas cercanos: nada parecido.")
    said = Refusal("no_supported_sentences", "x", [{"cause": "no_answer_in_sources"}])
    assert wording.localise(said, "fr").message == BUILT_IN["fr"]["no_answer_in_sources"]
    conflict = wording.localise(_conflict(), "fr")
    assert conflict.message == (
        f"{BUILT_IN['fr']['conflicting_sources']} “refund-policy.md”: “30 days” "
        "(“Refunds within 30 days.”) “billing-faq.md”: “14 days” (“Refunds within 14 days.”)"
    )
    assert conflict.details == _conflict().details  # only the message changes
    # A chat key's shorter conflict message keeps the lead's language.
    assert refusal_text(conflict) == (
        f"{BUILT_IN['fr']['conflicting_sources']} “refund-policy.md”, “billing-faq.md”."
    )
    # The default language (and a language with no wording) leaves the message as made.
    assert wording.localise(_conflict(), "en") == _conflict()
    assert wording.localise(_conflict(), None) == _conflict()


def test_every_language_questions_are_read_in_has_built_in_wording() -> None:
    assert set(BUILT_IN) == set(LANGUAGES)
    wording = Wording.build()
    low = Refusal("low_evidence", prechecks.LOW_EVIDENCE, [{"evidence": 0.1}])
    messages = {lang: wording.localise(low, lang).message for lang in LANGUAGES}
    assert len(set(messages.values())) == len(LANGUAGES)  # none falls back to English
    near = Refusal("not_answered", "x", [{"nearby": []}])
    assert wording.localise(near, "it").message.endswith("vicini: niente di simile.")
    assert wording.localise(near, "nl").message.endswith("onderwerpen: niets vergelijkbaars.")
    assert wording.localise(near, "pt").message.endswith("próximos: nada parecido.")
    conflict = wording.localise(_conflict(), "pt")
    assert conflict.message.startswith(BUILT_IN["pt"]["conflicting_sources"] + " “refund-")


def test_a_localised_conflict_names_the_older_document() -> None:
    """The English message says which side is older; a localised one said nothing of it."""
    made = _conflict()
    dated = [made.details[0] | {"stale": "b"}]
    dated[0]["a"] = dated[0]["a"] | {"dated": "2026-03-01"}
    dated[0]["b"] = dated[0]["b"] | {"dated": "2025-01-15"}
    stale = Refusal(made.reason, made.message, dated)
    wording = Wording.build()
    assert wording.localise(stale, "de").message.endswith(
        "(“Refunds within 14 days.”) “billing-faq.md” ist das ältere Dokument."
    )
    for lang in LANGUAGES:
        if lang != "en":
            assert "billing-faq.md” (2025-01-15)" in wording.localise(stale, lang).message
            assert wording.localise(stale, lang).message.count("billing-faq.md") == 2, lang
    assert "older" not in wording.localise(made, "de").message  # undated: nothing to say
    assert wording.localise(made, "de").message.count("billing-faq.md") == 1


def test_the_teams_wording_wins_per_language_and_the_default_can_be_another(
    tmp_path: Path,
) -> None:
    path = tmp_path / "refusals.json"
    path.write_text(
        json.dumps(
            {
                "de": {"low_evidence": "Dazu haben wir leider nichts."},
                "nl": {"low_evidence": "Daar hebben we helaas niets over."},
            }
        ),
        encoding="utf-8",
    )
    wording = Wording.build("de", path, "Nicht in unserer Hilfe. Nah dran: {nearby}.")
    low = Refusal("low_evidence", prechecks.LOW_EVIDENCE, [{"evidence": 0.1}])
    assert wording.localise(low, "de").message == "Dazu haben wir leider nichts."
    assert wording.localise(low, "nl").message == "Daar hebben we helaas niets over."
    assert wording.localise(low, "en").message == prechecks.LOW_EVIDENCE
    # Not read: the default language's (German); a language the file leaves out: built in.
    assert wording.localise(low, None).message == "Dazu haben wir leider nichts."
    assert wording.localise(low, "it").message == BUILT_IN["it"]["low_evidence"]
    near = Refusal("not_answered", "x", [{"nearby": ["Kurse"]}])
    assert wording.localise(near, None).message == "Nicht in unserer Hilfe. Nah dran: Kurse."
    assert wording.localise(near, "en").message.startswith("The knowledge base does not answer")


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("{", "not JSON"),
        ("[]", "expected an object of languages"),
        ('{"xx": {}}', "'xx' is not a language"),
        ('{"de": "text"}', "de: expected an object of texts"),
        ('{"de": {"refused": "x"}}', "unknown key 'refused'"),
        ('{"de": {"low_evidence": " "}}', "de.low_evidence: expected a non-empty string"),
    ],
)
def test_a_bad_wording_file_is_refused_naming_what_is_wrong(
    tmp_path: Path, content: str, error: str
) -> None:
    path = tmp_path / "refusals.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InvalidFieldError, match=error):
        Wording.build("en", path)
    with pytest.raises(InvalidFieldError, match="cannot read"):
        Wording.build("en", tmp_path / "missing.json")
    with pytest.raises(InvalidFieldError, match="STREAM_RAG_LANGUAGE"):
        Wording.build("english")


def test_answers_refuse_in_the_language_asked(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "gym.md").write_text(
        "# Opening hours\n\nThe gym is open from 6 am to 10 pm every day. Members can bring one "
        "guest to the gym.\n\n"
        "# Classes\n\nYoga classes run on Monday and Thursday evenings in the studio.\n"
    )
    questions = [
        "Wie ist das Wetter morgen in Berlin?",
        "Quel temps fera-t-il demain à Paris ?",
        "What will the weather be like in Paris tomorrow?",
        "How much does it cost to bring a guest to the gym?",
    ]
    results = _answer(tmp_path, minilm, kb, questions)
    de, fr, en, near = (r.refusal for r in results)
    assert de is not None
    assert fr is not None
    assert en is not None
    assert near is not None
    assert de.message == Wording.build().localise(de, "de").message
    assert de.message == BUILT_IN["de"][de.reason]
    assert fr.message == BUILT_IN["fr"][fr.reason]
    assert en.message == BUILT_IN["en"][en.reason]
    assert near.reason == "not_answered"
    assert near.message.startswith("The knowledge base does not answer this question")


def _answer(
    tmp_path: Path, minilm: MiniLMEmbedder, kb: Path, questions: Sequence[str]
) -> list[AnswerResult]:
    local = Settings(data_dir=tmp_path / "data")
    services = open_services(local, embedder=minilm)
    try:
        ingest_paths(services.store, [kb], local, indexer=services.indexer, quiet=True)

        async def run() -> list[AnswerResult]:
            try:
                answerer = services.answerer
                results = [await answerer.answer(q, Options()) for q in questions]
                async for event in answerer.stream(questions[0], Options()):
                    if isinstance(event, Refusal):  # the stream's refusal is worded alike
                        assert event.message == results[0].refusal.message  # type: ignore[union-attr]
                return results
            finally:
                await services.aclose()

        return anyio.run(run)
    finally:
        services.close()
