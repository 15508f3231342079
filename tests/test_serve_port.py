"""`stream-rag serve` on a port another process listens on."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from stream_rag.cli.commands import main

from .helpers import free_port


def test_a_port_in_use_is_one_line_before_anything_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    data = tmp_path / "data"
    try:
        code = main(
            [
                "--data-dir",
                str(data),
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--sample",
            ]
        )
    finally:
        taken.close()
    err = capsys.readouterr().err
    assert code == 1, err
    assert f"127.0.0.1:{port} is in use" in err, err
    assert "Traceback" not in err
    # Nothing was loaded or stored first: the sample knowledge base was not ingested.
    assert "sample knowledge base" not in err
    assert not (data / "blobs").exists() or not any((data / "blobs").iterdir())


def test_an_address_not_of_this_machine_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STREAM_RAG_ALLOW_ANONYMOUS", "1")  # not loopback: keyless on purpose
    # 192.0.2.1 is TEST-NET-1 (RFC 5737): never this machine's, and a literal, so no lookup.
    port = str(free_port())
    code = main(["--data-dir", str(tmp_path), "serve", "--host", "192.0.2.1", "--port", port])
    err = capsys.readouterr().err
    assert code == 1, err
    assert f"192.0.2.1:{port} cannot be bound" in err, err
    assert "Traceback" not in err
