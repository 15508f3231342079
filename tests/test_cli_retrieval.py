from __future__ import annotations

import json
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from stream_rag.cli.commands import main
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app

from .helpers import running_server


def write_beir(root: Path) -> None:
    """A tiny BEIR-layout set whose answers a working retriever must find."""
    (root / "qrels").mkdir(parents=True)
    topics = {
        "refund": "Refunds for annual plans are possible within 30 days of purchase.",
        "sync": "Notes edited offline sync automatically when the connection returns.",
        "security": "Two-factor authentication supports authenticator apps and keys.",
        "export": "Notebooks export as Markdown, PDF or HTML from the notebook menu.",
        "pricing": "The Pro plan costs eight dollars per month or eighty per year.",
    }
    corpus = [{"_id": key, "title": key.title(), "text": text} for key, text in topics.items()]
    queries = [
        {"_id": "q1", "text": "how long can I ask for my money back"},
        {"_id": "q2", "text": "offline edits syncing"},
        {"_id": "q3", "text": "hardware security key login"},
        {"_id": "q4", "text": "download my notes as pdf"},
    ]
    (root / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in corpus))
    (root / "queries.jsonl").write_text("\n".join(json.dumps(r) for r in queries))
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\trefund\t2\nq2\tsync\t1\nq3\tsecurity\t1\nq4\texport\t1\n"
    )


def test_eval_retrieval_prints_a_row_per_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_beir(tmp_path / "beir")
    assert main(["eval", "retrieval", "--beir", str(tmp_path / "beir")]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line[:1].isalpha()}
    assert {"dense", "bm25", "hybrid", "rank-bm25"} <= set(rows)
    assert float(rows["dense"][1]) > 0.8  # nDCG@10: MiniLM finds the paraphrased answers
    assert float(rows["hybrid"][4]) == 1.0  # Recall@100
    assert "top-10 overlap with the bm25 branch" in out


def test_eval_rejects_a_folder_that_is_not_beir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "retrieval", "--beir", str(tmp_path)]) == 1
    assert "not a BEIR data set" in capsys.readouterr().err


def test_ingest_then_search_and_reindex(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "refunds.md").write_text("Annual plans can be refunded within 30 days.")
    (kb / "sync.txt").write_text("Offline edits sync when the connection returns.")
    data = ["--data-dir", str(tmp_path / "data")]
    assert main([*data, "ingest", str(kb)]) == 0
    capsys.readouterr()
    assert main([*data, "search", "money back for a yearly plan", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["blocks"][0]["name"] == "refunds.md"
    assert main([*data, "search", "offline", "--bm25-weight", "1", "--top-k", "1"]) == 0
    out = capsys.readouterr().out
    assert "[1] sync.txt" in out
    assert "[2]" not in out
    assert main([*data, "reindex"]) == 0
    assert "reindexed 2 documents, 0 failed" in capsys.readouterr().out


def test_ingest_through_a_running_server(
    tmp_path: Path, minilm: MiniLMEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.txt").write_text("Alpha.")
    (kb / "b.png").write_bytes(b"\x89PNG")
    settings = Settings(data_dir=tmp_path / "served")
    with running_server(create_app(settings, embedder=minilm)) as base_url:
        code = main(["--data-dir", str(tmp_path / "unused"), "ingest", str(kb), "--url", base_url])
        # The server holds the embedded index: a local ingest must say so, not corrupt it.
        (kb / "c.txt").write_text("Gamma.")
        local = main(["--data-dir", str(settings.data_dir), "ingest", str(kb / "c.txt")])
        out, err = capsys.readouterr()
        # A local delete is refused the same way and is told the route that does it.
        deleted = main(["--data-dir", str(settings.data_dir), "delete", "doc_0123456789abcdef0123"])
        delete_err = capsys.readouterr().err
    assert code == 1
    assert "summary: 1 added, 0 duplicates, 1 failed" in out
    assert "unsupported file type" in out
    assert local == 1
    assert "in use by another process" in err
    assert "--url" in err
    assert deleted == 1
    assert "DELETE /v1/documents/{id}" in delete_err


def test_a_server_after_cli_ingest_does_not_index_again(
    tmp_path: Path, minilm: MiniLMEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.txt").write_text("Alpha plans renew yearly.")
    assert main(["--data-dir", str(tmp_path / "data"), "ingest", str(kb)]) == 0
    from stream_rag.services import open_services

    services = open_services(Settings(data_dir=tmp_path / "data"), embedder=minilm)
    try:
        assert services.indexer.reconcile() == []
    finally:
        services.close()


def test_a_new_feature_format_indexes_stored_versions_again_at_start(
    tmp_path: Path, minilm: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.txt").write_text("Alpha plans renew yearly.")
    assert main(["--data-dir", str(tmp_path / "data"), "ingest", str(kb)]) == 0
    from stream_rag.index import features, indexing
    from stream_rag.services import open_services

    monkeypatch.setattr(indexing, "FEATURES_VERSION", features.FEATURES_VERSION + 1)
    services = open_services(Settings(data_dir=tmp_path / "data"), embedder=minilm)
    try:
        work = services.indexer.reconcile()
        assert [doc_id for doc_id, _ in work] == [d.id for d in services.store.list_documents()]
        assert len(work) == 1
        assert services.store.meta("index_fingerprint") == services.indexer.fingerprint
    finally:
        services.close()


def test_remote_commands_report_a_proxy_error_page_and_a_stream_that_is_not_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reverse proxy's HTML 502 is not a stream_rag error body; neither is an event stream
    whose data is not JSON: both end in a message and exit 1, not a traceback."""

    async def gateway(request: Request) -> Response:
        return HTMLResponse("<html><body><h1>502 Bad Gateway</h1></body></html>", 502)

    async def garbled(request: Request) -> Response:
        return Response("event: sources\ndata: {not json\n\n", media_type="text/event-stream")

    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.txt").write_text("Alpha.")
    unused = ["--data-dir", str(tmp_path / "unused")]
    with running_server(
        Starlette(routes=[Route("/v1/{path:path}", gateway, methods=["POST"])])
    ) as url:
        assert main([*unused, "ingest", str(kb), "--url", url]) == 1
        assert main([*unused, "ask", "refunds?", "--url", url]) == 1
    out, err = capsys.readouterr()
    assert "a.txt: HTTP 502 Bad Gateway: <html><body><h1>502 Bad Gateway" in out
    assert "stream-rag: error: HTTP 502 Bad Gateway: <html>" in err
    with running_server(Starlette(routes=[Route("/v1/chat", garbled, methods=["POST"])])) as url:
        assert main([*unused, "ask", "refunds?", "--url", url]) == 1
    assert f"{url} sent an event that is not JSON" in capsys.readouterr().err
