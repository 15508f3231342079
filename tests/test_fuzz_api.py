"""Fuzz `/v1/*` from the OpenAPI document: whatever arrives, the answer is never a 5xx, an
error is a JSON `{"error": {"code", "message"}}`, and a stream ends with `done` or `error`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote, urlencode

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.http.openapi import document
from stream_rag.sse import EventStreamParser

from .conftest import wait_indexed

FUZZ = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
# Creating keys would put every later request of the module's app behind a key (401s).
NOT_FUZZED = {("/v1/keys", "post")}
JSON_OPERATIONS = [
    (path, method)
    for path, item in document()["paths"].items()
    for method, operation in item.items()
    if "application/json" in operation.get("requestBody", {}).get("content", {})
    and (path, method) not in NOT_FUZZED
]


def resolve(node: Any) -> Any:
    """The schema with every local `$ref` replaced by its target."""
    schemas = document()["components"]["schemas"]
    if isinstance(node, dict):
        if "$ref" in node:
            return resolve(schemas[node["$ref"].rsplit("/", 1)[1]])
        return {key: resolve(value) for key, value in node.items()}
    if isinstance(node, list):
        return [resolve(value) for value in node]
    return node


def body_schema(path: str, method: str) -> dict[str, Any]:
    operation = document()["paths"][path][method]
    schema: dict[str, Any] = resolve(operation["requestBody"]["content"]["application/json"])
    return dict(schema["schema"])


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid under `schema`, for the JSON Schema subset openapi.py uses.
    (hypothesis-jsonschema 0.23 does not run on current Hypothesis.)"""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "oneOf" in schema:
        return st.one_of([from_schema(s) for s in schema["oneOf"]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([from_schema({**schema, "type": k}) for k in kind])
    if kind == "object":
        properties = schema.get("properties", {})
        required = set(schema.get("required", ()))
        return st.fixed_dictionaries(
            {k: from_schema(v) for k, v in properties.items() if k in required},
            optional={k: from_schema(v) for k, v in properties.items() if k not in required},
        )
    if kind == "array":
        items = from_schema(schema.get("items", {}))
        return st.lists(items, min_size=schema.get("minItems", 0), max_size=4)
    if kind == "string":
        if "pattern" in schema:
            return st.from_regex(schema["pattern"], fullmatch=True)
        return st.text(min_size=schema.get("minLength", 0), max_size=schema.get("maxLength", 40))
    if kind == "integer":
        return st.integers(schema.get("minimum"), schema.get("maximum"))
    if kind == "number":
        return st.floats(schema.get("minimum"), schema.get("maximum"), allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    return json_values


# Any code point, lone surrogates included (Hypothesis leaves them out by default).
any_text = st.text(st.characters(exclude_categories=()), max_size=20)
# Values that broke handlers before: a fuzz dictionary, as schemathesis and AFL keep one.
NASTY: list[Any] = ["\ud800", "a\udfffb", "²", "١٢", "", " ", "\x00", 1e308, -1e308, 10**400, -1, 0]
leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | any_text
    | st.sampled_from(NASTY)
)
json_values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def bodies(schema: dict[str, Any]) -> st.SearchStrategy[bytes]:
    """Valid bodies, valid bodies with one field replaced by any JSON, any JSON, any bytes."""
    valid = from_schema(schema)
    fields = sorted(schema.get("properties", {}))
    broken = st.tuples(valid, st.sampled_from(fields), json_values).map(
        lambda t: {**t[0], t[1]: t[2]}
    )
    as_json = (valid | broken | json_values).map(lambda v: json.dumps(v).encode())
    deep = st.integers(1, 100_000).map(lambda n: b"[" * n + b"]" * n)
    return as_json | deep | st.binary(max_size=64)


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, minilm: MiniLMEmbedder) -> Iterator[TestClient]:
    data_dir: Path = tmp_path_factory.mktemp("fuzz") / "data"
    app = create_app(Settings(data_dir=data_dir), embedder=minilm)
    with TestClient(app, raise_server_exceptions=False) as client:
        text = b"Refunds for annual plans are possible within 30 days of purchase."
        body = client.post("/v1/documents", files={"file": ("policy.txt", text)}).json()
        wait_indexed(client, body["document"]["id"])
        yield client


class Reply(Protocol):
    @property
    def status_code(self) -> int: ...

    @property
    def text(self) -> str: ...

    @property
    def headers(self) -> Any: ...

    def json(self) -> Any: ...


def check(response: Reply) -> None:
    assert response.status_code < 500, (response.status_code, response.text[:500])
    if response.status_code >= 400:
        error = response.json()["error"]
        assert isinstance(error["code"], str)
        assert isinstance(error["message"], str)
    elif response.headers.get("content-type", "").startswith("text/event-stream"):
        text = response.text
        if "chat.completion.chunk" in text:
            assert text.rstrip().endswith("data: [DONE]")
        else:
            assert EventStreamParser().feed(text)[-1].event in ("done", "error"), text[-500:]


@pytest.mark.parametrize(("path", "method"), JSON_OPERATIONS)
def test_json_bodies(api: TestClient, path: str, method: str) -> None:
    @FUZZ
    @given(body=bodies(body_schema(path, method)))
    def run(body: bytes) -> None:
        headers = {"content-type": "application/json"}
        check(api.request(method.upper(), path, content=body, headers=headers))

    run()


@FUZZ
@given(
    q=any_text,
    top_k=st.none() | any_text | st.integers(-5, 200).map(str) | st.sampled_from(["²", "٣"]),
    collection=st.none() | st.text(max_size=10),
)
@example(q="a\ud800b", top_k="²", collection="\udfff")
def test_eventsource_query(api: TestClient, q: str, top_k: str | None, collection: str) -> None:
    params = {"q": q, "top_k": top_k, "collection": collection}
    # Encoded here, not by the client: httpx cannot encode a lone surrogate, but a raw query
    # string can carry its bytes (%ED%A0%80), and the server must answer those with a 4xx.
    query = urlencode({k: v for k, v in params.items() if v is not None}, errors="surrogatepass")
    check(api.get(f"/v1/chat?{query}"))


@FUZZ
@given(
    doc_id=st.text(min_size=1, max_size=20),
    n=st.text(min_size=1, max_size=12),
    tail=st.sampled_from(["", "/content", "/chunks"]),
    collection=st.text(max_size=10),
)
def test_paths_and_parameters(
    api: TestClient, doc_id: str, n: str, tail: str, collection: str
) -> None:
    check(api.get(f"/v1/documents/{quote(doc_id, safe='')}"))
    check(api.get(f"/v1/documents/{quote(doc_id, safe='')}/versions/{quote(n, safe='')}{tail}"))
    check(api.get("/v1/documents", params={"collection": collection}))
    check(api.delete(f"/v1/documents/{quote(doc_id, safe='')}"))


@FUZZ
@given(
    content_type=st.sampled_from(
        ["multipart/form-data; boundary=b0", "multipart/form-data", "text/plain", ""]
    ),
    body=st.binary(max_size=200),
    filename=st.text(max_size=20),
)
def test_uploads(api: TestClient, content_type: str, body: bytes, filename: str) -> None:
    check(api.post("/v1/documents", content=body, headers={"content-type": content_type}))
    framed = (
        b'--b0\r\nContent-Disposition: form-data; name="file"; filename="'
        + filename.encode("utf-8", "surrogatepass")
        + b'"\r\n\r\n'
        + body
        + b"\r\n--b0--\r\n"
    )
    headers = {"content-type": "multipart/form-data; boundary=b0"}
    check(api.post("/v1/documents", content=framed, headers=headers))
