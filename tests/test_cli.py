from __future__ import annotations

import io
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stream_rag.cli.commands import build_parser, main
from stream_rag.ingest.progress import Progress

from .helpers import make_docx, make_pdf

ROOT = Path(__file__).resolve().parent.parent


def mixed_folder(root: Path) -> dict[str, int]:
    """200 files: good ones of every type, duplicates, and failures of several kinds."""
    root.mkdir()
    (root / "nested" / "deeper").mkdir(parents=True)
    (root / ".hidden").mkdir()
    (root / ".hidden" / "skipped.txt").write_text("hidden files are not ingested")
    counts = {"added": 0, "duplicates": 0, "failed": 0}
    for i in range(200):
        folder = root if i % 3 else root / "nested" / ("deeper" if i % 2 else "")
        kind = i % 10
        if kind in (0, 1, 2):
            (folder / f"note{i}.txt").write_text(f"Note {i}: the plan costs {i} dollars.")
            counts["added"] += 1
        elif kind == 3:
            (folder / f"page{i}.md").write_text(f"# Page {i}\n\nMarkdown body {i}.")
            counts["added"] += 1
        elif kind == 4:
            (folder / f"page{i}.html").write_text(f"<h1>Title {i}</h1><p>HTML body {i}.</p>")
            counts["added"] += 1
        elif kind == 5:
            (folder / f"doc{i}.pdf").write_bytes(make_pdf([f"PDF number {i}."]))
            counts["added"] += 1
        elif kind == 6:
            (folder / f"doc{i}.docx").write_bytes(make_docx([f"DOCX number {i}."]))
            counts["added"] += 1
        elif kind == 7:
            (folder / f"copy{i}.txt").write_text("Identical bytes in every copy.")
            counts["duplicates"] += 1
        elif kind == 8:
            (folder / f"image{i}.png").write_bytes(b"\x89PNG\r\n\x1a\n")
            counts["failed"] += 1
        else:
            (folder / f"broken{i}.pdf").write_bytes(b"not really a pdf")
            counts["failed"] += 1
    # The first identical copy is added, the rest are duplicates.
    counts["added"] += 1
    counts["duplicates"] -= 1
    return counts


def test_ingest_folder_of_200_mixed_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = mixed_folder(tmp_path / "kb")
    data_dir = str(tmp_path / "data")
    code = main(["--data-dir", data_dir, "ingest", str(tmp_path / "kb")])
    out, err = capsys.readouterr()
    assert code == 1  # some files failed
    assert err == ""  # no progress bar when not on a terminal
    summary = out.strip().splitlines()[-1]
    assert summary == (
        f"summary: {expected['added']} added, {expected['duplicates']} duplicates, "
        f"{expected['failed']} failed"
    )
    failures = [line for line in out.splitlines() if line.startswith("failed")]
    assert any("unsupported file type (.png)" in line for line in failures)
    assert any("not a PDF" in line for line in failures)
    assert "skipped.txt" not in out

    assert main(["--data-dir", data_dir, "documents", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert len(listed) == expected["added"]

    # A second run adds nothing: everything stored is now a duplicate.
    assert main(["--data-dir", data_dir, "ingest", str(tmp_path / "kb")]) == 1
    rerun = capsys.readouterr().out.strip().splitlines()[-1]
    total_ok = expected["added"] + expected["duplicates"]
    assert rerun == f"summary: 0 added, {total_ok} duplicates, {expected['failed']} failed"


def test_ingest_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    for i in range(5):
        (kb / f"n{i}.txt").write_text(f"Note {i}.")
    primary, secondary = pty.openpty()
    env = {**os.environ, "STREAM_RAG_DATA_DIR": str(tmp_path / "data")}
    result = subprocess.run(
        [sys.executable, "-m", "stream_rag.cli", "ingest", str(kb)],
        stdout=subprocess.PIPE,
        stderr=secondary,
        env=env,
        check=False,
        timeout=60,
    )
    os.close(secondary)
    drawn = os.read(primary, 65536).decode()
    os.close(primary)
    assert result.returncode == 0
    assert "[" + "#" * 30 + "] 5/5" in drawn
    assert result.stdout.decode().strip().endswith("summary: 5 added, 0 duplicates, 0 failed")


def test_progress_is_silent_when_piped() -> None:
    stream = io.StringIO()
    progress = Progress(3, stream=stream)
    for _ in range(3):
        progress.advance("x")
    progress.close()
    assert stream.getvalue() == ""


def test_single_file_with_name_and_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = str(tmp_path / "data")
    doc = tmp_path / "faq.md"
    doc.write_text("# FAQ\n\nAnswers.")
    assert main(["--data-dir", data_dir, "ingest", str(doc), "--name", "Support FAQ"]) == 0
    assert main(["--data-dir", data_dir, "documents"]) == 0
    table = capsys.readouterr().out
    assert "Support FAQ" in table
    doc_id = re.search(r"(doc_[0-9a-f]+)", table)
    assert doc_id is not None

    assert main(["--data-dir", data_dir, "ingest", str(tmp_path / "missing.txt")]) == 1
    assert "No such file" in capsys.readouterr().out
    assert main(["--data-dir", data_dir, "ingest", str(tmp_path), "--name", "x"]) == 2
    assert "--name needs exactly one file" in capsys.readouterr().err

    assert main(["--data-dir", data_dir, "delete", doc_id.group(1)]) == 0
    assert main(["--data-dir", data_dir, "delete", doc_id.group(1)]) == 1
    assert "no document with id" in capsys.readouterr().err
    assert main(["--data-dir", data_dir, "documents"]) == 0
    assert capsys.readouterr().out.strip().endswith("no documents")


@pytest.mark.parametrize(
    "command",
    [["documents"], ["delete", "doc_0"], ["search", "refunds"], ["ask", "refunds?"], ["doctor"]],
)
def test_a_data_dir_that_is_not_there_is_a_cli_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    typo = tmp_path / "stream_rag_dta"
    assert main(["--data-dir", str(typo), *command]) == 1
    err = capsys.readouterr().err
    assert "no data directory at" in err
    assert str(typo) in err
    assert not typo.exists()  # nothing made there


def test_bad_setting_is_a_clear_cli_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STREAM_RAG_MAX_UPLOAD_MB", "lots")
    assert main(["--data-dir", str(tmp_path), "documents"]) == 1
    assert "STREAM_RAG_MAX_UPLOAD_MB" in capsys.readouterr().err


def test_help_explains_every_command() -> None:
    parser = build_parser()
    text = parser.format_help()
    for command in ("serve", "ingest", "documents", "delete"):
        assert re.search(rf"^\s+{command}\s+\S", text, re.MULTILINE), command


def test_the_cli_reference_shows_the_current_help() -> None:
    page = (ROOT / "docs" / "reference" / "cli.md").read_text()
    help_text = build_parser().format_help().strip()
    assert help_text in page, "docs/reference/cli.md is stale: run `python -m tools.reference`"


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    blocks = re.findall(r"```(?:sh|bash)\n(.*?)```", readme, re.DOTALL)
    test_command = next(b.strip() for b in blocks if "pytest" in b)
    assert test_command in ci


def test_output_piped_into_a_reader_that_stops_early_ends_without_a_traceback(
    tmp_path: Path,
) -> None:
    # `stream-rag documents --json | head` printed a BrokenPipeError traceback once head
    # had read enough; a command line tool stops quietly instead.
    from stream_rag.access.keys import KeyStore

    for i in range(3):
        KeyStore(tmp_path / "data").create(name=f"k{i}", scopes=["read"])
    argv = ["-m", "stream_rag.cli", "--data-dir", str(tmp_path / "data"), "keys", "list"]
    proc = subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stderr is not None
    proc.stdout.close()  # the reader is gone before anything is written
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1
    assert "Traceback" not in err, err
    assert "BrokenPipeError" not in err, err
