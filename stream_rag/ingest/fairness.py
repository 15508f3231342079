"""Extraction slots shared fairly: uploads wait per tenant (a key and a collection), and a
freed slot goes to the next tenant in turn, so one tenant's 42 heavy PDFs cannot make
another's small file wait for all of them (anyio's CapacityLimiter serves in arrival order)."""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager

import anyio


class FairSlots:
    """`capacity` holders at once; waiters queue per tenant, tenants take turns. In memory,
    per process, on one event loop."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.busy = 0
        # Tenants in turn order, each with its waiters in arrival order.
        self._waiting: OrderedDict[Hashable, deque[anyio.Event]] = OrderedDict()

    @property
    def waiting(self) -> int:
        return sum(len(q) for q in self._waiting.values())

    @asynccontextmanager
    async def slot(self, tenant: Hashable) -> AsyncIterator[None]:
        if self.busy < self.capacity and not self._waiting:
            self.busy += 1
        else:
            granted = anyio.Event()
            self._waiting.setdefault(tenant, deque()).append(granted)
            try:
                await granted.wait()
            except BaseException:
                if granted.is_set():
                    self._release()  # handed over as it was cancelled: pass it on
                else:
                    self._forget(tenant, granted)
                raise
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        """Hand the slot to the oldest waiter of the tenant whose turn it is."""
        if not self._waiting:
            self.busy -= 1
            return
        tenant, queue = next(iter(self._waiting.items()))
        granted = queue.popleft()
        del self._waiting[tenant]
        if queue:
            self._waiting[tenant] = queue  # to the back of the line of tenants
        granted.set()

    def _forget(self, tenant: Hashable, granted: anyio.Event) -> None:
        queue = self._waiting.get(tenant)
        if queue is None:
            return
        queue.remove(granted)
        if not queue:
            del self._waiting[tenant]
