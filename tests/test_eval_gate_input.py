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
