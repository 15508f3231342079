"""Worker threads for the work a request does before its answer streams, run at a lower
scheduling priority than the event loop.

At a burst of new questions their retrieval and checks (worker threads) and the sentences of
answers already streaming (the event loop) want the CPUs at once; when both are ready to run,
the kernel should run the loop, which delivers sentences and hands the workers their next job.
A Linux thread may raise its own nice value without privilege (`setpriority` on its thread
id), but not lower it back, so these threads do that work only (docs/decisions.md).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

R = TypeVar("R")


def lower_priority(nice: int) -> bool:
    """Give the calling thread a nice value `nice` above the main thread's (Linux, where it is
    per thread; a thread inherits its creator's, so a pool started from one of these threads
    is not lowered twice); False where it cannot."""
    if nice <= 0 or sys.platform != "linux":
        return False
    try:
        tid = threading.get_native_id()
        target = min(19, os.getpriority(os.PRIO_PROCESS, os.getpid()) + nice)
        if os.getpriority(os.PRIO_PROCESS, tid) < target:
            os.setpriority(os.PRIO_PROCESS, tid, target)
    except OSError:
        return False
    return True


def background_threads(workers: int, nice: int, name: str) -> ThreadPoolExecutor:
    """`workers` threads, each at `nice` more than the thread that starts it."""
    return ThreadPoolExecutor(
        max_workers=workers, thread_name_prefix=name, initializer=lower_priority, initargs=(nice,)
    )


async def run_in(pool: ThreadPoolExecutor, func: Callable[..., R], *args: Any) -> R:
    """`func(*args)` in one of `pool`'s threads, with the caller's context variables (as
    `anyio.to_thread.run_sync`); a cancelled caller leaves a started call to finish."""
    call = functools.partial(contextvars.copy_context().run, func, *args)
    return await asyncio.get_running_loop().run_in_executor(pool, call)
