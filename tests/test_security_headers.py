"""Every response carries the browser protections the docs promise, the Host refusal included,
against a real uvicorn server."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from stream_rag.config import Settings
from stream_rag.http.app import create_app

from .helpers import HTTP_GUARD_S, running_server

PROTECTIONS = ("content-security-policy", "x-content-type-options", "x-frame-options")


@pytest.mark.parametrize(
    ("path", "host", "allowed", "status"),
    [
        ("/healthz", "127.0.0.1", (), 200),
        ("/v1/nothing", "127.0.0.1", (), 404),
        ("/healthz", "attacker.example", (), 400),  # a DNS-rebinding page's request
        ("/openapi.json", "attacker.example", ("rag.example",), 400),  # ALLOWED_HOSTS
        ("/healthz", "10.0.0.7", ("rag.example",), 200),  # a probe by IP
        ("/healthz", "rag.example", ("rag.example",), 200),
    ],
)
def test_every_response_carries_the_protections(
    tmp_path: Path, path: str, host: str, allowed: tuple[str, ...], status: int
) -> None:
    settings = Settings(data_dir=tmp_path / "data", allowed_hosts=allowed)
    with running_server(create_app(settings)) as base_url:
        response = httpx.get(base_url + path, headers={"Host": host}, timeout=HTTP_GUARD_S)
    assert response.status_code == status
    assert {name: name in response.headers for name in PROTECTIONS} == dict.fromkeys(
        PROTECTIONS, True
    )
    assert response.headers["x-content-type-options"] == "nosniff"
