from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from stream_rag.config import Settings
from stream_rag.http.app import create_app

from .conftest import store_snapshot, wait_indexed
from .helpers import make_docx, make_encrypted_pdf, make_pdf


def upload(client: TestClient, filename: str, data: bytes, **fields: str) -> dict[str, object]:
    response = client.post("/v1/documents", files={"file": (filename, data)}, data=fields)
    assert response.status_code in (200, 201), response.text
    body: dict[str, object] = response.json()
    return body


def multipart(files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    """A multipart body written byte for byte (httpx would percent-encode odd file names)."""
    boundary = "testboundary7MA4YWxk"
    out = b""
    for field, (filename, data) in files.items():
        out += (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; '
                f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'
            ).encode()
            + data
            + b"\r\n"
        )
    out += f"--{boundary}--\r\n".encode()
    return out, f"multipart/form-data; boundary={boundary}"


def doc_id_of(body: dict[str, object]) -> str:
    document = body["document"]
    assert isinstance(document, dict)
    return str(document["id"])


def test_healthz(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}


def test_same_name_different_bytes_download_their_own_bytes(client: TestClient) -> None:
    first = client.post("/v1/documents", files={"file": ("test1.txt", b"Refunds: 30 days.")})
    second = client.post("/v1/documents", files={"file": ("test1.txt", b"Refunds: 14 days.")})
    assert first.status_code == second.status_code == 201
    a, b = doc_id_of(first.json()), doc_id_of(second.json())
    assert a != b
    assert client.get(f"/v1/documents/{a}/content").content == b"Refunds: 30 days."
    assert client.get(f"/v1/documents/{b}/content").content == b"Refunds: 14 days."
    record = second.json()["version"]
    assert record["filename"] == "test1.txt"
    assert record["size"] == len(b"Refunds: 14 days.")
    assert record["status"] == "indexing"
    assert wait_indexed(client, b)["versions"][0]["status"] == "ready"
    assert len(record["sha256"]) == 64


def test_reupload_is_deduplicated(client: TestClient) -> None:
    first = client.post("/v1/documents", files={"file": ("a.md", b"# Same")})
    again = client.post("/v1/documents", files={"file": ("b.md", b"# Same")})
    assert first.status_code == 201
    assert again.status_code == 200
    assert again.json()["duplicate"] is True
    assert doc_id_of(again.json()) == doc_id_of(first.json())
    assert len(client.get("/v1/documents").json()["documents"]) == 1


def test_versions_and_downloads(client: TestClient) -> None:
    doc_id = doc_id_of(upload(client, "policy.txt", b"Version one text."))
    response = client.post(
        f"/v1/documents/{doc_id}/versions", files={"file": ("policy.txt", b"Version two text.")}
    )
    assert response.status_code == 201
    assert response.json()["version"]["version"] == 2
    assert client.get(f"/v1/documents/{doc_id}/content").content == b"Version two text."
    old = client.get(f"/v1/documents/{doc_id}/versions/1/content")
    assert old.content == b"Version one text."
    assert old.headers["content-type"] == "text/plain; charset=utf-8"
    assert (
        old.headers["etag"].strip('"')
        == client.get(f"/v1/documents/{doc_id}").json()["versions"][0]["sha256"]
    )
    document = client.get(f"/v1/documents/{doc_id}").json()
    assert [v["version"] for v in document["versions"]] == [1, 2]
    assert document["latest_version"] == 2
    chunks = client.get(f"/v1/documents/{doc_id}/versions/1/chunks").json()["chunks"]
    assert chunks[0]["text"] == "Version one text."
    same = client.post(
        f"/v1/documents/{doc_id}/versions", files={"file": ("p.txt", b"Version two text.")}
    )
    assert same.status_code == 200
    assert same.json()["duplicate"] is True


@pytest.mark.parametrize(
    ("name", "data", "media_type", "disposition"),
    [
        ("guide.pdf", make_pdf(["A PDF guide."]), "application/pdf", "inline"),
        (
            "report.docx",
            make_docx(["A DOCX report."]),
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "attachment",
        ),
        ("page.html", b"<p>An HTML page.</p>", "text/html; charset=utf-8", "attachment"),
        ("Überblick “Preise” 数据.md", b"# Preise", "text/markdown; charset=utf-8", "inline"),
    ],
)
def test_download_headers(
    client: TestClient, name: str, data: bytes, media_type: str, disposition: str
) -> None:
    doc_id = doc_id_of(upload(client, name, data))
    response = client.get(f"/v1/documents/{doc_id}/versions/1/content")
    assert response.content == data
    assert response.headers["content-type"] == media_type
    header = response.headers["content-disposition"]
    assert header.startswith(disposition + '; filename="')
    assert f"filename*=UTF-8''{quote(name, safe='')}" in header
    assert header.isascii()
    assert response.headers["x-content-type-options"] == "nosniff"


def test_list_by_collection_and_display_name(client: TestClient) -> None:
    upload(client, "a.txt", b"In default.")
    upload(client, "b.txt", b"In support.", collection="support", name="Support FAQ")
    support = client.get("/v1/documents", params={"collection": "support"}).json()["documents"]
    assert [d["name"] for d in support] == ["Support FAQ"]
    assert support[0]["collection"] == "support"
    assert len(client.get("/v1/documents").json()["documents"]) == 2


def test_delete(client: TestClient, settings: Settings) -> None:
    doc_id = doc_id_of(upload(client, "a.txt", b"Delete me."))
    deleted = client.delete(f"/v1/documents/{doc_id}").json()
    assert deleted == {"deleted": doc_id, "name": "a.txt", "versions": 1}
    assert client.get(f"/v1/documents/{doc_id}").status_code == 404
    assert client.get(f"/v1/documents/{doc_id}/versions/1/content").status_code == 404
    assert client.delete(f"/v1/documents/{doc_id}").status_code == 404
    assert not any(p.is_file() for p in (settings.data_dir / "blobs").rglob("*"))


@pytest.mark.parametrize(
    "path",
    [
        "/v1/documents/doc_nope",
        "/v1/documents/doc_nope/content",
        "/v1/documents/doc_nope/versions/1/content",
        "/nowhere",
    ],
)
def test_unknown_things_are_json_404s(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("version", ["2", "0", "x", "-1"])
def test_unknown_version_is_404(client: TestClient, version: str) -> None:
    doc_id = doc_id_of(upload(client, "a.txt", b"One version."))
    response = client.get(f"/v1/documents/{doc_id}/versions/{version}/content")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_there_is_no_lookup_by_file_name(client: TestClient) -> None:
    upload(client, "test1.txt", b"Named test1.")
    assert client.get("/v1/documents/test1.txt").status_code == 404
    assert client.get("/v1/documents/test1.txt/content").status_code == 404


BAD_UPLOADS = [
    ("empty file", {"file": ("a.txt", b"")}, 400, "empty_file"),
    ("unsupported type", {"file": ("a.exe", b"MZ...")}, 415, "unsupported_type"),
    ("pdf that is not a pdf", {"file": ("a.pdf", b"hello")}, 422, "invalid_pdf"),
    ("encrypted pdf", {"file": ("a.pdf", make_encrypted_pdf("x"))}, 422, "encrypted_pdf"),
    ("corrupt pdf", {"file": ("a.pdf", make_pdf(["x"])[:60])}, 422, "corrupt_document"),
    ("corrupt docx", {"file": ("a.docx", b"PK\x03\x04garbage")}, 422, "corrupt_document"),
    ("invalid utf-8", {"file": ("a.txt", b"caf\xe9")}, 422, "invalid_text_encoding"),
    ("path separator", {"file": ("dir/a.txt", b"x")}, 400, "invalid_filename"),
    ("backslash", {"file": ("dir\\a.txt", b"x")}, 400, "invalid_filename"),
    ("dot dot", {"file": ("..", b"x")}, 400, "invalid_filename"),
    ("control char", {"file": ("a\x01b.txt", b"x")}, 400, "invalid_filename"),
    ("300 chars", {"file": ("a" * 296 + ".txt", b"x")}, 400, "invalid_filename"),
    ("missing file field", {"other": ("a.txt", b"x")}, 400, "missing_field"),
]


@pytest.mark.parametrize(
    ("files", "status", "code"),
    [pytest.param(f, s, c, id=label) for label, f, s, c in BAD_UPLOADS],
)
def test_bad_input_is_rejected_and_changes_nothing(
    client: TestClient,
    settings: Settings,
    files: dict[str, tuple[str, bytes]],
    status: int,
    code: str,
) -> None:
    doc_id = doc_id_of(upload(client, "keep.txt", b"Existing document."))
    wait_indexed(client, doc_id)
    before = store_snapshot(settings.data_dir)
    body, content_type = multipart(files)
    headers = {"content-type": content_type}
    response = client.post("/v1/documents", content=body, headers=headers)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    assert error["message"]
    assert store_snapshot(settings.data_dir) == before
    as_version = client.post(f"/v1/documents/{doc_id}/versions", content=body, headers=headers)
    assert as_version.status_code == status
    assert store_snapshot(settings.data_dir) == before


def test_not_multipart_and_bad_collection(client: TestClient, settings: Settings) -> None:
    response = client.post("/v1/documents", json={"file": "x"})
    assert response.status_code == 400
    assert "multipart" in response.json()["error"]["message"]
    bad = client.post(
        "/v1/documents", files={"file": ("a.txt", b"x")}, data={"collection": "../etc"}
    )
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "invalid_field"
    two = client.post("/v1/documents", files=[("file", ("a.txt", b"x")), ("file", ("b.txt", b"y"))])
    assert two.status_code == 400
    assert client.get("/v1/documents").json()["documents"] == []


def test_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", max_upload_mb=0.25)
    with TestClient(create_app(settings)) as client:
        big = b"a" * (300 * 1024)
        response = client.post("/v1/documents", files={"file": ("big.txt", big)})
        assert response.status_code == 413
        assert response.json()["error"]["code"] == "file_too_large"
        assert "STREAM_RAG_MAX_UPLOAD_MB" in response.json()["error"]["message"]
        fits = client.post("/v1/documents", files={"file": ("ok.txt", b"b" * (200 * 1024))})
        assert fits.status_code == 201
    assert not list((settings.data_dir / "tmp").iterdir())
