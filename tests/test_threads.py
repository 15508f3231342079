"""The worker threads that prepare answers: context variables and priority."""

from __future__ import annotations

import contextvars
import os
import sys
import threading

import pytest

from stream_rag.threads import background_threads, lower_priority, run_in

pytestmark = pytest.mark.anyio

asked: contextvars.ContextVar[str] = contextvars.ContextVar("asked", default="")


def _nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


async def test_a_call_sees_the_callers_context_variables() -> None:
    pool = background_threads(1, 0, "test-worker")
    try:
        asked.set("refunds")
        name, seen = await run_in(pool, lambda: (threading.current_thread().name, asked.get()))
    finally:
        pool.shutdown()
    assert name.startswith("test-worker")
    assert seen == "refunds"


async def test_errors_reach_the_caller() -> None:
    pool = background_threads(1, 0, "test-worker")
    try:
        with pytest.raises(ZeroDivisionError):
            await run_in(pool, lambda: 1 / 0)
    finally:
        pool.shutdown()


@pytest.mark.skipif(sys.platform != "linux", reason="per-thread nice values are Linux's")
async def test_threads_run_that_much_nicer_than_the_main_thread_and_no_more() -> None:
    base = os.getpriority(os.PRIO_PROCESS, os.getpid())
    if base > 19 - 3:
        pytest.skip("the test process is already at the lowest priority")
    pool = background_threads(2, 3, "test-worker")

    def nested() -> tuple[int, int]:
        # A pool started from one of these threads inherits its value: not lowered twice.
        inner = background_threads(1, 3, "test-inner")
        try:
            return _nice(), inner.submit(_nice).result()
        finally:
            inner.shutdown()

    try:
        assert await run_in(pool, nested) == (base + 3, base + 3)
    finally:
        pool.shutdown()
    assert os.getpriority(os.PRIO_PROCESS, os.getpid()) == base  # the caller's is unchanged
    assert not lower_priority(0)
