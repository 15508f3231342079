"""`stream-rag eval answers`: the question file's checks and the scoring of real answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_rag.answer.evaluate import (
    AnswerSet,
    Outcome,
    Question,
    evaluate_answers,
    load_questions,
    load_sets,
    report,
)
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.errors import InputError


def test_question_file_is_checked_line_by_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(
        '{"question": "Is shipping free?", "gold": ["a.md"], "expect": "answer"}\n\n'
        '{"question": "Weather?", "gold": null, "expect": "refuse",'
        ' "history": [{"question": "Hi", "answer": "Hello"}]}\n'
    )
    first, second = load_questions(path)
    assert first == Question("Is shipping free?", "answer", ("a.md",))
    assert second.history == (("Hi", "Hello"),)
    assert second.gold is None
    path.write_text('{"question": "A and is there a gym?", "left_out": true}\n')
    assert load_questions(path)[0].left_out is True
    for bad in (
        '{"question": 3}',
        '{"question": "x", "expect": "maybe"}',
        '{"question": "x", "left_out": "yes"}',
        "[1]",
        "{",
    ):
        path.write_text(bad + "\n")
        with pytest.raises(InputError, match=r"q\.jsonl:1"):
            load_questions(path)


def test_scores_answers_refusals_and_gold_citations(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "shipping.md").write_text(
        "# How much does shipping cost?\n\nStandard shipping is free on orders over 50 euros. "
        "Smaller orders pay a flat shipping fee of 4.90 euros.\n"
    )
    (kb / "descaling.md").write_text(
        "# How often should I descale the kettle?\n\nDescale the kettle every four weeks in "
        "hard-water areas and every three months in soft-water areas.\n"
    )
    questions = [
        Question("What does shipping cost for small orders?", "answer", ("shipping.md",)),
        Question("How often should the kettle be descaled?", "answer", ("shipping.md",)),
        Question("Who painted the Mona Lisa?", "refuse", None),
        Question(
            "Is shipping free and do you gift-wrap?", "answer", ("shipping.md",), left_out=True
        ),
    ]
    settings = Settings(data_dir=tmp_path / "unused")
    outcomes = evaluate_answers(kb, questions, settings, embedder=minilm)
    assert [o.refusal is None for o in outcomes] == [True, True, False, True]
    assert outcomes[3].uncovered == ("do you gift-wrap?",)
    assert outcomes[0].cited[:1] == ("shipping.md",)
    assert outcomes[0].ok
    assert outcomes[1].cited == ("descaling.md",)
    assert not outcomes[1].ok
    assert outcomes[2].refusal == "low_evidence"
    assert outcomes[2].ok
    text = report(outcomes, verbose=True)
    assert "answered             1.000 (3/3)" in text
    assert "part left out named  1.000 (1/1), named when none was 0 of 3 answered" in text
    assert "gold cited           0.667 (2/3)" in text
    assert "off-topic refused    1.000 (1/1)" in text
    assert "missed 1:" in text
    assert not (tmp_path / "unused").exists()  # everything went to a throwaway directory


def _outcome(item: Question, answer: str, first: tuple[str, tuple[str, ...]]) -> Outcome:
    cited = first[1]
    return Outcome(item, None, cited, cited, answer, 1.0, first=first)


def test_content_checks_each_fail_on_their_own(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(
        '{"question": "How long is the infectious period?", "gold": ["flu.md"],'
        ' "phrases": [["five days", "5 days"], "after symptoms"], "avoid": ["incubation"],'
        ' "first": "infectious"}\n'
    )
    (item,) = load_questions(path)
    assert item.phrases == (("five days", "5 days"), ("after symptoms",))
    assert item.first == ("infectious",)
    good = "People are infectious for 5 days after  symptoms start."
    assert _outcome(item, good, (good, ("flu.md",))).right
    near = "The incubation period is two days. People are infectious for 5 days after symptoms."
    lead = "The incubation period is two days."
    assert _outcome(item, near, (lead, ("flu.md",))).failed_checks == ["avoid", "first"]
    assert _outcome(item, good, (good, ("cold.md",))).failed_checks == ["gold", "first_cites"]
    short = "People are infectious for a week."
    assert _outcome(item, short, (short, ("flu.md",))).failed_checks == ["phrases"]
    refused = Outcome(item, "low_evidence", (), (), "", 1.0)
    assert refused.failed_checks == ["expect"]
    for bad in ('"phrases": "x"', '"phrases": [[]]', '"first": 3', '"avoid": [""]'):
        path.write_text('{"question": "x", ' + bad + "}\n")
        with pytest.raises(InputError, match=r"q\.jsonl:1"):
            load_questions(path)


def test_a_conflict_must_name_its_stale_side_when_the_record_says_which(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(
        '{"question": "How much is the day rate?", "gold": ["a.md", "old.txt"],'
        ' "expect": "conflict", "stale": "old.txt"}\n'
    )
    (item,) = load_questions(path)
    assert item.stale == "old.txt"
    named = Outcome(item, "conflicting_sources", (), (), "", 1.0, stale="old.txt")
    assert named.right
    unnamed = Outcome(item, "conflicting_sources", (), (), "", 1.0)
    assert unnamed.failed_checks == ["stale"]
    assert Outcome(item, None, (), (), "x", 1.0).failed_checks == ["expect"]
    for bad in ('"stale": "old.txt"', '"expect": "conflict", "stale": 3'):
        path.write_text('{"question": "x", ' + bad + "}\n")
        with pytest.raises(InputError, match=r"q\.jsonl:1"):
            load_questions(path)


def test_sets_file_names_each_set(tmp_path: Path) -> None:
    path = tmp_path / "sets.json"
    path.write_text('[{"name": "a", "kb": "kb_a", "questions": "a.jsonl", "held_out": true}]')
    (only,) = load_sets(path)
    assert only == AnswerSet("a", tmp_path / "kb_a", tmp_path / "a.jsonl", True)
    for bad in (
        "[]",
        "{",
        '[{"name": "a"}]',
        '[{"name": "a", "kb": "k", "questions": "q", "held_out": 1}]',
    ):
        path.write_text(bad)
        with pytest.raises(InputError):
            load_sets(path)


def test_a_set_missing_a_gold_file_is_refused_before_any_is_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stream_rag.cli.commands import main

    for name in ("a", "b"):
        (tmp_path / f"kb_{name}").mkdir()
        (tmp_path / f"kb_{name}" / "faq.md").write_text("# Shipping\n\nShipping is free.\n")
        (tmp_path / f"{name}.jsonl").write_text(
            '{"question": "Is shipping free?", "gold": ["faq.md"]}\n'
            '{"question": "How do I book a day?", "gold": ["delivery.docx", "faq.md"]}\n'
            '{"question": "Weather?", "gold": null, "expect": "refuse"}\n'
        )
    sets = tmp_path / "sets.json"
    sets.write_text(
        '[{"name": "a", "kb": "kb_a", "questions": "a.jsonl"},'
        ' {"name": "b", "kb": "kb_b", "questions": "b.jsonl"}]'
    )
    (tmp_path / "kb_a" / "delivery.docx").write_bytes(b"present: the check reads names only")
    data_dir = str(tmp_path / "data")
    assert main(["--data-dir", data_dir, "eval", "answers", "--sets", str(sets)]) == 1
    captured = capsys.readouterr()
    assert "set b: 1 gold file(s) missing from" in captured.err
    assert "delivery.docx" in captured.err
    assert "kb_fixtures" in captured.err
    assert "right (every check)" not in captured.out  # set a was not scored first
    questions = tmp_path / "b.jsonl"
    kb = str(tmp_path / "kb_b")
    args = ["--data-dir", data_dir, "eval", "answers", "--kb", kb, "--questions", str(questions)]
    assert main(args) == 1
    assert "delivery.docx" in capsys.readouterr().err
