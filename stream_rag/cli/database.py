"""`stream-rag migrate`: bring the store's database (SQLite or PostgreSQL) to this release's
schema; `--to postgresql://...` moves an embedded deployment into PostgreSQL and a Qdrant
server (store/move.py), ids, versions, hashes and keys unchanged."""

from __future__ import annotations

import argparse

from ..config import Settings
from ..config_checks import is_postgres_url
from ..errors import DataDirMissingError, InvalidFieldError
from ..store.database import Database
from ..store.migrations import MIGRATIONS
from ..store.sql import redact


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    migrate = commands.add_parser(
        "migrate",
        help="apply the store's schema migrations (also done at every start); --to moves the "
        "store into PostgreSQL",
        description="Apply the numbered schema migrations the database lacks, in order "
        "(STREAM_RAG_DATABASE_URL, or SQLite in the data directory), and list them. Replicas "
        "starting together apply each migration once. With --to URL: move the embedded store "
        "(SQLite and the bytes in the data directory) into that empty PostgreSQL database, "
        "then index it into the Qdrant server of STREAM_RAG_QDRANT_URL and compare (doctor); "
        "stop the server first. Document ids, versions, hashes and keys stay the same.",
    )
    migrate.add_argument("--to", metavar="URL", help="a postgresql:// URL to move the store into")


def target(settings: Settings) -> str:
    return redact(settings.database_url) if settings.database_url else str(settings.data_dir)


def move_to(settings: Settings, url: str) -> int:
    """`stream-rag migrate --to URL`: the rows and bytes, then the index, then a doctor."""
    from ..cli.index import reindex
    from ..index.doctor import check
    from ..services import open_services
    from ..store.documents import DocumentStore
    from ..store.move import move

    if not is_postgres_url(url):
        raise InvalidFieldError("--to must be a postgresql:// URL")
    if settings.database_url is not None:
        raise InvalidFieldError(
            "the store is in PostgreSQL already (STREAM_RAG_DATABASE_URL); --to moves an "
            "embedded one (unset it and name the data directory)"
        )
    if not (settings.data_dir / "stream_rag.sqlite3").is_file():
        raise DataDirMissingError(f"no embedded store in {settings.data_dir} to move")
    if not settings.qdrant_url:
        raise InvalidFieldError(
            "moving to PostgreSQL needs the index every replica shares: set "
            "STREAM_RAG_QDRANT_URL to a Qdrant server"
        )
    source = DocumentStore(settings.data_dir)
    try:
        target = Database(url)
        try:
            move(source, target, lambda line: print(f"moved {line}"))
        finally:
            target.close()
    finally:
        source.close()
    services = open_services(settings.with_overrides(database_url=url))
    try:
        reindex(services)
        report = check(services.store, services.index)
        for line in report.lines():
            print(line)
    finally:
        services.close()
    print(f"the store is in {redact(url)}: set STREAM_RAG_DATABASE_URL to it")
    return 1 if report.differences else 0


def migrate(settings: Settings) -> int:
    if settings.database_url is None:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    database = Database(settings.database_url or settings.data_dir / "stream_rag.sqlite3")
    try:
        applied = database.backend.applied()
    finally:
        database.close()
    print(f"database: {target(settings)} ({database.dialect})")
    for migration in MIGRATIONS:
        mark = "applied" if migration.version in applied else "MISSING"
        print(f"  {migration.version:>3}  {mark}  {migration.name}")
    return 0 if all(m.version in applied for m in MIGRATIONS) else 1
