"""Clients that leave in the middle of their request, against a real uvicorn server: the
request ends as the client's doing (4xx), never as a server error."""

from __future__ import annotations

import re
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from stream_rag.config import Settings
from stream_rag.http.app import create_app

from .helpers import HANG_GUARD_S, HTTP_GUARD_S, running_server


def statuses(base_url: str, route: str) -> dict[str, float]:
    """The request counts by status that /metrics reports for `route`."""
    text = httpx.get(f"{base_url}/metrics", timeout=HTTP_GUARD_S).text
    labels = rf'method="POST",route="{re.escape(route)}",status="(\d+)"'
    pattern = rf"stream_rag_http_requests_total\{{{labels}\}} (\S+)"
    return {status: float(count) for status, count in re.findall(pattern, text)}


@pytest.mark.parametrize("route", ["/v1/search", "/v1/chat", "/v1/chat/completions"])
def test_a_client_gone_mid_json_body_is_not_a_server_error(tmp_path: Path, route: str) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    with running_server(create_app(settings)) as base_url:
        parts = urlsplit(base_url)
        assert parts.hostname is not None
        assert parts.port is not None
        with socket.create_connection((parts.hostname, parts.port)) as sock:
            sock.sendall(
                f"POST {route} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n".encode()
                + b'{"query": "ref'
            )
        deadline = time.monotonic() + HANG_GUARD_S  # against a hang only
        while not (seen := statuses(base_url, route)):
            assert time.monotonic() < deadline, "the request never ended"
            time.sleep(0.02)
        assert seen == {"400": 1.0}
