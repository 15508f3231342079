"""Settings: one frozen object read from `STREAM_RAG_*` variables, then `.env`, then defaults."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from starlette.config import Config

from .config_checks import check
from .errors import InvalidFieldError

ENV_PREFIX = "STREAM_RAG_"


@dataclass(frozen=True, slots=True)
class Settings:
    """Every knob of the service. Field `foo` is read from `STREAM_RAG_FOO`."""

    # The store's SQLite file, original bytes and embedded index (copy or move it stopped).
    data_dir: Path = Path("stream_rag_data")
    # Where `stream-rag serve` listens.
    host: str = "127.0.0.1"
    port: int = 8000
    # The largest upload, in MB, refused while it streams in.
    max_upload_mb: float = 50.0
    # Chunks: target size in characters, and the trailing sentences repeated at the start of
    # the next chunk, up to this many characters.
    chunk_chars: int = 1000
    chunk_overlap_chars: int = 150
    # The store's database: SQLite in data_dir unless a postgresql:// URL is given (then the
    # original bytes, jobs, keys, rate limits and grants live there too, shared by replicas;
    # data_dir keeps staging and a cache). docs/guides/scale-out.md.
    database_url: str | None = None
    database_pool: int = 10  # connections one process keeps to PostgreSQL at most
    # Extraction runs in worker processes (extract_pool.py), each document within limits.
    extract_workers: int = 2
    extract_cpu_s: int = 60
    extract_memory_mb: int = 1024
    extract_wall_s: float = 120.0
    max_unzipped_mb: float = 256.0
    max_zip_ratio: float = 200.0
    max_pdf_pages: int = 2000
    max_extracted_chars: int = 5_000_000
    max_chunks_per_doc: int = 10_000
    # Names whose words mix scripts ("pricing.md" spelt with a Cyrillic U+0456) are refused
    # instead of shown with a marker (http/names.py).
    refuse_confusable_names: bool = False
    # Chunks a KB of upload may give (past the first 64): a 156 KB PDF gave 5,000.
    max_chunks_per_kb: float = 10.0
    # Quotas (0: none): what one key (not admin) and one collection may store, all versions.
    key_max_documents: int = 10_000
    key_max_mb: float = 5_120.0
    key_max_chunks: int = 1_000_000
    collection_max_documents: int = 100_000
    collection_max_mb: float = 51_200.0
    collection_max_chunks: int = 5_000_000
    # Indexing (jobs.py): workers, chunks per batch, attempts per version, queue bound.
    index_workers: int = 2
    index_batch: int = 64
    index_max_attempts: int = 2
    max_queued_jobs: int = 10_000
    # Several processes on one PostgreSQL share the queue (`stream-rag worker`, replicas): a
    # version is leased for this long, renewed every batch, and taken over once it runs out;
    # queued versions are polled this often. `serve` indexes in-process unless set to false.
    job_lease_s: float = 60.0
    job_poll_s: float = 2.0
    index_in_process: bool = True
    # The collection of uploads and questions that name none; uvicorn's log level.
    default_collection: str = "default"
    log_level: str = "info"
    # Index: embedded Qdrant Edge under data_dir unless a Qdrant server URL is given.
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    qdrant_collection: str = "stream_rag"
    qdrant_shards: int | None = None
    qdrant_replicas: int | None = None
    # Start-up: a store server still starting (compose starts Qdrant and the app together) is
    # asked this many times, this many seconds apart, before `serve` gives up with exit 1.
    store_wait_attempts: int = 10
    store_wait_s: float = 2.0
    # Embedded index: candidates an HNSW search keeps (segments `stream-rag optimize` built).
    hnsw_ef: int = 256
    # Embedded index: once this many points are searched exactly (no graph holds them), the
    # server builds HNSW graphs in the background when indexing is idle; 0 turns it off.
    hnsw_auto_points: int = 10_000
    # Embedded index: the writes a running HNSW build keeps to re-apply to its copy, in MB
    # (vectors included); past it the build is abandoned (the live shard has every write).
    hnsw_journal_mb: float = 256.0
    # Embedded index: up to this many points, dense search runs on an in-memory copy of the
    # vectors (exact, ~1.6 KB a point; index/mirror.py); 0 (the default) turns it off: in
    # the server it measured no faster than the engine (docs/decisions/).
    dense_mirror_max_points: int = 0
    # Embeddings: the local MiniLM unless an OpenAI-compatible endpoint is given.
    embed_base_url: str | None = None
    embed_model: str = "text-embedding-3-small"
    embed_api_key: str | None = None
    embed_timeout_s: float = 30.0
    # The local MiniLM's precision per use ("fp32" or "int8", docs/decisions/): search
    # queries, passages embedded at ingest (chunks, their FAQ questions), and the gate's
    # semantic stage: block sentences stored at ingest and grey-zone sentences alike.
    embed_query_precision: str = "int8"
    embed_passage_precision: str = "fp32"
    embed_gate_precision: str = "int8"
    # Retrieval defaults; every request may override top_k, weights and fusion.
    top_k: int = 8
    candidates: int = 50
    # Chosen by cross-validation on the answer dev sets, Cranfield nDCG@10 kept
    # (docs/concepts/retrieval.md).
    dense_weight: float = 0.65
    bm25_weight: float = 0.35
    title_weight: float = 1.0  # the user's question against the FAQ questions a chunk answers
    fusion: str = "weighted"
    # Optional cross-encoder rerank endpoint (TEI `/rerank` or Cohere-style).
    rerank_url: str | None = None
    rerank_style: str = "tei"
    rerank_model: str | None = None
    rerank_api_key: str | None = None
    rerank_timeout_s: float = 2.0
    # The chat model: an OpenAI-compatible endpoint, else the local extractive generator.
    llm_base_url: str | None = None
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str | None = None
    llm_timeout_s: float = 60.0
    llm_stall_s: float = 20.0
    llm_max_tokens: int = 512
    # Follow-ups: "lexical" carries the earlier question's subject words, "llm" asks the chat
    # model to rewrite the question (falls back to lexical), "off" retrieves the question alone.
    condense: str = "lexical"
    # The citation gate's substance threshold (None: the tuned default in gate.py).
    gate_threshold: float | None = None
    # The gate's operating point: "strict" (default; fewest unsupported sentences shown) or
    # "balanced" (a little more recall: looser clause shares, no range-citation penalty
    # beyond the default). docs/decisions/gate-operating-points.md.
    gate_mode: str = "strict"
    # The gate's semantic second stage (needs the local MiniLM) and its pass probability.
    gate_semantic: bool = True
    gate_semantic_cutoff: float | None = None
    # Optional remote verifier for grey-zone sentences: a TEI `/predict` NLI classifier, or
    # (style `llm`) an OpenAI-compatible chat model asked with a fixed prompt.
    verify_url: str | None = None
    verify_style: str = "tei"
    verify_model: str | None = None
    verify_api_key: str | None = None
    verify_timeout_ms: float = 1500.0
    verify_label: str = "entailment"
    # Refuse before generation: evidence under this (0..1, see evidence.py), or conflicts.
    min_evidence: float = 0.35
    check_conflicts: bool = True
    # Refuse as `not_answered` when the best entry states no answer of the kind the question
    # asks outright (answer/answerable.py); the refusal's wording, `{nearby}` replaced by the
    # headings the knowledge base covers nearby (None: the built-in English one).
    check_answered: bool = True
    not_answered_text: str | None = None
    # The language refusals are worded in when a question's is not read or has no wording
    # (en, de, fr, es, it, nl, pt), and the team's wording per language: a JSON file
    # {"de": {"not_answered": "... {nearby} ...", ...}} (answer/wording.py has the keys).
    language: str = "en"
    refusal_texts: Path | None = None
    # Seconds between keep-alive comments on an event stream.
    sse_ping_s: float = 15.0
    # Worker threads for an answer's CPU work (retrieval, checks, gate context) at once; the
    # rest queue, so the event loop keeps a CPU and the GIL often enough to deliver sentences.
    # 0 (the default): one fewer than the CPUs the process may use, at least 1 (see
    # `cpu_worker_threads`; docs/decisions/, "One CPU left to the event loop").
    cpu_workers: int = 0
    # `stream-rag serve`'s GIL switch interval: how long a worker thread running Python may
    # keep the event loop waiting (Python's default, 5 ms, is paid on every wake-up while the
    # workers are busy, e.g. a burst's retrieval; docs/decisions/).
    gil_switch_ms: float = 1.0
    # `stream-rag serve`: once started, move every object alive then (models, indexes, the
    # sample knowledge base) out of the cyclic GC's reach, so that a full collection scans only
    # what came after (one over them took 55-110 ms of CPU, a sentence's lag; docs/decisions/).
    gc_freeze: bool = True
    # `stream-rag serve`: the GC's full collections run when no request is in progress (or,
    # under load that never pauses, after 20x as many young collections as CPython waits),
    # not in the middle of answers: each stalled every stream 10-25 ms (docs/decisions/).
    # Off by default: in alternating pairs the lag p99 came out worse with it in 4 of 5.
    gc_idle: bool = False
    # `stream-rag serve` on Linux 6.12+: the scheduling slice its threads ask the kernel for
    # (EEVDF's sched_runtime; 100-100000 us, 0: the kernel's default, ~1.4 ms). Shorter slices
    # run sooner after a wake-up (a token from the model) without a larger share of the CPU.
    sched_slice_us: int = 0
    # A load-test baseline ONLY: skip the pre-generation checks and the gate, send every unit.
    ungated_baseline: bool = False
    # One JSON line per HTTP request on stderr (`stream-rag serve`), instead of uvicorn's log.
    access_log: bool = True
    # Recent questions whose embeddings are kept (0: no cache).
    query_cache_size: int = 1024
    # Whole-answer deadline (the model timeouts bound single waits, not the sum of them).
    answer_timeout_s: float = 120.0
    # On SIGTERM: how long answers in flight may go on before `error: shutting_down`.
    drain_s: float = 10.0
    # `stream-rag serve`: connections at once (more get 503), seconds a client may take to
    # send its request head, seconds an idle keep-alive connection stays open.
    max_connections: int = 1000
    header_timeout_s: float = 10.0
    keep_alive_s: float = 5.0
    # Per client address (trusted proxies exempt): connections open at once (more are refused
    # as they connect), and idle between requests (past it a response closes its connection).
    max_connections_per_address: int = 256
    max_idle_per_address: int = 32
    # Connections past MAX_CONNECTIONS that serve only /healthz, /readyz and admin keys.
    reserved_connections: int = 16
    # Proxies whose X-Forwarded-For is believed (addresses or CIDRs); none by default.
    trusted_proxies: tuple[str, ...] = ()
    # Seconds a client may keep the server waiting for its request body, plus one second
    # per BODY_MIN_KB_S kilobytes it sends (bodytimeout.py): slow links finish, trickles do not.
    body_timeout_s: float = 30.0
    body_min_kb_s: float = 16.0
    # /v1/chat/completions: also put citations in the text as markdown reference links.
    openai_reference_links: bool = False
    # Browser origins allowed to call the API (CORS, and the Origin check on state changes).
    cors_origins: tuple[str, ...] = ()
    # The address clients reach the API at: makes citation and download URLs absolute.
    public_url: str | None = None
    # Access control (access.py): keys from the store and this file; without any key the
    # server is open, which is allowed only on loopback unless ALLOW_ANONYMOUS is set.
    keys_file: Path | None = None
    allow_anonymous: bool = False
    # Host header allowlist (empty: loopback names when bound to loopback, else any).
    allowed_hosts: tuple[str, ...] = ()
    # Who may frame the page and widget (CSP frame-ancestors); empty: this origin only.
    frame_ancestors: tuple[str, ...] = ()
    # The largest JSON request body, refused with 413 while it is read.
    max_json_kb: int = 64
    # Per key (per client address when open on a network): requests a minute, open answers.
    rate_limit_rpm: int = 600
    max_streams: int = 8
    # Per visitor (client address) of a chat-only key, which a page shares: requests a minute,
    # open answers.
    visitor_rpm: int = 60
    visitor_max_streams: int = 2
    # The most blocks a chat key's answer retrieves (each one's metadata goes out to it).
    chat_max_top_k: int = 8
    # The question log (questions, outcomes, ratings) keeps this many days; 0 keeps nothing.
    question_log_days: int = 30
    # Ratings (POST /v1/feedback) a minute per key and address.
    feedback_rpm: int = 20
    # A /v1/chat answer's events are kept this long for a client resuming it (GET
    # /v1/streams/{id}, Last-Event-ID) on any replica; 0 records nothing.
    stream_keep_s: float = 600.0
    # A recorded answer whose asking connection closed goes on this long for a client to
    # resume it (then as long as one follows it, or until DELETE /v1/streams/{id}, the
    # widget's Stop); 0 stops it when the connection closes.
    resume_grace_s: float = 30.0

    def __post_init__(self) -> None:
        check(self)

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1024 * 1024)

    @property
    def max_json_bytes(self) -> int:
        return self.max_json_kb * 1024

    @property
    def cpu_worker_threads(self) -> int:
        """`cpu_workers`, or for 0 the CPUs this process may run on less the event loop's."""
        if self.cpu_workers:
            return self.cpu_workers
        return max(1, usable_cpus() - 1)

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        env_file: str | Path | None = ".env",
        **overrides: Any,
    ) -> Settings:
        """Read settings; explicit `overrides` win over the environment, which wins over `.env`."""
        environ = os.environ if environ is None else environ
        if env_file is not None and not Path(env_file).is_file():
            env_file = None
        config = Config(env_file=env_file, environ=environ, env_prefix=ENV_PREFIX)
        values: dict[str, Any] = {}
        if environ.get("OPENAI_API_KEY") and not environ.get(f"{ENV_PREFIX}LLM_API_KEY"):
            values["llm_api_key"] = environ["OPENAI_API_KEY"]
        for field in fields(cls):
            if field.name in overrides and overrides[field.name] is not None:
                values[field.name] = overrides[field.name]
                continue
            caster = _CASTS[field.type] if isinstance(field.type, str) else field.type
            try:
                raw = config(field.name.upper(), cast=caster, default=None)
            except ValueError as exc:
                raise InvalidFieldError(f"{ENV_PREFIX}{field.name.upper()}: {exc}") from exc
            if raw is not None:
                values[field.name] = raw
        return cls(**values)

    def with_overrides(self, **changes: Any) -> Settings:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _bool(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError(f"expected a boolean, got {value!r}")


def _optional_str(value: str) -> str | None:
    return value or None


def _str_tuple(value: str) -> tuple[str, ...]:
    """A comma-separated list; blanks dropped."""
    return tuple(part.strip() for part in value.split(",") if part.strip())


_CASTS: dict[str, Any] = {
    "Path": Path,
    "str": str,
    "int": int,
    "float": float,
    "bool": _bool,
    "str | None": _optional_str,
    "Path | None": lambda value: Path(value) if value else None,
    "tuple[str, ...]": _str_tuple,
    "int | None": lambda value: int(value) if value else None,
    "float | None": lambda value: float(value) if value else None,
}
