from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stream_rag.config import Settings
from stream_rag.errors import InvalidFieldError
from stream_rag.lifecycle import Drain


def test_defaults() -> None:
    settings = Settings.from_env(environ={}, env_file=None)
    assert settings.data_dir == Path("stream_rag_data")
    assert settings.max_upload_mb == 50
    assert settings.max_upload_bytes == 50 * 1024 * 1024


def test_environment_beats_env_file_and_overrides_beat_both(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("STREAM_RAG_PORT=9000\nSTREAM_RAG_DATA_DIR=/from/file\n")
    settings = Settings.from_env(environ={"STREAM_RAG_PORT": "9100"}, env_file=env_file)
    assert settings.port == 9100
    assert settings.data_dir == Path("/from/file")
    overridden = Settings.from_env(environ={}, env_file=env_file, data_dir=tmp_path)
    assert overridden.data_dir == tmp_path


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("STREAM_RAG_PORT", "eighty"),
        ("STREAM_RAG_PORT", "70000"),
        ("STREAM_RAG_MAX_UPLOAD_MB", "0"),
        ("STREAM_RAG_CHUNK_CHARS", "10"),
        ("STREAM_RAG_BODY_TIMEOUT_S", "0"),
        ("STREAM_RAG_BODY_MIN_KB_S", "-1"),
        ("STREAM_RAG_GIL_SWITCH_MS", "0"),
    ],
)
def test_bad_values_name_the_variable(name: str, value: str) -> None:
    with pytest.raises(InvalidFieldError, match=name):
        Settings.from_env(environ={name: value}, env_file=None)


def test_the_server_sets_the_gil_switch_interval(tmp_path: Path) -> None:
    from starlette.applications import Starlette

    from stream_rag.http.serving import build_server

    before = sys.getswitchinterval()
    try:
        app = Starlette()
        app.state.drain = Drain(1.0)
        settings = Settings(data_dir=tmp_path, gil_switch_ms=2.5)
        build_server(app, settings)
        assert sys.getswitchinterval() == pytest.approx(0.0025)
    finally:
        sys.setswitchinterval(before)


def test_the_server_freezes_what_start_up_left_alive(tmp_path: Path) -> None:
    import gc

    from starlette.applications import Starlette

    from stream_rag.http.serving import build_server, freeze_startup_objects

    app = Starlette()
    app.state.drain = Drain(1.0)
    before = sys.getswitchinterval()  # build_server sets it
    try:
        assert build_server(app, Settings(data_dir=tmp_path)).freeze_after_startup
        off = Settings(data_dir=tmp_path, gc_freeze=False)
        assert not build_server(app, off).freeze_after_startup
    finally:
        sys.setswitchinterval(before)
    alive: list[object] = [{}]
    alive.append(alive)  # a cycle: tracked by the GC
    try:
        assert freeze_startup_objects() > 0
        # Frozen objects are in no generation, so no collection scans them.
        assert not any(o is alive for o in gc.get_objects())
    finally:
        gc.unfreeze()
    assert any(o is alive for o in gc.get_objects())
