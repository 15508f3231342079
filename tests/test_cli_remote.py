"""`search`, `delete` and `documents` against a running server (`--url`, the key in
STREAM_RAG_API_KEY, as ask and ingest), what they say when it is down or refuses, and counts
that agree with their noun."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from stream_rag.cli.commands import main
from stream_rag.config import Settings
from stream_rag.embed.backends import Vectors
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app

from .helpers import HANG_GUARD_S, free_port, running_server
from .test_keys import OPS, WIDGET, write_toml

REFUNDS = "Annual plans can be refunded within 30 days."
SYNC = "Offline edits sync when the connection returns."


def write_kb(folder: Path, files: dict[str, str]) -> Path:
    """A folder of text files to ingest, named and written as `files` says."""
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def test_search_delete_and_documents_go_through_a_running_server(
    tmp_path: Path,
    minilm: MiniLMEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = Settings(data_dir=tmp_path / "data", keys_file=write_toml(tmp_path / "k.toml"))
    kb = write_kb(tmp_path / "kb", {"refunds.txt": REFUNDS, "sync.txt": SYNC})
    unused = ["--data-dir", str(tmp_path / "unused")]
    with running_server(create_app(settings, embedder=minilm)) as url:
        monkeypatch.setenv("STREAM_RAG_API_KEY", OPS)
        assert main([*unused, "ingest", str(kb), "--url", url]) == 0
        capsys.readouterr()

        assert main([*unused, "documents", "--url", url, "--json"]) == 0
        listed = json.loads(capsys.readouterr().out)
        ids = {d["name"]: d["id"] for d in listed}
        assert set(ids) == {"refunds.txt", "sync.txt"}
        assert main([*unused, "documents", "--url", url]) == 0
        assert "refunds.txt" in capsys.readouterr().out

        assert main([*unused, "search", "money back for a yearly plan", "--url", url]) == 0
        out = capsys.readouterr().out
        assert out.splitlines()[1].startswith(f"[1] refunds.txt  ({ids['refunds.txt']} v1)")
        args = ["search", "offline", "--bm25-weight", "1", "--top-k", "1", "--json"]
        assert main([*unused, *args, "--url", url]) == 0
        result = json.loads(capsys.readouterr().out)
        assert [b["name"] for b in result["blocks"]] == ["sync.txt"]

        # A chat key may not search or delete: the server's 403 is said, exit 1.
        monkeypatch.setenv("STREAM_RAG_API_KEY", WIDGET)
        assert main([*unused, "search", "refunds", "--url", url]) == 1
        assert main([*unused, "delete", ids["sync.txt"], "--url", url]) == 1
        err = capsys.readouterr().err
        assert err.count("stream-rag: error: ") == 2
        monkeypatch.delenv("STREAM_RAG_API_KEY")
        assert main([*unused, "delete", ids["sync.txt"], "--url", url]) == 1
        assert "set STREAM_RAG_API_KEY" in capsys.readouterr().err

        monkeypatch.setenv("STREAM_RAG_API_KEY", OPS)
        assert main([*unused, "delete", ids["sync.txt"], "--url", url]) == 0
        assert capsys.readouterr().out == f"deleted {ids['sync.txt']} (sync.txt, 1 version)\n"
        assert main([*unused, "delete", ids["sync.txt"], "--url", url]) == 1
        assert "no document" in capsys.readouterr().err
        assert main([*unused, "documents", "--url", url, "--json"]) == 0
        assert [d["name"] for d in json.loads(capsys.readouterr().out)] == ["refunds.txt"]
    assert not (tmp_path / "unused").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "refunds"],
        ["delete", "doc_0123456789abcdef0123"],
        ["documents"],
        ["optimize"],
        ["ask", "refunds?"],
    ],
)
def test_a_server_that_is_down_is_a_message_not_a_traceback(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    assert main(["--data-dir", str(tmp_path / "unused"), *argv, "--url", url]) == 1
    out, err = capsys.readouterr()
    assert err.startswith(f"stream-rag: error: cannot reach {url}")
    assert "Traceback" not in out + err


@pytest.mark.parametrize("url", ["127.0.0.1:8000", "http://[::1", "ftp://example.com", "http://"])
@pytest.mark.parametrize(
    "argv",
    [
        ["search", "refunds"],
        ["delete", "doc_x"],
        ["documents"],
        ["optimize"],
        ["ask", "refunds?"],
        ["ingest", "README.md"],
        ["loadtest", "--users", "1"],
    ],
)
def test_a_url_that_is_not_a_servers_is_a_usage_error(
    argv: list[str], url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Checked before anything runs: `http://[::1` was a traceback from inside httpx."""
    with pytest.raises(SystemExit) as exited:
        main(["--data-dir", str(tmp_path), *argv, "--url", url])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"error: argument --url: {url!r} is not a" in err
    assert "Traceback" not in err


def test_local_delete_and_reindex_counts_agree_with_their_noun(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = write_kb(tmp_path / "kb", {"a.txt": "Alpha plans renew yearly."})
    data = ["--data-dir", str(tmp_path / "data")]
    assert main([*data, "ingest", str(kb)]) == 0
    assert main([*data, "ingest", str(kb)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "summary: 0 added, 1 duplicate, 0 failed"
    assert main([*data, "reindex"]) == 0
    assert "reindexed 1 document, 0 failed" in capsys.readouterr().out
    assert main([*data, "documents", "--json"]) == 0
    doc_id = json.loads(capsys.readouterr().out)[0]["id"]
    assert main([*data, "delete", doc_id]) == 0
    assert capsys.readouterr().out == f"deleted {doc_id} (a.txt, 1 version)\n"


def test_keys_list_says_how_many_revoked_keys_it_hides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--data-dir", str(tmp_path)]
    for name in ("old", "new"):
        assert main([*data, "keys", "create", "--scope", "read", "--name", name, "--json"]) == 0
    old = json.loads(capsys.readouterr().out.split("\n}\n")[0] + "}")["id"]
    assert main([*data, "keys", "revoke", old]) == 0
    capsys.readouterr()
    assert main([*data, "keys", "list"]) == 0
    out, err = capsys.readouterr()
    assert old not in out
    assert err == "(1 revoked key not shown: --all lists them)\n"
    assert main([*data, "keys", "list", "--all"]) == 0
    out, err = capsys.readouterr()
    rows = {line.split("\t")[1]: line.split("\t")[-1] for line in out.splitlines()}
    assert rows["old"].startswith("revoked ")
    assert rows["new"] == "active"
    assert err == ""


def test_ask_no_stream_through_a_server_asks_for_the_whole_answer(
    tmp_path: Path, minilm: MiniLMEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--no-stream --url` streamed /v1/chat, as without the flag: it asks /v1/answer (one
    regeneration if a draft fails), as `--no-stream` does locally."""
    kb = write_kb(tmp_path / "kb", {"refunds.txt": REFUNDS})
    unused = ["--data-dir", str(tmp_path / "unused")]
    with running_server(create_app(Settings(data_dir=tmp_path / "data"), embedder=minilm)) as url:
        assert main([*unused, "ingest", str(kb), "--url", url]) == 0
        capsys.readouterr()
        assert (
            main([*unused, "ask", "Can annual plans be refunded?", "--no-stream", "--url", url])
            == 0
        )
        out, err = capsys.readouterr()
        assert "within 30 days. [1]" in out
        assert "[1] refunds.txt" in out
        assert "# 1 attempt\n" in err
        assert (
            main([*unused, "ask", "What is the capital of Peru?", "--no-stream", "--url", url]) == 3
        )
        assert "(refused: " in capsys.readouterr().out


class HeldEmbedder:
    """MiniLM that embeds nothing until `released` is set: the server's indexing queue
    stays busy for as long as the test says."""

    def __init__(self, minilm: MiniLMEmbedder) -> None:
        self.minilm, self.name, self.dim = minilm, minilm.name, minilm.dim
        self.released = threading.Event()

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.released.wait(HANG_GUARD_S)
        return self.minilm.embed(texts)


def releasing_on_status(app: ASGIApp, embedder: HeldEmbedder) -> ASGIApp:
    """`app`, releasing the embedder when a client first asks for a version's status."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and "/versions/" in scope["path"]:
            embedder.released.set()
        await app(scope, receive, send)

    return wrapped


def test_ingest_through_a_server_returns_once_the_server_has_indexed(
    tmp_path: Path, minilm: MiniLMEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ingest --url` returned as soon as the upload was stored, while the server's queue was
    still indexing it: an `ask` right after found nothing (exit 3, no_sources). Indexing here
    waits until the CLI asks for the status, so a CLI that does not wait sees `indexing`."""
    kb = write_kb(tmp_path / "kb", {"refunds.txt": REFUNDS, "sync.txt": SYNC})
    unused = ["--data-dir", str(tmp_path / "unused")]
    held = HeldEmbedder(minilm)
    app = create_app(Settings(data_dir=tmp_path / "data"), embedder=held)
    with running_server(releasing_on_status(app, held)) as url:
        assert main([*unused, "ingest", str(kb), "--url", url]) == 0
        assert "summary: 2 added, 0 duplicates, 0 failed" in capsys.readouterr().out
        assert main([*unused, "documents", "--url", url, "--json"]) == 0
        listed = json.loads(capsys.readouterr().out)
        assert [d["versions"][-1]["status"] for d in listed] == ["ready", "ready"]


def test_ingest_no_wait_returns_with_the_upload_stored(
    tmp_path: Path, minilm: MiniLMEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--no-wait` asks for no status: the command returns while the server still indexes."""
    kb = write_kb(tmp_path / "kb", {"refunds.txt": REFUNDS})
    unused = ["--data-dir", str(tmp_path / "unused")]
    held = HeldEmbedder(minilm)
    app = create_app(Settings(data_dir=tmp_path / "data"), embedder=held)
    with running_server(releasing_on_status(app, held)) as url:
        assert main([*unused, "ingest", str(kb), "--url", url, "--no-wait"]) == 0
        assert "summary: 1 added" in capsys.readouterr().out
        assert main([*unused, "documents", "--url", url, "--json"]) == 0
        (listed,) = json.loads(capsys.readouterr().out)
        assert listed["versions"][-1]["status"] == "indexing"
        held.released.set()


class RefusingEmbedder:
    """MiniLM that cannot embed a text mentioning "unembeddable", as a remote embedder
    answering 400 to one input."""

    def __init__(self, minilm: MiniLMEmbedder) -> None:
        self.minilm, self.name, self.dim = minilm, minilm.name, minilm.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        if any("unembeddable" in text for text in texts):
            raise ValueError("the embedder refused the input")
        return self.minilm.embed(texts)


def test_ingest_through_a_server_says_a_file_it_could_not_index(
    tmp_path: Path, minilm: MiniLMEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file stored but failed by the indexer is a failure of the command, with the reason."""
    kb = write_kb(
        tmp_path / "kb", {"odd.txt": "This unembeddable page was stored.", "refunds.txt": REFUNDS}
    )
    unused = ["--data-dir", str(tmp_path / "unused")]
    app = create_app(Settings(data_dir=tmp_path / "data"), embedder=RefusingEmbedder(minilm))
    with running_server(app) as url:
        code = main([*unused, "ingest", str(kb), "--url", url])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "summary: 1 added, 0 duplicates, 1 failed" in out
    (line,) = [line for line in out.splitlines() if line.startswith("failed ")]
    assert line.startswith(f"failed     {kb / 'odd.txt'}: stored, not indexed: ")
    assert line.endswith("ValueError: the embedder refused the input")


@pytest.mark.parametrize(
    "argv", [["ingest", "README.md"], ["keys", "list"], ["documents"], ["search", "x"]]
)
def test_a_data_dir_that_is_a_file_is_a_message(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ingest` and `keys` tried to make the store inside it: a FileExistsError traceback."""
    (tmp_path / "file").write_text("not a directory")
    assert main(["--data-dir", str(tmp_path / "file"), *argv]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"stream-rag: error: {tmp_path / 'file'} is a file, not a data directory: check "
        "--data-dir or STREAM_RAG_DATA_DIR\n"
    )
    assert (tmp_path / "file").read_text() == "not a directory"


@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_fake_llm_refuses_a_port_that_is_not_one(
    port: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """99999 started nothing and said nothing, until stopped."""
    with pytest.raises(SystemExit) as exited:
        main(["fake-llm", "--port", port])
    assert exited.value.code == 2
    assert f"argument --port: {port!r} is not a TCP port number" in capsys.readouterr().err


def test_a_command_through_a_server_does_not_read_the_local_data_dir(
    tmp_path: Path, minilm: MiniLMEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    # `--url` works beside a data directory it never opens (STREAM_RAG_DATA_DIR left set to
    # anything): a file there refused `documents --url` as 'is a file, not a data directory'.
    (tmp_path / "file").write_text("not a directory")
    local = ["--data-dir", str(tmp_path / "file")]
    settings = Settings(data_dir=tmp_path / "data")
    with running_server(create_app(settings, embedder=minilm)) as url:
        assert main([*local, "documents", "--url", url]) == 0, capsys.readouterr().err
        assert capsys.readouterr().out == "no documents\n"
        assert main([*local, "search", "refunds", "--url", url, "--json"]) == 0
    assert (tmp_path / "file").read_text() == "not a directory"
