from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from stream_rag.config import Settings, usable_cpus
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
        ("STREAM_RAG_SCHED_SLICE_US", "50"),
        ("STREAM_RAG_SCHED_SLICE_US", "200000"),
        ("STREAM_RAG_HNSW_JOURNAL_MB", "0"),
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


@pytest.mark.skipif(
    sys.platform != "linux" or os.uname().machine not in ("x86_64", "aarch64"),
    reason="a Linux system call",
)
def test_a_thread_gets_the_slice_it_asks_for() -> None:
    import ctypes
    import threading

    from stream_rag.http.scheduling import _SchedAttr, request_slice

    got: list[tuple[bool, int, int]] = []

    def ask() -> None:  # in a thread of its own, so that the test's thread keeps its slice
        os.setpriority(os.PRIO_PROCESS, 0, 3)
        taken = request_slice(300)
        attr = _SchedAttr()
        libc = ctypes.CDLL(None, use_errno=True)
        getattr_nr = {"x86_64": 315, "aarch64": 275}[os.uname().machine]
        libc.syscall(getattr_nr, 0, ctypes.byref(attr), ctypes.sizeof(attr), 0)
        got.append((taken, attr.runtime, os.getpriority(os.PRIO_PROCESS, 0)))

    thread = threading.Thread(target=ask)
    thread.start()
    thread.join()
    taken, runtime, nice = got[0]
    assert taken
    assert nice == 3  # the nice value is kept
    major, minor = (
        int("".join(c for c in p if c.isdigit()) or 0) for p in os.uname().release.split(".")[:2]
    )
    if (major, minor) >= (6, 12):  # custom slices came in 6.12
        assert runtime == 300_000
    assert not request_slice(0)


def test_full_collections_wait_for_an_idle_server() -> None:
    import gc

    from stream_rag.http.collector import IdleCollector

    collector = IdleCollector(due=3, limit=6)
    saved = gc.get_threshold()
    fulls: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            fulls.append(1)

    collector.install()
    gc.callbacks.append(count)
    try:
        assert gc.get_threshold()[:2] == saved[:2]
        assert gc.get_threshold()[2] > 10**6
        gc.collect()
        fulls.clear()
        for _ in range(3):
            gc.collect(1)  # each counts towards the next full collection
        assert not collector.tick(busy=True)  # due, but the server is busy
        assert collector.tick(busy=False)
        assert fulls == [1]
        assert not collector.tick(busy=False)  # nothing due since
        for _ in range(6):
            gc.collect(1)
        assert collector.tick(busy=True)
        assert fulls == [1, 1]
    finally:
        gc.callbacks.remove(count)
        collector.uninstall()
    assert gc.get_threshold() == saved


def test_the_server_collects_when_idle_only_when_told_to(tmp_path: Path) -> None:
    from starlette.applications import Starlette

    from stream_rag.http.serving import build_server

    app = Starlette()
    app.state.drain = Drain(1.0)
    before = sys.getswitchinterval()
    try:
        assert build_server(app, Settings(data_dir=tmp_path, gc_idle=True)).collector is not None
        assert build_server(app, Settings(data_dir=tmp_path)).collector is None
    finally:
        sys.setswitchinterval(before)


def test_cpu_workers_default_leaves_the_event_loop_a_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    assert usable_cpus() >= 1
    assert Settings().cpu_worker_threads == max(1, usable_cpus() - 1)
    monkeypatch.setattr("stream_rag.config.usable_cpus", lambda: 8)
    assert Settings().cpu_worker_threads == 7
    monkeypatch.setattr("stream_rag.config.usable_cpus", lambda: 1)
    assert Settings().cpu_worker_threads == 1
    assert Settings(cpu_workers=3).cpu_worker_threads == 3
    env = {"STREAM_RAG_CPU_WORKERS": "2"}
    assert Settings.from_env(environ=env, env_file=None).cpu_worker_threads == 2
    with pytest.raises(InvalidFieldError, match="CPU_WORKERS"):
        Settings(cpu_workers=-1)
