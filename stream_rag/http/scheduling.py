"""The scheduling slice `stream-rag serve` asks Linux for (EEVDF, kernel 6.12 and later).

A fair-class thread may ask for a shorter slice with `sched_setattr`'s `sched_runtime`, no
privilege needed: its virtual deadline comes sooner, so when it wakes (a token arrives from the
model) it preempts a thread running a longer slice instead of waiting for that slice to end; its
share of the CPU is unchanged. Threads inherit the slice from the thread that starts them.
"""

from __future__ import annotations

import ctypes
import os
import sys

# x86-64 and arm64 syscall numbers.
_SETATTR = {"x86_64": 314, "aarch64": 274}
_SCHED_OTHER = 0


class _SchedAttr(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_uint32),
        ("policy", ctypes.c_uint32),
        ("flags", ctypes.c_uint64),
        ("nice", ctypes.c_int32),
        ("priority", ctypes.c_uint32),
        ("runtime", ctypes.c_uint64),
        ("deadline", ctypes.c_uint64),
        ("period", ctypes.c_uint64),
        ("util_min", ctypes.c_uint32),
        ("util_max", ctypes.c_uint32),
    ]


def request_slice(slice_us: int) -> bool:
    """Ask for `slice_us` slices for the calling thread (and the threads it starts later),
    keeping its policy and nice value; False where the system does not take it."""
    number = _SETATTR.get(os.uname().machine) if sys.platform == "linux" else None
    if number is None or slice_us <= 0:
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        nice = os.getpriority(os.PRIO_PROCESS, 0)
    except OSError:
        return False
    attr = _SchedAttr(
        size=ctypes.sizeof(_SchedAttr), policy=_SCHED_OTHER, nice=nice, runtime=slice_us * 1000
    )
    return int(libc.syscall(number, 0, ctypes.byref(attr), 0)) == 0
