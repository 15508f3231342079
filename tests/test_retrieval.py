from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.testclient import TestClient

from stream_rag.config import Settings
from stream_rag.embed.backends import OpenAIEmbedder
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.language.question import read_question
from stream_rag.retrieve.hybrid import SearchResult
from stream_rag.services import Services, open_services

from .conftest import wait_indexed
from .fakes import rerank_app
from .helpers import running_server


def add(client: TestClient, filename: str, text: str, **fields: str) -> str:
    response = client.post("/v1/documents", files={"file": (filename, text.encode())}, data=fields)
    assert response.status_code == 201, response.text
    doc_id: str = response.json()["document"]["id"]
    wait_indexed(client, doc_id)
    return doc_id


def search(client: TestClient, query: str, **options: Any) -> dict[str, Any]:
    response = client.post("/v1/search", json={"query": query, **options})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_same_name_documents_are_both_found(client: TestClient) -> None:
    first = add(client, "test1.txt", "Annual plans can be refunded within 30 days of purchase.")
    second = add(client, "test1.txt", "Team plans get a refund for unused seats within 30 days.")
    blocks = search(client, "refund within 30 days")["blocks"]
    found = {b["doc_id"] for b in blocks}
    assert {first, second} <= found
    for block in blocks:
        assert block["name"] == "test1.txt"
        assert block["url"] == f"/v1/documents/{block['doc_id']}/versions/1/content"
        assert set(block["scores"]) >= {"fused", "dense", "bm25"}
        assert len(block["sha256"]) == 64
        assert [b["n"] for b in blocks] == list(range(1, len(blocks) + 1))


def test_new_version_replaces_old_text_in_results(client: TestClient) -> None:
    doc_id = add(client, "refunds.md", "Refunds are possible within 30 days of purchase.")
    response = client.post(
        f"/v1/documents/{doc_id}/versions",
        files={"file": ("refunds.md", b"Refunds are possible within 14 days of purchase.")},
    )
    assert response.status_code == 201
    document = wait_indexed(client, doc_id, 2)
    assert document["live_version"] == 2
    blocks = search(client, "refund days purchase")["blocks"]
    mine = [b for b in blocks if b["doc_id"] == doc_id]
    assert [b["version"] for b in mine] == [2]
    assert "14 days" in mine[0]["text"]
    old = client.get(f"/v1/documents/{doc_id}/versions/1/content")
    assert old.content == b"Refunds are possible within 30 days of purchase."


def test_block_text_is_the_original_chunk(client: TestClient) -> None:
    text = "# Title\n\nThe  exact   spacing, *markdown* and [links](x) stay as written."
    doc_id = add(client, "exact.md", text)
    block = search(client, "exact spacing markdown")["blocks"][0]
    assert block["doc_id"] == doc_id
    # Markup is not part of the text quoted; the spacing is, and the chunk's span of the
    # uploaded bytes is the passage as written.
    assert block["text"] == "# Title\n\nThe  exact   spacing, markdown and links stay as written."
    chunk = client.get(f"/v1/documents/{doc_id}/versions/1/chunks").json()["chunks"][0]
    assert block["text"] == chunk["text"]
    assert text.encode()[chunk["source_start"] : chunk["source_end"]] == text.encode()


def test_chinese_is_found_by_the_bm25_branch(client: TestClient) -> None:
    add(client, "english.txt", "Refunds are possible within 30 days.")
    doc_id = add(client, "退款政策.txt", "年度计划在购买后三十天内可以全额退款。月度计划不退款。")
    body = search(client, "退款期限是多久", weights={"dense": 0, "bm25": 1})
    assert body["blocks"][0]["doc_id"] == doc_id
    assert body["blocks"][0]["scores"]["bm25"] > 0
    assert all(b["doc_id"] == doc_id for b in body["blocks"])


def test_weights_and_fusion_are_per_request(client: TestClient) -> None:
    lexical = add(client, "codes.txt", "Error code E1234 appears when sync fails.")
    semantic = add(client, "sync.txt", "If notes do not appear on another device, sync failed.")
    bm25_first = search(client, "E1234", weights={"dense": 0.0, "bm25": 1.0})["blocks"]
    assert bm25_first[0]["doc_id"] == lexical
    dense_first = search(
        client, "my notes are missing on my phone", weights={"dense": 1.0, "bm25": 0.0}
    )["blocks"]
    assert dense_first[0]["doc_id"] == semantic
    rrf = search(client, "sync fails", fusion="rrf", top_k=1)
    assert rrf["fusion"] == "rrf"
    assert len(rrf["blocks"]) == 1


def test_collections_are_separate(client: TestClient) -> None:
    add(client, "a.txt", "Shipping takes five days.", collection="shop")
    assert search(client, "shipping days")["blocks"] == []
    assert len(search(client, "shipping days", collection="shop")["blocks"]) == 1


def test_delete_removes_from_results(client: TestClient) -> None:
    doc_id = add(client, "gone.txt", "Passwords can be reset from the login page.")
    assert search(client, "reset password")["blocks"]
    assert client.delete(f"/v1/documents/{doc_id}").status_code == 200
    assert search(client, "reset password")["blocks"] == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "'query' must be a string"),
        ({"query": "  "}, "must not be empty"),
        ({"query": "x", "top_k": 0}, "top_k"),
        ({"query": "x", "top_k": "5"}, "top_k"),
        ({"query": "x", "weights": {"dense": -1}}, "from 0 to 1000"),
        ({"query": "x", "weights": {"sparse": 1}}, "unknown weight"),
        ({"query": "x", "weights": {"dense": 0, "bm25": 0}}, "positive"),
        ({"query": "x", "weights": {"title": 1}}, "dense or bm25 weight must be positive"),
        ({"query": "x", "weights": [1, 2]}, "object of numbers"),
        ({"query": "x", "fusion": "max"}, "fusion"),
    ],
)
def test_search_input_errors(client: TestClient, body: dict[str, Any], message: str) -> None:
    response = client.post("/v1/search", json=body)
    assert response.status_code == 400
    assert message in response.json()["error"]["message"]


def test_search_needs_a_json_object(client: TestClient) -> None:
    response = client.post("/v1/search", content=b"not json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_input"


@pytest.mark.parametrize("behaviour", ["ok", "error", "slow"])
def test_rerank_and_its_fallback(tmp_path: Path, minilm: MiniLMEmbedder, behaviour: str) -> None:
    with running_server(rerank_app(behaviour, delay_s=3)) as rerank_url:
        # Only the slow server is meant to time out: on a busy machine 0.5 s could cut the
        # others short too.
        settings = Settings(
            data_dir=tmp_path / "data",
            rerank_url=f"{rerank_url}/rerank",
            rerank_timeout_s=0.5 if behaviour == "slow" else 30,
        )
        with TestClient(create_app(settings, embedder=minilm)) as client:
            add(client, "a.txt", "Invoices are emailed monthly. Billing questions go to support.")
            add(client, "b.txt", "Refunds for annual plans within 30 days.")
            fused = search(client, "refunds annual billing invoices", weights={"dense": 1})
            body = search(client, "annual refunds")
    if behaviour == "ok":
        assert body["rerank"].startswith("on: tei:")
        assert "rerank" in body["blocks"][0]["scores"]
        assert body["blocks"][0]["text"].startswith("Refunds")
    else:
        assert body["rerank"].startswith("fallback: ")
        assert "timed out" in body["rerank"] or "HTTP 500" in body["rerank"]
        assert all("rerank" not in b["scores"] for b in body["blocks"])
        assert fused["blocks"]


def run_search(services: Services, query: str) -> SearchResult:
    async def go() -> SearchResult:
        return await services.retriever.search(query)

    return anyio.run(go)


def test_failed_indexing_keeps_the_previous_version_live(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    broken = OpenAIEmbedder("http://127.0.0.1:9/v1", "m", dim=384, max_retries=0, timeout_s=1)
    services = open_services(settings, embedder=broken)
    try:
        stager = services.store.blobs.stager(10**6)
        stager.write(b"Refunds within 30 days.")
        result = services.store.add(stager.finish(), filename="r.txt")
        services.indexer.index_version(result.document.id, 1)
        record = services.store.version(result.document.id, 1)
        assert record.status == "failed"
        assert record.status_reason is not None
        assert "embedding endpoint failed" in record.status_reason
        assert services.store.get(result.document.id).live_version is None
    finally:
        services.close()


def test_dense_off_still_answers_with_bm25(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    services = open_services(settings, embedder=None)
    services.retriever.embedder = None
    services.indexer.embedder = None
    services.retriever.dense_status = "dense branch off: test"
    try:
        stager = services.store.blobs.stager(10**6)
        stager.write(b"Two-factor authentication uses security keys.")
        result = services.store.add(stager.finish(), filename="s.txt")
        services.indexer.index_version(result.document.id, 1)
        found = run_search(services, "security keys")
        assert [b.doc_id for b in found.blocks] == [result.document.id]
        assert found.dense == "dense branch off: test"
        assert "dense" not in found.blocks[0].scores
    finally:
        services.close()


def test_restart_indexes_what_a_crash_left_pending(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    services = open_services(settings, embedder=minilm)
    try:
        stager = services.store.blobs.stager(10**6)
        stager.write(b"Exports are emailed and expire after 7 days.")
        result = services.store.add(stager.finish(), filename="e.txt")  # never indexed
    finally:
        services.close()
    with TestClient(create_app(settings, embedder=minilm)) as client:
        document = wait_indexed(client, result.document.id)
        assert document["versions"][0]["status"] == "ready"
        assert search(client, "export expiry")["blocks"][0]["doc_id"] == result.document.id


def test_chunks_carry_the_headings_they_sit_under(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    filler = " ".join(f"Wash your hands after visit number {i} to the shop." for i in range(12))
    faq = (
        "# Health FAQ\n\n## Does soap kill the virus?\n\n"
        f"{filler}\n\nYes: twenty seconds with ordinary bar or liquid lather destroys its "
        "outer membrane, which breaks it apart.\n\n## Other questions\n\nAsk a pharmacist."
    )
    settings = Settings(data_dir=tmp_path / "data", chunk_chars=300, chunk_overlap_chars=0)
    with TestClient(create_app(settings, embedder=minilm)) as client:
        add(client, "health.md", faq)
        body = search(client, "soap kill virus", weights={"dense": 0.0, "bm25": 1.0})
    answer = next(b for b in body["blocks"] if "lather destroys" in b["text"])
    assert "soap" not in answer["text"]  # only its heading says what it is about
    assert answer["n"] <= 2  # found through that heading all the same
    assert answer["text"] == faq[answer["start"] : answer["end"]]  # citations see only the text


FAQ = {
    "gift.md": "# Do gift cards expire?\n\nKestrel gift cards are valid for three years from "
    "the date of purchase. They can be used for several orders until the balance is spent.",
    "codes.md": "# Why is my discount code not working?\n\nVouchers from our newsletter give 5 "
    "euros off and run out after one use; a voucher cannot be combined with other offers.",
    "wrap.md": "# Can you wrap my order as a gift?\n\nGift wrapping costs 3 euros; add a gift "
    "message at checkout and we leave the price off the slip.",
    "hours.md": "Store hours\n\nOur Berlin store opens at 9:00 and closes at 18:00.",
}


def test_a_restated_question_finds_its_entry(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    question = "When does my gift voucher run out?"
    with TestClient(create_app(settings, embedder=minilm)) as client:
        for name, text in FAQ.items():
            add(client, name, text)
        without = search(client, question, weights={"dense": 0.65, "bm25": 0.35})
        found = search(client, question)
    assert without["blocks"][0]["filename"] == "codes.md"  # its text shares more words
    assert found["blocks"][0]["filename"] == "gift.md"  # its question says the same
    by_name = {b["filename"]: b["scores"] for b in found["blocks"]}
    assert by_name["hours.md"]["title"] == by_name["hours.md"]["dense"]  # asks nothing
    assert by_name["gift.md"]["title"] > by_name["codes.md"]["title"]


def test_a_read_question_is_searched_by_its_own_tokens(tmp_path: Path) -> None:
    # The answer pipeline's question value, read once, is what BM25 searches, not its text
    # tokenized again.
    settings = Settings(data_dir=tmp_path / "data")
    services = open_services(settings, embedder=None)
    services.retriever.embedder = None
    services.indexer.embedder = None
    try:
        ids = {}
        for name, text in (
            ("keys.txt", b"Security keys protect accounts."),
            ("r.txt", b"Refunds."),
        ):
            stager = services.store.blobs.stager(10**6)
            stager.write(text)
            added = services.store.add(stager.finish(), filename=name)
            services.indexer.index_version(added.document.id, 1)
            ids[name] = added.document.id
        asked = replace(read_question("security keys"), tokens=("refunds",))

        async def go() -> SearchResult:
            return await services.retriever.search(asked)

        assert [b.doc_id for b in anyio.run(go).blocks] == [ids["r.txt"]]
        assert [b.doc_id for b in run_search(services, "security keys").blocks] == [ids["keys.txt"]]
    finally:
        services.close()
