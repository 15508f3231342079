"""Index hygiene: every delete removes points; `stream-rag doctor` finds and repairs drift."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from stream_rag.cli.commands import main
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.index.bm25 import query_vector
from stream_rag.index.doctor import check
from stream_rag.index.edge import EdgeIndex
from stream_rag.services import Services, open_services
from stream_rag.text import tokenize

from .conftest import wait_indexed

QUERY = "refund window thirty days annual plans"
LIVE_TEXT = "Gift subscriptions cannot be refunded."
OTHER_TEXT = "Exports run every night at two."


def edge_count(data_dir: Path) -> int:
    index = EdgeIndex.open(data_dir / "index" / "edge-384-f16", 384)
    try:
        return index.count()
    finally:
        index.close()


def upload(client: TestClient, name: str, text: str) -> str:
    response = client.post("/v1/documents", files={"file": (name, text.encode())})
    assert response.status_code == 201, response.text
    doc_id: str = response.json()["document"]["id"]
    return doc_id


def test_http_delete_removes_the_index_points(settings: Settings, minilm: MiniLMEmbedder) -> None:
    with TestClient(create_app(settings, embedder=minilm)) as client:
        kept = upload(client, "kept.txt", "Passwords can be reset from the login page.")
        gone = upload(client, "gone.txt", "Invoices are emailed on the first of the month.")
        wait_indexed(client, kept)
        wait_indexed(client, gone)
        assert client.delete(f"/v1/documents/{gone}").status_code == 200
    assert edge_count(settings.data_dir) == 1


def test_delete_sixty_then_the_survivor_is_still_found(
    settings: Settings, minilm: MiniLMEmbedder
) -> None:
    """60 documents that match better than the survivor, deleted: their points must not fill
    the candidate slots of either branch."""
    with TestClient(create_app(settings, embedder=minilm)) as client:
        doomed = [
            upload(
                client,
                f"refund-{i}.txt",
                f"The refund window is thirty days for annual plans (copy {i}).",
            )
            for i in range(60)
        ]
        survivor = upload(
            client, "billing.txt", "Monthly plans can be cancelled; the refund rules differ."
        )
        for doc_id in [*doomed, survivor]:
            wait_indexed(client, doc_id)
        for doc_id in doomed:
            assert client.delete(f"/v1/documents/{doc_id}").status_code == 200
        blocks = client.post("/v1/search", json={"query": QUERY}).json()["blocks"]
        assert [b["doc_id"] for b in blocks] == [survivor]
    # The BM25 statistics are right again too: the deleted points no longer count in IDF.
    assert edge_count(settings.data_dir) == 1


def add_and_index(services: Services, name: str, text: str) -> str:
    stager = services.store.blobs.stager(10**6)
    stager.write(text.encode())
    result = services.store.add(stager.finish(), filename=name)
    services.indexer.index_version(result.document.id, 1)
    return result.document.id


def sparse_score(services: Services, query: str) -> float:
    hits = services.index.search_sparse(query_vector(tokenize(query)), "default", 5)
    return hits[0].score


def test_doctor_reports_and_repairs_every_kind_of_drift(
    tmp_path: Path, minilm: MiniLMEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    services = open_services(settings, embedder=minilm)
    try:
        live = add_and_index(services, "live.txt", LIVE_TEXT)
        unindexed = add_and_index(services, "other.txt", OTHER_TEXT)
        orphans = [
            add_and_index(services, f"o{i}.txt", f"Gift cards expire after a year ({i}).")
            for i in range(5)
        ]
        # Drift of every kind: a store-only delete (orphan points), lost points, stale IDF.
        for doc_id in orphans:
            services.store.delete(doc_id)
        services.index.delete_versions(unindexed)
        services.index.delete_versions(orphans[0])  # deleted but still counted in IDF
        drifted_score = sparse_score(services, "gift refunded")
        assert check(services.store, services.index).differences > 0
    finally:
        services.index.close()
        services.store.close()

    assert main(["--data-dir", str(settings.data_dir), "doctor"]) == 1
    out = capsys.readouterr().out
    assert "4 points of no live chunk" in out
    assert f"1 chunk of {unindexed} v1 has no point" in out

    assert main(["--data-dir", str(settings.data_dir), "doctor", "--repair"]) == 0
    assert "differences: 0" in capsys.readouterr().out.splitlines()[-1]
    assert main(["--data-dir", str(settings.data_dir), "doctor"]) == 0

    services = open_services(settings, embedder=minilm)
    try:
        report = check(services.store, services.index)
        assert (report.points, report.live_chunks, report.differences) == (2, 2, 0)
        assert services.index.stale_points() == 0
        hits = services.index.search_sparse(query_vector(tokenize("gift refunded")), "default", 5)
        assert [h.doc_id for h in hits] == [live]
        repaired_score = hits[0].score
    finally:
        services.close()
    # IDF counts the two live points only, as in an index that never held the gift cards.
    clean = open_services(Settings(data_dir=tmp_path / "clean"), embedder=minilm)
    try:
        add_and_index(clean, "live.txt", LIVE_TEXT)
        add_and_index(clean, "other.txt", OTHER_TEXT)
        assert repaired_score == pytest.approx(sparse_score(clean, "gift refunded"), rel=1e-4)
        assert repaired_score != pytest.approx(drifted_score, rel=1e-2)
    finally:
        clean.close()


def test_startup_check_drops_points_a_crash_left_behind(
    settings: Settings, minilm: MiniLMEmbedder
) -> None:
    services = open_services(settings, embedder=minilm)
    try:
        add_and_index(services, "a.txt", "Backups are kept for ninety days.")
        gone = add_and_index(services, "b.txt", "Support answers within one business day.")
        services.store.delete(gone)  # as if the process died before removing the points
    finally:
        services.index.close()
        services.store.close()
    with TestClient(create_app(settings, embedder=minilm)) as client:
        assert client.get("/healthz").status_code == 200
    assert edge_count(settings.data_dir) == 1
