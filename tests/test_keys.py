"""Keys from `STREAM_RAG_KEYS_FILE` (TOML and JSON), and CLI commands that call a keyed server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from stream_rag.access.keys import hash_secret, load_keys_file
from stream_rag.cli.commands import main
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.errors import InvalidFieldError
from stream_rag.http.app import create_app

from .helpers import running_server

WIDGET = "sr_widget_secret_0123456789abcdef"
OPS = "sr_ops_secret_0123456789abcdef012"


def write_toml(path: Path) -> Path:
    path.write_text(
        f"""
[[keys]]
name = "widget"
sha256 = "{hash_secret(WIDGET)}"
scopes = ["chat"]
collections = ["support"]
rpm = 6000

[[keys]]
name = "ops"
key = "{OPS}"
scopes = ["admin"]
"""
    )
    path.chmod(0o600)  # it holds a key in the clear: others may not read it
    return path


def test_keys_file_toml_and_json(tmp_path: Path) -> None:
    keys = load_keys_file(write_toml(tmp_path / "keys.toml"))
    assert [(k.name, sorted(k.scopes), k.collections, k.rpm) for k in keys] == [
        ("widget", ["chat"], frozenset({"support"}), 6000),
        ("ops", ["admin"], None, None),
    ]
    as_json = tmp_path / "keys.json"
    as_json.write_text(json.dumps({"keys": [{"key": OPS, "scopes": ["read"], "collections": "*"}]}))
    as_json.chmod(0o600)
    [key] = load_keys_file(as_json)
    assert key.sha256 == hash_secret(OPS)
    assert key.collections is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("keys = 3", "needs a list 'keys'"),
        ("[[keys]]\nscopes = ['chat']", "needs 'key'"),
        ("[[keys]]\nkey = 'short'\nscopes = ['chat']", "needs 'key'"),
        (f"[[keys]]\nkey = '{OPS}'\nscopes = ['root']", "unknown scope 'root'"),
        (f"[[keys]]\nkey = '{OPS}'\nscopes = ['admin']\ncollections = ['a']", "admin"),
        (f"[[keys]]\nkey = '{OPS}'\nscopes = ['read']\ncollections = ['../x']", "collection"),
        ("[[keys]\n", "does not parse"),
    ],
)
def test_bad_keys_files_are_refused(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "keys.toml"
    path.write_text(content)
    path.chmod(0o600)
    with pytest.raises(InvalidFieldError, match=message):
        load_keys_file(path)


def test_a_keys_file_others_can_read_or_change_is_refused(tmp_path: Path) -> None:
    """Issue 29: a plaintext admin key at mode 0644 loaded without a word."""
    path = write_toml(tmp_path / "keys.toml")
    path.chmod(0o644)
    with pytest.raises(InvalidFieldError, match="chmod 600"):
        load_keys_file(path)
    hashed = tmp_path / "hashed.toml"
    hashed.write_text(f"[[keys]]\nsha256 = '{hash_secret(OPS)}'\nscopes = ['admin']\n")
    hashed.chmod(0o644)  # hashes only: others may read it
    assert len(load_keys_file(hashed)) == 1
    hashed.chmod(0o664)  # but not change it
    with pytest.raises(InvalidFieldError, match="writable by other users"):
        load_keys_file(hashed)


def test_a_server_takes_keys_from_the_file(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", keys_file=write_toml(tmp_path / "k.toml"))
    with TestClient(create_app(settings)) as client:
        assert client.get("/v1/documents").status_code == 401
        ops = {"Authorization": f"Bearer {OPS}"}
        assert client.get("/v1/documents", headers=ops).status_code == 200
        widget = {"Authorization": f"Bearer {WIDGET}"}
        assert client.get("/v1/documents", headers=widget).status_code == 403
        assert client.get("/v1/models", headers=widget).status_code == 200


def test_remote_cli_commands_send_the_key(
    tmp_path: Path,
    minilm: MiniLMEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = Settings(data_dir=tmp_path / "data", keys_file=write_toml(tmp_path / "k.toml"))
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "refunds.txt").write_text("Annual plans can be refunded within 30 days.")
    with running_server(create_app(settings, embedder=minilm)) as base_url:
        unused = ["--data-dir", str(tmp_path / "unused")]
        monkeypatch.delenv("STREAM_RAG_API_KEY", raising=False)
        assert main([*unused, "ingest", str(folder), "--url", base_url]) == 1
        # The server's message speaks of a header; an operator of the CLI is told where the
        # key goes.
        assert "set STREAM_RAG_API_KEY" in capsys.readouterr().out
        assert main([*unused, "ask", "refunds?", "--url", base_url]) == 1
        assert "set STREAM_RAG_API_KEY" in capsys.readouterr().err
        monkeypatch.setenv("STREAM_RAG_API_KEY", OPS)
        assert main([*unused, "ingest", str(folder), "--url", base_url]) == 0
        monkeypatch.setenv("STREAM_RAG_API_KEY", "sr_wrong_key_0123456789")
        assert main([*unused, "ask", "refunds?", "--url", base_url]) == 1
        assert "the key in STREAM_RAG_API_KEY" in capsys.readouterr().err


def test_admin_keys_manage_keys_over_http(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", keys_file=write_toml(tmp_path / "k.toml"))
    ops = {"Authorization": f"Bearer {OPS}"}
    with TestClient(create_app(settings)) as client:
        body = {"scopes": ["read"], "collections": ["support"], "name": "reader", "rpm": 60}
        widget = {"Authorization": f"Bearer {WIDGET}"}
        assert client.post("/v1/keys", json=body, headers=widget).status_code == 403
        created = client.post("/v1/keys", json=body, headers=ops)
        assert created.status_code == 201
        secret, key_id = created.json()["key"], created.json()["id"]
        reader = {"Authorization": f"Bearer {secret}"}
        assert client.get("/v1/documents", headers=reader).status_code == 200
        listed = client.get("/v1/keys", headers=ops).json()["keys"]
        assert {k["name"] for k in listed} == {"widget", "ops", "reader"}
        assert secret not in json.dumps(listed)
        assert client.get("/v1/keys", headers=reader).status_code == 403
        assert client.delete(f"/v1/keys/{key_id}", headers=ops).status_code == 200
        assert client.get("/v1/documents", headers=reader).status_code == 401  # at once
        assert client.delete(f"/v1/keys/{key_id}", headers=ops).status_code == 404
        for bad in ({"scopes": "read"}, {"scopes": ["root"]}, {"scopes": ["read"], "rpm": 0}):
            assert client.post("/v1/keys", json=bad, headers=ops).status_code == 400, bad


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("STREAM_RAG_ALLOWED_HOSTS", "api.*.example.com"),
        ("STREAM_RAG_ALLOWED_HOSTS", "a b"),
        ("STREAM_RAG_FRAME_ANCESTORS", "https://a.example; script-src *"),
        ("STREAM_RAG_FRAME_ANCESTORS", "*"),
        ("STREAM_RAG_MAX_JSON_KB", "0"),
        ("STREAM_RAG_RATE_LIMIT_RPM", "0"),
    ],
)
def test_access_settings_are_checked(name: str, value: str) -> None:
    with pytest.raises(InvalidFieldError, match=name.removeprefix("STREAM_RAG_")):
        Settings.from_env({name: value}, env_file=None)
    good = {
        "STREAM_RAG_ALLOWED_HOSTS": "rag.example.com,*.example.org,127.0.0.1",
        "STREAM_RAG_FRAME_ANCESTORS": "https://shop.example,'self'",
    }
    loaded = Settings.from_env(good, env_file=None)
    assert loaded.allowed_hosts == ("rag.example.com", "*.example.org", "127.0.0.1")
