"""The store's schema as numbered migrations, one text per backend, recorded in the table
`schema_migrations` and applied in order by `stream-rag migrate` and at every start.

To add a table: append a `Migration` with the next number, its SQLite and its PostgreSQL DDL
(`CREATE TABLE IF NOT EXISTS ...`; BLOB is BYTEA, INTEGER counting bytes is BIGINT, a column
named `end` is quoted), then read and write it through `Database.connection()` /
`transaction()` with the SQL both accept (see sql.py). Never edit a released migration: a
database that has applied it would not see the change. docs/guides/scale-out.md.
"""

from __future__ import annotations

from dataclasses import dataclass

# The document store (SQLite's text is the release before numbered migrations, which
# `SqliteBackend` brings up to date first; every statement is idempotent).
_SQLITE_DOCUMENTS = """
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY,
    collection TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    live_version INTEGER
);
CREATE INDEX IF NOT EXISTS documents_collection ON documents(collection, created_at);
CREATE TABLE IF NOT EXISTS versions (
    doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    media_type TEXT NOT NULL,
    filename TEXT NOT NULL,
    created_at TEXT NOT NULL,
    chunk_count INTEGER NOT NULL,
    status TEXT NOT NULL,
    status_reason TEXT,
    text TEXT NOT NULL,
    PRIMARY KEY (doc_id, version)
);
CREATE INDEX IF NOT EXISTS versions_sha ON versions(sha256);
CREATE INDEX IF NOT EXISTS versions_status ON versions(status);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    text TEXT NOT NULL,
    FOREIGN KEY (doc_id, version) REFERENCES versions(doc_id, version) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS chunks_version ON chunks(doc_id, version, ordinal);
CREATE TABLE IF NOT EXISTS chunk_features (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    doc_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    PRIMARY KEY (doc_id, version),
    FOREIGN KEY (doc_id, version) REFERENCES versions(doc_id, version) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunk_questions (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    count INTEGER NOT NULL,
    vectors BLOB NOT NULL
);
-- A search asks whether any chunk has a question before looking its candidates up.
CREATE INDEX IF NOT EXISTS chunk_questions_asked ON chunk_questions(model, count);
CREATE TABLE IF NOT EXISTS chunk_readings (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunk_sentence_vectors (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    spans TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vectors BLOB NOT NULL
);
"""

_POSTGRES_DOCUMENTS = """
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY,
    collection TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    live_version INTEGER,
    owner TEXT
);
CREATE INDEX IF NOT EXISTS documents_collection ON documents(collection, created_at);
CREATE INDEX IF NOT EXISTS documents_owner ON documents(owner);
CREATE TABLE IF NOT EXISTS versions (
    doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    size BIGINT NOT NULL,
    media_type TEXT NOT NULL,
    filename TEXT NOT NULL,
    created_at TEXT NOT NULL,
    chunk_count INTEGER NOT NULL,
    status TEXT NOT NULL,
    status_reason TEXT,
    text TEXT NOT NULL,
    bm25_tokens BIGINT,
    PRIMARY KEY (doc_id, version)
);
CREATE INDEX IF NOT EXISTS versions_sha ON versions(sha256);
CREATE INDEX IF NOT EXISTS versions_status ON versions(status);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    text TEXT NOT NULL,
    FOREIGN KEY (doc_id, version) REFERENCES versions(doc_id, version) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS chunks_version ON chunks(doc_id, version, ordinal);
CREATE TABLE IF NOT EXISTS chunk_features (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    doc_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    PRIMARY KEY (doc_id, version),
    FOREIGN KEY (doc_id, version) REFERENCES versions(doc_id, version) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunk_questions (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    count INTEGER NOT NULL,
    vectors BYTEA NOT NULL
);
CREATE INDEX IF NOT EXISTS chunk_questions_asked ON chunk_questions(model, count);
CREATE TABLE IF NOT EXISTS chunk_readings (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunk_sentence_vectors (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    spans TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vectors BYTEA NOT NULL,
    token_counts TEXT,
    token_dims INTEGER,
    tokens BYTEA
);
"""

_KEYS = """
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    sha256 TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    scopes TEXT NOT NULL,
    collections TEXT NOT NULL,
    rpm INTEGER,
    max_streams INTEGER,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
"""

# Original bytes, in parts (a part is one bounded statement parameter); on SQLite they stay
# files under the data directory (blobs.py).
_POSTGRES_BLOBS = """
CREATE TABLE IF NOT EXISTS blob_parts (
    sha256 TEXT NOT NULL,
    part INTEGER NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (sha256, part)
);
"""


# The question log (store/questions.py): one row per answer streamed, kept
# STREAM_RAG_QUESTION_LOG_DAYS, and the visitors' ratings of those answers.
_QUESTIONS = """
CREATE TABLE IF NOT EXISTS questions (
    id TEXT PRIMARY KEY,
    conversation TEXT,
    collection TEXT NOT NULL,
    key_id TEXT,
    asked_at TEXT NOT NULL,
    question TEXT NOT NULL,
    outcome TEXT NOT NULL,
    reason TEXT,
    sentences INTEGER NOT NULL,
    dropped INTEGER NOT NULL,
    citations TEXT NOT NULL,
    conflicts TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS questions_asked ON questions(collection, asked_at);
CREATE INDEX IF NOT EXISTS questions_conversation ON questions(conversation);
CREATE TABLE IF NOT EXISTS feedback (
    question_id TEXT PRIMARY KEY REFERENCES questions(id) ON DELETE CASCADE,
    rating INTEGER NOT NULL,
    comment TEXT NOT NULL,
    rated_at TEXT NOT NULL
);
"""


# Access state every replica shares (access/shared.py): rate-limit token buckets (used on
# PostgreSQL) and the versions each chat key was shown in citations.
_ACCESS = """
CREATE TABLE IF NOT EXISTS rate_buckets (
    who TEXT PRIMARY KEY,
    tokens DOUBLE PRECISION NOT NULL,
    stamp DOUBLE PRECISION NOT NULL,
    taken INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS citation_grants (
    key_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    granted_at TEXT NOT NULL,
    PRIMARY KEY (key_id, doc_id, version)
);
CREATE INDEX IF NOT EXISTS citation_grants_age ON citation_grants(granted_at);
"""


# Where a chunk came from (PDF pages, bytes of the stored file) and which extraction made a
# version's text (ingest/layout.py EXTRACTION_VERSION; older ones are extracted again).
_SQLITE_PLACES = """
ALTER TABLE chunks ADD COLUMN page_start INTEGER;
ALTER TABLE chunks ADD COLUMN page_end INTEGER;
ALTER TABLE chunks ADD COLUMN source_start INTEGER;
ALTER TABLE chunks ADD COLUMN source_end INTEGER;
ALTER TABLE versions ADD COLUMN extraction INTEGER;
"""
_POSTGRES_PLACES = """
ALTER TABLE chunks ADD COLUMN IF NOT EXISTS page_start INTEGER;
ALTER TABLE chunks ADD COLUMN IF NOT EXISTS page_end INTEGER;
ALTER TABLE chunks ADD COLUMN IF NOT EXISTS source_start BIGINT;
ALTER TABLE chunks ADD COLUMN IF NOT EXISTS source_end BIGINT;
ALTER TABLE versions ADD COLUMN IF NOT EXISTS extraction INTEGER;
"""

# Answers' verified events, for a client resuming on any replica (store/streams.py).
_STREAMS = """
CREATE TABLE IF NOT EXISTS answer_streams (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    heartbeat DOUBLE PRECISION NOT NULL,
    finished INTEGER NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS answer_streams_expiry ON answer_streams(expires_at);
CREATE TABLE IF NOT EXISTS stream_events (
    stream_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (stream_id, seq)
);
"""

# Answers in progress per holder (a key, or a chat key's visitor) and replica, with the
# replica's heartbeat (access/shared.py): N replicas share a key's `max_streams`. PostgreSQL
# only: one SQLite store is one process, which counts them in memory.
_POSTGRES_SLOTS = """
CREATE TABLE IF NOT EXISTS answer_slots (
    holder TEXT NOT NULL,
    replica TEXT NOT NULL,
    taken INTEGER NOT NULL,
    heartbeat DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (holder, replica)
);
CREATE INDEX IF NOT EXISTS answer_slots_replica ON answer_slots(replica);
"""


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sqlite: str
    postgres: str

    def text(self, dialect: str) -> str:
        return self.sqlite if dialect == "sqlite" else self.postgres


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "documents", _SQLITE_DOCUMENTS, _POSTGRES_DOCUMENTS),
    Migration(2, "api keys", _KEYS, _KEYS),
    Migration(3, "original bytes", "", _POSTGRES_BLOBS),
    Migration(4, "question log", _QUESTIONS, _QUESTIONS),
    Migration(5, "shared access state", _ACCESS, _ACCESS),
    # Which process indexes a queued version, until when (index/jobs.py's leases).
    Migration(
        6,
        "job leases",
        "ALTER TABLE jobs ADD COLUMN lease_owner TEXT;\n"
        "ALTER TABLE jobs ADD COLUMN lease_until DOUBLE PRECISION;",
        "ALTER TABLE jobs ADD COLUMN IF NOT EXISTS lease_owner TEXT;\n"
        "ALTER TABLE jobs ADD COLUMN IF NOT EXISTS lease_until DOUBLE PRECISION;",
    ),
    Migration(7, "chunk places and extraction version", _SQLITE_PLACES, _POSTGRES_PLACES),
    Migration(8, "answer streams", _STREAMS, _STREAMS),
    # When a client last followed a stream (an answer whose asker left goes on while one does).
    Migration(
        9,
        "stream followers",
        "ALTER TABLE answer_streams ADD COLUMN followed DOUBLE PRECISION;",
        "ALTER TABLE answer_streams ADD COLUMN IF NOT EXISTS followed DOUBLE PRECISION;",
    ),
    # Its client asked it stopped (DELETE /v1/streams/{id}: the widget's Stop).
    Migration(
        10,
        "stream stops",
        "ALTER TABLE answer_streams ADD COLUMN stop_asked INTEGER NOT NULL DEFAULT 0;",
        "ALTER TABLE answer_streams ADD COLUMN IF NOT EXISTS stop_asked INTEGER NOT NULL "
        "DEFAULT 0;",
    ),
    Migration(11, "answer slots", "", _POSTGRES_SLOTS),
    # When a version says it was last updated (ingest/dates.py): which side of a conflict
    # between documents is the older.
    Migration(
        12,
        "version dates",
        "ALTER TABLE versions ADD COLUMN dated TEXT;",
        "ALTER TABLE versions ADD COLUMN IF NOT EXISTS dated TEXT;",
    ),
    # The headings a chunk stands under (ingest/chunking.py `heading_paths`), a JSON list.
    Migration(
        13,
        "chunk headings",
        "ALTER TABLE chunks ADD COLUMN headings TEXT;",
        "ALTER TABLE chunks ADD COLUMN IF NOT EXISTS headings TEXT;",
    ),
)
LATEST = MIGRATIONS[-1].version

SCHEMA_MIGRATIONS = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
);
"""


def statements(script: str) -> list[str]:
    """A migration's statements (they hold no `;` inside a literal)."""
    lines = [line for line in script.splitlines() if not line.lstrip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
