"""`stream-rag migrate`: bring the store's database (SQLite or PostgreSQL) to this release's
schema."""

from __future__ import annotations

import argparse

from ..config import Settings
from ..store.database import Database
from ..store.migrations import MIGRATIONS
from ..store.sql import redact


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    commands.add_parser(
        "migrate",
        help="apply the store's schema migrations (also done at every start)",
        description="Apply the numbered schema migrations the database lacks, in order "
        "(STREAM_RAG_DATABASE_URL, or SQLite in the data directory), and list them. Replicas "
        "starting together apply each migration once.",
    )


def target(settings: Settings) -> str:
    return redact(settings.database_url) if settings.database_url else str(settings.data_dir)


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
