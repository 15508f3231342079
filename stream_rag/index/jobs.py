"""The indexing queue: durable jobs in the store, several workers, fair batches.

A version's job row is written in the transaction that stores the version, so it survives
any crash; it goes when the version is `ready` or `failed`. Workers take turns over the
collections with queued versions, and within one over its versions, one batch at a time (round
robin), so a one-chunk document waits for at most one batch of each other collection, never
for a whole large document nor for every version of a collection uploading many. An attempt
is counted in the row *before* the work starts: a version that kills the process, or fails,
`max_attempts` times ends `failed` with the reason instead of being tried again at every start.

Several processes on one database (replicas, `stream-rag worker`) share the queue through
leases: a process claims a version before its first batch (`claim`, under the store's write
lock), renews the lease every batch, and a version whose lease ran out (its process died) is
claimed by the next process that polls (`claimable`). docs/decisions/job-leases.md.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time
from collections import OrderedDict, deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import anyio
import anyio.to_thread

from ..errors import NotFoundError
from ..store.documents import DocumentStore
from .indexing import DEFAULT_BATCH, Indexer, VersionJob, failure_reason

log = logging.getLogger("stream_rag")
Key = tuple[str, int]


@dataclass(frozen=True, slots=True)
class Lease:
    """This process's claim on the versions it indexes: `owner`, renewed `seconds` ahead."""

    seconds: float
    owner: str = field(
        default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
    )


def claim(store: DocumentStore, key: Key, lease: Lease) -> bool:
    """Take (or renew) the lease on `key`; False if another live process holds it or the
    version is no longer queued."""
    now = time.time()
    with store.transaction() as db:
        row = db.execute(
            "SELECT lease_owner, lease_until FROM jobs WHERE doc_id = ? AND version = ?", key
        ).fetchone()
        if row is None:
            return False
        owner, until = row[0], row[1]
        if owner is not None and owner != lease.owner and until is not None and until > now:
            return False
        db.execute(
            "UPDATE jobs SET lease_owner = ?, lease_until = ? WHERE doc_id = ? AND version = ?",
            (lease.owner, now + lease.seconds, *key),
        )
        return True


def release(store: DocumentStore, key: Key, lease: Lease) -> None:
    """Give a version back to the queue now (a clean stop), not when the lease runs out."""
    with store.transaction() as db:
        db.execute(
            "UPDATE jobs SET lease_owner = NULL, lease_until = NULL "
            "WHERE doc_id = ? AND version = ? AND lease_owner = ?",
            (*key, lease.owner),
        )


def claimable(store: DocumentStore, limit: int = 100) -> list[Key]:
    """Queued versions no live process holds, oldest first (what a polling worker takes)."""
    rows = store.connection().execute(
        "SELECT doc_id, version FROM jobs WHERE lease_until IS NULL OR lease_until < ? "
        "ORDER BY created_at, doc_id, version LIMIT ?",
        (time.time(), limit),
    )
    return [(str(r[0]), int(r[1])) for r in rows]


def start_attempt(store: DocumentStore, key: Key, max_attempts: int) -> str | None:
    """Count an attempt at `key` before making it. Returns the reason it must not be made
    (it already used its attempts; the version is then marked `failed`), else None."""
    doc_id, version = key
    with store.transaction() as db:
        row = db.execute(
            "SELECT attempts, last_error FROM jobs WHERE doc_id = ? AND version = ?", key
        ).fetchone()
        if row is None:
            return "the version is no longer queued"
        attempts, last_error = int(row[0]), row[1]
        if attempts < max_attempts:
            db.execute(
                "UPDATE jobs SET attempts = attempts + 1 WHERE doc_id = ? AND version = ?", key
            )
            return None
    reason = (
        f"indexing gave up after {attempts} attempts: "
        f"{last_error or 'the process stopped while indexing this version'}"
    )
    store.set_failed(doc_id, version, reason)
    return reason


def record_error(store: DocumentStore, key: Key, reason: str) -> None:
    with store.transaction() as db:
        db.execute(
            "UPDATE jobs SET last_error = ? WHERE doc_id = ? AND version = ?", (reason, *key)
        )


def refund_attempt(store: DocumentStore, key: Key) -> None:
    """An attempt interrupted by a clean shutdown does not count against the version."""
    with store.transaction() as db:
        db.execute(
            "UPDATE jobs SET attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END "
            "WHERE doc_id = ? AND version = ?",
            key,
        )


def queued(store: DocumentStore) -> int:
    return int(store.connection().execute("SELECT count(*) FROM jobs").fetchone()[0])


class TenantTurns:
    """Turns over tenants, round robin, and within a tenant over its versions in order: one
    tenant's 42 versions take one turn in each round, not 42 of them."""

    def __init__(self) -> None:
        self._queues: OrderedDict[Hashable, deque[Key | VersionJob]] = OrderedDict()

    def __bool__(self) -> bool:
        return bool(self._queues)

    def push(self, tenant: Hashable, turn: Key | VersionJob) -> None:
        self._queues.setdefault(tenant, deque()).append(turn)

    def pop(self) -> tuple[Hashable, Key | VersionJob]:
        tenant, queue = next(iter(self._queues.items()))
        turn = queue.popleft()
        del self._queues[tenant]
        if queue:
            self._queues[tenant] = queue  # to the back of the line of tenants
        return tenant, turn


class IndexQueue:
    """`workers` tasks index the queued versions off the event loop, batch by batch."""

    def __init__(
        self,
        indexer: Indexer,
        *,
        workers: int = 2,
        batch: int = DEFAULT_BATCH,
        max_attempts: int = 2,
        lease: Lease | None = None,
    ) -> None:
        self.indexer = indexer
        self.workers = workers
        self.batch = batch
        self.max_attempts = max_attempts
        # Set when other processes share the queue (PostgreSQL): versions are claimed first.
        self.lease = lease
        # Versions not started yet (keys) and started ones between batches, in turn order
        # per tenant (a collection), the tenants taking turns.
        self._turns = TenantTurns()
        self._known: set[Key] = set()
        self._busy = 0
        self._wake = anyio.Event()
        self._idle = anyio.Event()
        self._idle.set()
        self._closed = False
        self._stopped = anyio.Event()
        # Versions submitted so far, and an event set by each submission (`submitted_since`).
        self.submissions = 0
        self._submitted = anyio.Event()

    @property
    def depth(self) -> int:
        """Versions queued or being indexed."""
        return len(self._known)

    def __contains__(self, key: object) -> bool:
        """Whether the version `(doc_id, version)` is queued or being indexed."""
        return key in self._known

    def submit(self, doc_id: str, version: int, tenant: Hashable = None) -> None:
        """Take a version whose job row exists into the rotation (its job is durable already).
        Tenants (collections; None for versions found at start) take turns."""
        key = (doc_id, version)
        if key in self._known or self._closed:
            return
        self._known.add(key)
        self._turns.push(tenant, key)
        self.submissions += 1
        self._submitted.set()
        if self._idle.is_set():
            self._idle = anyio.Event()
        self._wake.set()

    def submit_all(self, jobs: Sequence[Key]) -> None:
        for doc_id, version in jobs:
            self.submit(doc_id, version)

    async def run(self) -> None:
        """Run the workers until `close()`; each stops at a batch boundary."""
        async with anyio.create_task_group() as group:
            for _ in range(self.workers):
                group.start_soon(self._worker)

    async def poll(self, every_s: float) -> None:
        """Until `close()`: every `every_s`, take the queued versions no process holds (uploaded
        on another replica, or left by a process that died) into the rotation."""
        store = self.indexer.store
        while not self._closed:
            for key in await anyio.to_thread.run_sync(claimable, store):
                self.submit(*key)
            with anyio.move_on_after(every_s):
                await self._stopped.wait()

    async def join(self) -> None:
        """Wait until every submitted version is `ready` or `failed`."""
        await self._idle.wait()

    async def submitted_since(self, count: int) -> None:
        """Wait until a version is submitted after the first `count` (`submissions`)."""
        while self.submissions == count:
            if self._submitted.is_set():
                self._submitted = anyio.Event()
            await self._submitted.wait()

    def close(self) -> None:
        """Stop at the next batch boundary: a version in hand keeps its job row (and gets
        its attempt back) and resumes on the next start."""
        self._closed = True
        self._stopped.set()
        self._wake.set()

    def stop(self) -> None:
        """The SIGTERM hook (lifecycle.Drain): the same as `close`."""
        self.close()

    async def _worker(self) -> None:
        while not self._closed:
            if not self._turns:
                self._wake = anyio.Event() if self._wake.is_set() else self._wake
                await self._wake.wait()
                continue
            tenant, turn = self._turns.pop()
            self._busy += 1
            try:
                job = await anyio.to_thread.run_sync(self._turn, turn)
            finally:
                self._busy -= 1
            key = (turn.doc_id, turn.version) if isinstance(turn, VersionJob) else turn
            if job is None:
                self._known.discard(key)
            elif self._closed:
                await anyio.to_thread.run_sync(refund_attempt, self.indexer.store, key)
                if self.lease is not None:
                    await anyio.to_thread.run_sync(release, self.indexer.store, key, self.lease)
            else:
                self._turns.push(tenant, job)
            if not self._known and not self._busy:
                self._idle.set()
            self._wake.set()  # another worker may wait for work this turn put back

    def _turn(self, turn: Key | VersionJob) -> Key | VersionJob | None:
        """One batch of one version (blocking). Returns what comes next for it: the job to
        continue, the key to start again after a failure, or None when it is finished."""
        store, indexer = self.indexer.store, self.indexer
        key = (turn.doc_id, turn.version) if isinstance(turn, VersionJob) else turn
        try:
            if isinstance(turn, VersionJob) and turn.live:  # searchable: warm-up turns left
                return None if indexer.warm_step(turn) else turn
            if self.lease is not None and not claim(store, key, self.lease):
                return None  # another process indexes it (or it is done)
            if isinstance(turn, VersionJob):
                job = turn
            else:
                if start_attempt(store, key, self.max_attempts) is not None:
                    indexer.drop_failed(*key)
                    return None
                job = indexer.begin(*key)
            if not indexer.step(job, self.batch):
                return job
            indexer.finish(job)
            return job if job.warm else None
        except NotFoundError:
            return None  # deleted meanwhile; its points go with the delete
        except Exception as exc:
            reason = failure_reason(exc, *key)
            record_error(store, key, reason)
            log.warning("indexing %s v%d failed: %s", key[0], key[1], reason)
            return key  # its next turn counts a new attempt, or gives up
