"""Request and answer-stream ids: unique and plain, made without a system call."""

from __future__ import annotations

import os
import random
import re

import pytest

from stream_rag.http.web import EventIds
from stream_rag.request_context import new_id


@pytest.fixture
def no_system_randomness(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the system's randomness fails: on a busy server that system call let go of
    the GIL on the event loop for every request (request_context.new_id)."""

    def refused(size: int) -> bytes:
        raise AssertionError("read the system's randomness")

    monkeypatch.setattr(os, "urandom", refused)
    monkeypatch.setattr(random, "_urandom", refused)


@pytest.mark.usefixtures("no_system_randomness")
def test_ids_are_sixteen_hex_digits_and_do_not_repeat() -> None:
    ids = [new_id() for _ in range(20_000)]
    assert all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids)
    assert len(set(ids)) == len(ids)


@pytest.mark.usefixtures("no_system_randomness")
def test_each_answer_stream_numbers_its_events_under_an_id_of_its_own() -> None:
    first, second = EventIds(), EventIds()
    assert [first.next(), first.next()] == [f"{first.answer}.1", f"{first.answer}.2"]
    assert second.next() == f"{second.answer}.1"
    assert first.answer != second.answer
