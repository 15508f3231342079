"""`stream-rag worker`: index queued versions apart from serving, beside any number of replicas
on one PostgreSQL database and one Qdrant server (leases in index/jobs.py)."""

from __future__ import annotations

import argparse
import logging
import signal

import anyio
import anyio.to_thread

from ..config import Settings
from ..errors import InvalidFieldError
from ..index.doctor import startup_check
from ..index.jobs import IndexQueue, Lease
from ..services import Services, open_services

log = logging.getLogger("stream_rag")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    commands.add_parser(
        "worker",
        help="index queued documents apart from serving (PostgreSQL + Qdrant server)",
        description="Extract and index the versions queued in the shared database, claiming "
        "each with a lease (STREAM_RAG_JOB_LEASE_S) so a crashed worker's version is taken "
        "over; polls every STREAM_RAG_JOB_POLL_S. Stops at a batch boundary on SIGTERM or "
        "Ctrl-C. Needs STREAM_RAG_DATABASE_URL and STREAM_RAG_QDRANT_URL; run `serve` with "
        "STREAM_RAG_INDEX_IN_PROCESS=false to leave all indexing to workers.",
    )


def run(settings: Settings) -> int:
    if not (settings.database_url and settings.qdrant_url):
        raise InvalidFieldError(
            "stream-rag worker shares the queue and the index with the servers: set "
            "STREAM_RAG_DATABASE_URL (PostgreSQL) and STREAM_RAG_QDRANT_URL"
        )
    logging.basicConfig(level=settings.log_level.upper(), format="%(levelname)s %(message)s")
    services = open_services(settings)
    try:
        anyio.run(work, services, settings)
    finally:
        services.close()
    return 0


async def work(services: Services, settings: Settings) -> None:
    """Index until SIGTERM or SIGINT, then stop at the next batch boundary."""
    lease = Lease(settings.job_lease_s)
    queue = IndexQueue(
        services.indexer,
        workers=settings.index_workers,
        batch=settings.index_batch,
        max_attempts=settings.index_max_attempts,
        lease=lease,
    )
    backlog = await anyio.to_thread.run_sync(services.indexer.reconcile)
    backlog += await anyio.to_thread.run_sync(startup_check, services.indexer)
    queue.submit_all(backlog)
    log.info("worker %s: indexing (%d queued at start)", lease.owner, len(backlog))
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with anyio.create_task_group() as group:
            group.start_soon(queue.run)
            group.start_soon(queue.poll, settings.job_poll_s)
            async for _ in signals:
                log.info("worker %s: stopping after the batch in hand", lease.owner)
                queue.close()
                break
