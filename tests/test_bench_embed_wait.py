"""loadtests/bench_embed_wait.py: the wrapper's split and its refusal without a data directory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from loadtests.bench_embed_wait import PARTS, main, measured
from stream_rag.embed.backends import Vectors


def test_measured_returns_the_vector_and_records_each_part_once() -> None:
    calls: list[tuple[str, object]] = []

    def embed_here(text: str, meanwhile: object = None) -> Vectors:
        calls.append((text, meanwhile))
        return np.full(4, 0.5, dtype=np.float32)

    into: dict[str, dict[str, list[float]]] = {"now": {}}
    wrapped = measured(embed_here, into)
    first = into["now"]
    vector = wrapped("a question", meanwhile=print)
    into["now"] = {}
    wrapped("another")
    assert calls == [("a question", print), ("another", None)]
    assert vector.tolist() == [0.5] * 4
    assert sorted(first) == sorted(PARTS)
    assert all(len(first[part]) == 1 for part in PARTS)
    assert all(len(into["now"][part]) == 1 for part in PARTS)


def test_main_without_a_data_directory_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--data", str(tmp_path / "missing"), "--beir", str(tmp_path)]) == 1
    assert "no data directory" in capsys.readouterr().out
