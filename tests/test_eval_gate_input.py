"""`stream-rag eval gate --data FILE` on a file it cannot read: a message naming the file (and
the line), exit 1, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_rag.cli.commands import main


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (
            '{"sentence": "x", "blocks": ["x"], "cited": [1], "label": true}\n{"sentence": 1\n',
            ":2:",
        ),
        ("not json at all\n", ":1:"),
        ('["a list"]\n', ":1:"),
        (None, "cannot read"),
    ],
)
def test_a_bad_data_file_is_a_message_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, said: str
) -> None:
    data = tmp_path / "gate.jsonl"
    if content is not None:
        data.write_text(content, encoding="utf-8")
    args = ["--data-dir", str(tmp_path / "d"), "eval", "gate", "--data", str(data)]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("stream-rag: error: "), err
    assert said in err, err
    assert str(data) in err


def test_verdicts_are_written_one_line_per_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    block = "Refunds are issued within 30 days of a cancellation request."
    rows = [
        {"sentence": "Refunds are issued within 30 days.", "blocks": [block], "cited": [1]},
        {"sentence": "Refunds are issued within 90 days.", "blocks": [block], "cited": [1]},
    ]
    data = tmp_path / "gate.jsonl"
    data.write_text(
        "".join(json.dumps({**r, "label": i == 0}) + "\n" for i, r in enumerate(rows)),
        encoding="utf-8",
    )
    out = tmp_path / "verdicts.jsonl"
    args = ["--data-dir", str(tmp_path / "d"), "eval", "gate", "--data", str(data)]
    assert main([*args, "--stages", "lexical", "--verdicts", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(v["sentence"], v["label"], v["ok"]) for v in lines] == [
        (rows[0]["sentence"], True, True),
        (rows[1]["sentence"], False, False),
    ]
    assert lines[1]["reason"] == "number_mismatch"
    assert lines[1]["stage"] == "lexical"
    assert "lexical" in lines[0]["scores"]
    capsys.readouterr()
    assert main([*args, "--stages", "lexical", "--verdicts", str(tmp_path / "no" / "v")]) == 1
    assert "cannot write" in capsys.readouterr().err
