"""A key asked for with an empty list of collections is refused, not bound to every one: `[]`
(or only blank names) made a key for `*`, the widest binding, from a request for none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from stream_rag.access.keys import load_keys_file
from stream_rag.cli.commands import main
from stream_rag.config import Settings
from stream_rag.errors import InvalidFieldError
from stream_rag.http.app import create_app

from .test_keys import OPS, write_toml


@pytest.mark.parametrize("collections", [[], [""], ["  "]])
def test_an_empty_list_of_collections_is_refused_over_http(
    tmp_path: Path, collections: list[str]
) -> None:
    settings = Settings(data_dir=tmp_path / "data", keys_file=write_toml(tmp_path / "k.toml"))
    with TestClient(create_app(settings)) as client:
        body = {"scopes": ["read"], "collections": collections}
        response = client.post("/v1/keys", json=body, headers={"Authorization": f"Bearer {OPS}"})
        assert response.status_code == 400
        assert "at least one collection" in response.json()["error"]["message"]
        listed = client.get("/v1/keys", headers={"Authorization": f"Bearer {OPS}"}).json()
        assert [k["name"] for k in listed["keys"]] == ["widget", "ops"]  # none was made


def test_a_blank_collection_is_refused_by_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--data-dir", str(tmp_path)]
    assert main([*data, "keys", "create", "--scope", "read", "--collection", ""]) == 1
    assert "at least one collection" in capsys.readouterr().err
    assert main([*data, "keys", "list", "--all", "--json"]) == 0
    assert capsys.readouterr().out.strip() == "[]"


def test_a_keys_file_entry_with_no_collections_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "keys.toml"
    path.write_text(
        '[[keys]]\nkey = "sr_0123456789abcdef0123"\nscopes = ["read"]\ncollections = []\n'
    )
    path.chmod(0o600)
    with pytest.raises(InvalidFieldError, match="at least one collection"):
        load_keys_file(path)


def test_revoking_says_why_it_cannot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file's key, a key revoked before and an unknown id were all 'no active key with id'."""
    settings = ["--data-dir", str(tmp_path)]
    assert main([*settings, "keys", "create", "--scope", "read", "--json"]) == 0
    key_id = json.loads(capsys.readouterr().out)["id"]
    assert main([*settings, "keys", "revoke", key_id]) == 0
    capsys.readouterr()
    assert main([*settings, "keys", "revoke", key_id]) == 1
    assert f"{key_id} was revoked already, at 20" in capsys.readouterr().err
    assert main([*settings, "keys", "revoke", "key_000000000000"]) == 1
    assert "no key with id 'key_000000000000'" in capsys.readouterr().err
    assert main([*settings, "keys", "revoke", "file:ops"]) == 1
    assert "remove it there" in capsys.readouterr().err


def test_revoking_a_file_key_over_http_is_a_400(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", keys_file=write_toml(tmp_path / "k.toml"))
    with TestClient(create_app(settings)) as client:
        ops = {"Authorization": f"Bearer {OPS}"}
        response = client.delete("/v1/keys/file:widget", headers=ops)
        assert response.status_code == 400
        assert "STREAM_RAG_KEYS_FILE" in response.json()["error"]["message"]
