"""Which values each setting accepts (`check`, run when `Settings` is built) and the URL schemes
of a PostgreSQL store: a bad value is an `InvalidFieldError` naming its variable."""

from __future__ import annotations

import ipaddress
import re
from typing import TYPE_CHECKING

from .errors import InvalidFieldError

if TYPE_CHECKING:
    from .config import Settings

__all__ = ["GATE_MODES", "POSTGRES_SCHEMES", "check", "is_postgres_url"]

# The URL schemes of a PostgreSQL store (store/sql.py picks its backend by them too).
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(target: object) -> bool:
    return isinstance(target, str) and target.startswith(POSTGRES_SCHEMES)


GATE_MODES = ("strict", "balanced")


def _at_least_one(settings: Settings, *names: str) -> None:
    """Raise `InvalidFieldError` for the first of `names` whose value is below 1."""
    for name in names:
        if getattr(settings, name) < 1:
            raise InvalidFieldError(f"STREAM_RAG_{name.upper()} must be at least 1")


def check(settings: Settings) -> None:
    """Raise `InvalidFieldError` for the first value `settings` may not hold."""
    _at_least_one(
        settings, "extract_workers", "extract_cpu_s", "extract_memory_mb", "max_pdf_pages"
    )
    _at_least_one(
        settings,
        "max_extracted_chars",
        "max_chunks_per_doc",
        "index_workers",
        "index_batch",
        "index_max_attempts",
        "max_queued_jobs",
    )
    for name in (
        "key_max_documents",
        "key_max_mb",
        "key_max_chunks",
        "collection_max_documents",
        "collection_max_mb",
        "collection_max_chunks",
    ):
        if getattr(settings, name) < 0:
            raise InvalidFieldError(f"STREAM_RAG_{name.upper()} must be >= 0 (0: no quota)")
    if settings.max_chunks_per_kb <= 0:
        raise InvalidFieldError("STREAM_RAG_MAX_CHUNKS_PER_KB must be positive")
    if min(settings.extract_wall_s, settings.max_unzipped_mb, settings.max_zip_ratio) <= 0:
        raise InvalidFieldError(
            "STREAM_RAG_EXTRACT_WALL_S, _MAX_UNZIPPED_MB and _MAX_ZIP_RATIO must be positive"
        )
    if settings.max_upload_mb <= 0:
        raise InvalidFieldError("STREAM_RAG_MAX_UPLOAD_MB must be positive")
    if settings.chunk_chars < 100:
        raise InvalidFieldError("STREAM_RAG_CHUNK_CHARS must be at least 100")
    if not 0 <= settings.chunk_overlap_chars <= settings.chunk_chars // 2:
        raise InvalidFieldError(
            "STREAM_RAG_CHUNK_OVERLAP_CHARS must be between 0 and half of CHUNK_CHARS"
        )
    if not 0 < settings.port < 65536:
        raise InvalidFieldError("STREAM_RAG_PORT must be a TCP port number")
    if not 1 <= settings.top_k <= settings.candidates <= 1000:
        raise InvalidFieldError("need 1 <= STREAM_RAG_TOP_K <= STREAM_RAG_CANDIDATES <= 1000")
    if settings.store_wait_attempts < 1:
        raise InvalidFieldError("STREAM_RAG_STORE_WAIT_ATTEMPTS must be at least 1")
    if settings.store_wait_s < 0:
        raise InvalidFieldError("STREAM_RAG_STORE_WAIT_S must be >= 0")
    if settings.hnsw_ef < 1:
        raise InvalidFieldError("STREAM_RAG_HNSW_EF must be at least 1")
    if settings.hnsw_auto_points < 0:
        raise InvalidFieldError("STREAM_RAG_HNSW_AUTO_POINTS must be >= 0")
    if settings.hnsw_journal_mb <= 0:
        raise InvalidFieldError("STREAM_RAG_HNSW_JOURNAL_MB must be positive")
    if settings.dense_mirror_max_points < 0:
        raise InvalidFieldError("STREAM_RAG_DENSE_MIRROR_MAX_POINTS must be >= 0")
    if settings.cpu_workers < 0:
        raise InvalidFieldError("STREAM_RAG_CPU_WORKERS must be >= 0 (0: CPUs minus one)")
    for name in ("embed_query_precision", "embed_passage_precision", "embed_gate_precision"):
        if getattr(settings, name) not in ("fp32", "int8"):
            raise InvalidFieldError(f"STREAM_RAG_{name.upper()} must be 'fp32' or 'int8'")
    if settings.sched_slice_us and not 100 <= settings.sched_slice_us <= 100_000:
        raise InvalidFieldError("STREAM_RAG_SCHED_SLICE_US must be 0 or 100-100000")
    if not 0 < settings.gil_switch_ms <= 100:
        raise InvalidFieldError("STREAM_RAG_GIL_SWITCH_MS must be above 0 and at most 100")
    if settings.query_cache_size < 0:
        raise InvalidFieldError("STREAM_RAG_QUERY_CACHE_SIZE must be >= 0")
    if settings.fusion not in ("weighted", "rrf"):
        raise InvalidFieldError("STREAM_RAG_FUSION must be 'weighted' or 'rrf'")
    if settings.gate_mode not in GATE_MODES:
        raise InvalidFieldError("STREAM_RAG_GATE_MODE must be 'strict' or 'balanced'")
    if settings.verify_style not in ("tei", "llm"):
        raise InvalidFieldError("STREAM_RAG_VERIFY_STYLE must be 'tei' or 'llm'")
    if settings.verify_timeout_ms <= 0:
        raise InvalidFieldError("STREAM_RAG_VERIFY_TIMEOUT_MS must be positive")
    if settings.condense not in ("lexical", "llm", "off"):
        raise InvalidFieldError("STREAM_RAG_CONDENSE must be 'lexical', 'llm' or 'off'")
    if min(settings.max_connections, settings.header_timeout_s, settings.keep_alive_s) <= 0:
        raise InvalidFieldError(
            "STREAM_RAG_MAX_CONNECTIONS, _HEADER_TIMEOUT_S and _KEEP_ALIVE_S must be > 0"
        )
    if min(settings.max_connections_per_address, settings.max_idle_per_address) < 1:
        raise InvalidFieldError(
            "STREAM_RAG_MAX_CONNECTIONS_PER_ADDRESS and _MAX_IDLE_PER_ADDRESS must be >= 1"
        )
    if settings.reserved_connections < 0:
        raise InvalidFieldError("STREAM_RAG_RESERVED_CONNECTIONS must be >= 0")
    for proxy in settings.trusted_proxies:
        try:
            ipaddress.ip_network(proxy, strict=False)
        except ValueError:
            raise InvalidFieldError(
                f"STREAM_RAG_TRUSTED_PROXIES: {proxy!r} is not an address or CIDR"
            ) from None
    for name in ("body_timeout_s", "body_min_kb_s"):
        if getattr(settings, name) <= 0:
            raise InvalidFieldError(f"STREAM_RAG_{name.upper()} must be > 0")
    if not (settings.answer_timeout_s > 0 and settings.drain_s >= 0):
        raise InvalidFieldError(
            "STREAM_RAG_ANSWER_TIMEOUT_S must be > 0 and STREAM_RAG_DRAIN_S >= 0"
        )
    if settings.rerank_style not in ("tei", "cohere"):
        raise InvalidFieldError("STREAM_RAG_RERANK_STYLE must be 'tei' or 'cohere'")
    if (
        min(settings.dense_weight, settings.bm25_weight, settings.title_weight) < 0
        or settings.dense_weight + settings.bm25_weight <= 0
    ):
        raise InvalidFieldError("branch weights must be >= 0 and not both zero")
    for origin in settings.cors_origins:
        if origin != "*" and not re.fullmatch(r"https?://[^/\s]+/?", origin):
            raise InvalidFieldError(
                f"STREAM_RAG_CORS_ORIGINS: {origin!r} is not an origin like https://host:port"
            )
    for host in settings.allowed_hosts:
        if not re.fullmatch(r"\*|(\*\.)?[A-Za-z0-9.\[\]:_-]+", host):
            raise InvalidFieldError(
                f"STREAM_RAG_ALLOWED_HOSTS: {host!r} is not a host name, '*.example.com' or '*'"
            )
    for source in settings.frame_ancestors:
        if not re.fullmatch(r"'self'|'none'|https?://[^/\s;,']+/?", source):
            raise InvalidFieldError(
                f"STREAM_RAG_FRAME_ANCESTORS: {source!r} is not an origin like https://host"
            )
    if settings.public_url is not None and not re.match(r"https?://[^/\s]+", settings.public_url):
        raise InvalidFieldError("STREAM_RAG_PUBLIC_URL must start with http:// or https://")
    if not 1 <= settings.max_json_kb <= 100_000:
        raise InvalidFieldError("STREAM_RAG_MAX_JSON_KB must be between 1 and 100000")
    if settings.stream_keep_s < 0:
        raise InvalidFieldError("STREAM_RAG_STREAM_KEEP_S must be >= 0")
    if not 0 <= settings.resume_grace_s <= 3600:
        raise InvalidFieldError("STREAM_RAG_RESUME_GRACE_S must be between 0 and 3600")
    if not (settings.job_lease_s > 0 and settings.job_poll_s > 0):
        raise InvalidFieldError("STREAM_RAG_JOB_LEASE_S and _POLL_S must be > 0")
    if settings.database_url is not None and not is_postgres_url(settings.database_url):
        raise InvalidFieldError(
            "STREAM_RAG_DATABASE_URL must be a postgresql:// URL "
            "(unset: SQLite in the data directory)"
        )
    if not 1 <= settings.database_pool <= 1000:
        raise InvalidFieldError("STREAM_RAG_DATABASE_POOL must be between 1 and 1000")
    if settings.rate_limit_rpm < 1 or settings.max_streams < 1:
        raise InvalidFieldError("STREAM_RAG_RATE_LIMIT_RPM and _MAX_STREAMS must be >= 1")
    if settings.question_log_days < 0 or settings.feedback_rpm < 1:
        raise InvalidFieldError(
            "STREAM_RAG_QUESTION_LOG_DAYS must be >= 0 and STREAM_RAG_FEEDBACK_RPM >= 1"
        )
    if settings.visitor_rpm < 1 or settings.visitor_max_streams < 1:
        raise InvalidFieldError("STREAM_RAG_VISITOR_RPM and _MAX_STREAMS must be >= 1")
    if not 1 <= settings.chat_max_top_k <= 100:
        raise InvalidFieldError("STREAM_RAG_CHAT_MAX_TOP_K must be between 1 and 100")
