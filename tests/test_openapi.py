"""`/openapi.json` describes exactly the routes the app serves."""

from __future__ import annotations

import re
from typing import Any

from starlette.routing import Route
from starlette.testclient import TestClient

from stream_rag.access.keys import SCOPES
from stream_rag.config import Settings
from stream_rag.http.app import create_app
from stream_rag.http.openapi import document

HINT = "stream_rag/http/openapi.py (PATHS; SCHEMAS in openapi_schemas.py for a body)"


def app_operations(settings: Settings) -> set[tuple[str, str]]:
    operations = set()
    for route in create_app(settings).routes:
        if isinstance(route, Route):
            # HEAD comes with every GET; OpenAPI needs no separate entry for it.
            for method in (route.methods or set()) - {"HEAD"}:
                operations.add((route.path, method.lower()))
    return operations


def documented_operations() -> set[tuple[str, str]]:
    return {(path, method) for path, item in document()["paths"].items() for method in item}


def test_every_route_is_documented_and_nothing_else(settings: Settings) -> None:
    served, described = app_operations(settings), documented_operations()
    missing = sorted(served - described)
    assert not missing, "\n".join(
        f"{m.upper()} {p} is served but not in /openapi.json: describe it (and its request "
        f"body and parameters) in {HINT}, then run `python -m tools.reference`"
        for p, m in missing
    )
    stale = sorted(described - served)
    assert not stale, "\n".join(
        f"{m.upper()} {p} is in {HINT} but the app has no such route: remove it there"
        for p, m in stale
    )


def test_the_document_is_consistent() -> None:
    doc = document()
    assert doc["openapi"].startswith("3.1")
    schemas = doc["components"]["schemas"]

    def refs(node: Any) -> list[str]:
        if isinstance(node, dict):
            found = [node["$ref"]] if "$ref" in node else []
            return found + [r for value in node.values() for r in refs(value)]
        if isinstance(node, list):
            return [r for value in node for r in refs(value)]
        return []

    for ref in refs(doc):
        assert ref.startswith("#/components/schemas/")
        assert ref.rsplit("/", 1)[1] in schemas, f"{ref} is used but not defined"
    for path, item in doc["paths"].items():
        template = set(re.findall(r"{(\w+)}", path))
        for method, operation in item.items():
            declared = {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
            assert declared == template, f"{method.upper()} {path}: path parameters {declared}"
            assert "responses" in operation, f"{method.upper()} {path} has no responses"


def test_the_app_serves_it(client: TestClient) -> None:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == document()


def test_a_key_request_needs_a_scope_and_a_collection_as_the_server_does() -> None:
    # POST /v1/keys refuses no scope, an unknown one, and an empty list (or name) of
    # collections (8318cd6: it was '*'); the schema allowed all three.
    key = document()["components"]["schemas"]["KeyRequest"]["properties"]
    assert key["scopes"]["minItems"] == 1
    assert key["scopes"]["items"]["enum"] == list(SCOPES)
    name, names = key["collections"]["oneOf"]
    assert name["minLength"] == 1
    assert names["minItems"] == 1
