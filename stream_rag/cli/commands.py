"""The `stream-rag` command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ..access.principals import KeyRing, check_open_mode
from ..config import Settings
from ..errors import StreamRagError
from ..ingest.local import IngestReport, ingest_paths, iter_files, sample_kb_dir
from ..ingest.progress import Progress
from ..loadtest import command as loadtest
from ..retrieve.hybrid import SearchResult
from ..services import Services, open_services
from ..store.documents import DocumentStore
from ..types import UploadResult
from . import ask as cli_ask
from . import keys as cli_keys

DESCRIPTION = """\
stream_rag: a streaming RAG backend that only sends sentences whose citations check out.

Settings come from STREAM_RAG_* environment variables (and a .env file); see README.md."""


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Fixed width, so `--help` reads the same everywhere (README.md quotes it)."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=88)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stream-rag", description=DESCRIPTION, formatter_class=_HelpFormatter
    )
    parser.add_argument(
        "--data-dir", type=Path, help="where documents are stored (STREAM_RAG_DATA_DIR)"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser(
        "serve", help="run the HTTP API and web page", description="Run the HTTP API."
    )
    serve.add_argument("--host", help="interface to bind (STREAM_RAG_HOST, default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to bind (STREAM_RAG_PORT, default 8000)")
    serve.add_argument(
        "--sample",
        action="store_true",
        help="first ingest the bundled sample knowledge base (skipped if already stored)",
    )
    serve.add_argument(
        "--init-key",
        action="store_true",
        help="if no API key exists yet, create an admin key and print it once (containers)",
    )

    ingest = commands.add_parser(
        "ingest",
        help="store files or whole folders as documents",
        description="Store files, or every file under the given folders, as documents. "
        "Identical bytes already in the collection are reported as duplicates. Exits 1 if "
        "any file failed.",
    )
    ingest.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    ingest.add_argument("--collection", help="collection to add to (default: default)")
    ingest.add_argument("--name", help="display name (only with a single file)")
    ingest.add_argument(
        "--url", help="upload through a running server's API (e.g. http://127.0.0.1:8000)"
    )

    documents = commands.add_parser(
        "documents", help="list stored documents", description="List stored documents."
    )
    documents.add_argument("--collection", help="only this collection")
    documents.add_argument("--json", action="store_true", help="print JSON instead of a table")

    delete = commands.add_parser(
        "delete",
        help="delete a document and all its versions",
        description="Delete a document and all its versions.",
    )
    delete.add_argument("doc_id")

    search = commands.add_parser(
        "search",
        help="show the blocks retrieval returns for a question",
        description="Hybrid retrieval (dense + BM25, fused) for one query.",
    )
    search.add_argument("query")
    search.add_argument("--collection", help="collection to search (default: default)")
    search.add_argument("--top-k", type=int, help="blocks to return (STREAM_RAG_TOP_K)")
    search.add_argument("--dense-weight", type=float, help="weight of the dense branch")
    search.add_argument("--bm25-weight", type=float, help="weight of the BM25 branch")
    search.add_argument("--fusion", choices=["weighted", "rrf"], help="fusion method")
    search.add_argument("--json", action="store_true", help="print the full JSON result")

    ask = commands.add_parser(
        "ask",
        help="answer a question with verified, cited sentences",
        description="Stream a gated answer: only sentences whose citations check out are "
        "printed, as they arrive, then the sources. Exit 0 with an answer, 3 when the answer "
        "is a refusal, 1 on an error.",
    )
    ask.add_argument("question")
    ask.add_argument("--collection", help="collection to ask (default: default)")
    ask.add_argument("--top-k", type=int, help="blocks to retrieve (STREAM_RAG_TOP_K)")
    ask.add_argument("--url", help="ask a running server instead of opening the data directory")
    ask.add_argument(
        "--no-stream",
        action="store_true",
        help="wait for the whole verified answer (one regeneration if a draft fails)",
    )

    fake = commands.add_parser(
        "fake-llm",
        help="run a scripted OpenAI-compatible chat server (for tests and load tests)",
        description="An OpenAI-compatible /v1/chat/completions that answers from the prompt's "
        "blocks and fabricates at the given rates (0..1), deterministically per seed.",
    )
    fake.add_argument("--host", default="127.0.0.1")
    fake.add_argument("--port", type=int, default=8001)
    fake.add_argument("--seed", type=int, default=0)
    for behaviour in (
        "unissued",
        "wrong-block",
        "changed-number",
        "extra-claim",
        "paraphrase",
        "split-markers",
        "label-markers",
    ):
        fake.add_argument(f"--{behaviour}", type=float, default=0.0, metavar="RATE")
    fake.add_argument("--tokens-per-second", type=float, default=0.0, help="0: no pacing")
    fake.add_argument("--stall-after", type=int, help="pause after this many tokens")
    fake.add_argument("--stall-s", type=float, default=0.0, help="length of that pause")
    fake.add_argument("--error-after", type=int, help="break the stream after this many tokens")
    fake.add_argument("--fix-on-retry", action="store_true", help="answer retries faithfully")
    fake.add_argument(
        "--reject-field",
        action="append",
        default=[],
        metavar="NAME",
        help="refuse requests carrying this field with 400, as strict servers do (repeatable)",
    )

    cli_keys.add_parser(commands)
    loadtest.add_parser(commands)

    optimize = commands.add_parser(
        "optimize",
        help="give the embedded index HNSW graphs (large collections), while serving",
        description="Build HNSW graphs for large segments of the embedded index on a copy, in "
        "a child process, and swap it in; searches go on meanwhile and writes wait. With --url "
        "a running server does it (POST /v1/index/optimize, admin).",
    )
    optimize.add_argument("--url", help="ask this running server to optimise its index")
    optimize.add_argument("--api-key", help="admin key for --url (default: STREAM_RAG_API_KEY)")

    commands.add_parser(
        "reindex",
        help="rebuild the index from the stored documents",
        description="Re-index every document's newest version (after changing the embedder).",
    )

    doctor = commands.add_parser(
        "doctor",
        help="compare the index with the stored documents; --repair fixes the differences",
        description="Compare index points with the live chunks and the BM25 statistics of "
        "the index with the store; print the differences. Exits 1 if any remain.",
    )
    doctor.add_argument(
        "--repair",
        action="store_true",
        help="drop extra points, index missing chunks, recount BM25 statistics, vacuum",
    )

    evaluate = commands.add_parser(
        "eval", help="measure retrieval on a BEIR data set", description="Evaluations."
    )
    kinds = evaluate.add_subparsers(dest="kind", required=True, metavar="KIND")
    retrieval = kinds.add_parser(
        "retrieval",
        help="nDCG@10, MRR@10, Recall@10/100 and latency per retrieval mode",
        description="Index a BEIR-layout data set (corpus.jsonl, queries.jsonl, "
        "qrels/<split>.tsv) into a throwaway index and print one row per mode.",
    )
    retrieval.add_argument("--beir", type=Path, required=True, metavar="DIR")
    retrieval.add_argument("--mode", choices=["dense", "bm25", "hybrid", "all"], default="all")
    retrieval.add_argument("--split", default="test", help="qrels split (default: test)")
    # Defaults: the service's (STREAM_RAG_DENSE_WEIGHT, _BM25_WEIGHT, _TITLE_WEIGHT).
    retrieval.add_argument("--dense-weight", type=float)
    retrieval.add_argument("--bm25-weight", type=float)
    retrieval.add_argument("--title-weight", type=float, help="FAQ question matching")
    retrieval.add_argument("--fusion", choices=["weighted", "rrf"], default="weighted")
    gate = kinds.add_parser(
        "gate",
        help="supported-pass and unsupported-reject rates of the citation gate",
        description="Judge labelled sentences with the gate. FILE: JSONL, one object a line, "
        '{"sentence", "blocks": [texts], "cited": [1-based numbers], "label": bool}.',
    )
    gate.add_argument("--data", type=Path, required=True, metavar="FILE")
    gate.add_argument("--threshold", type=float, help="substance threshold (default: tuned)")
    gate.add_argument("--curve", action="store_true", help="also sweep thresholds 0.30..0.90")
    gate.add_argument(
        "--stages",
        choices=["lexical", "all"],
        default="all",
        help="lexical stage only, or every configured stage (default: all)",
    )
    answers = kinds.add_parser(
        "answers",
        help="answered, gold-cited, refusal and conflict rates of whole answers",
        description="Ingest a knowledge base into a throwaway data directory and ask every "
        'question through the /v1/answer code path. FILE: JSONL, {"question", "history"?: '
        '[{"question", "answer"}], "gold": [file names] | null, "expect": '
        '"answer"|"refuse"|"conflict"}.',
    )
    answers.add_argument("--kb", type=Path, required=True, metavar="DIR")
    answers.add_argument("--questions", type=Path, required=True, metavar="FILE")
    answers.add_argument("--verbose", action="store_true", help="list every missed expectation")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env(data_dir=args.data_dir)
        if args.command == "serve":
            return _serve(settings, args)
        if args.command == "eval":
            return _eval(settings, args)
        if args.command == "keys":
            return cli_keys.run(settings, args)
        if args.command == "fake-llm":
            return cli_ask.fake_llm(args)
        if args.command == "loadtest":
            return loadtest.run(args)
        if args.command == "optimize" and args.url:
            return _optimize_remote(args)
        if args.command == "ask" and args.url:
            return cli_ask.ask_remote(args)
        if args.command == "ingest" and args.url:
            return _ingest_remote(settings, args)
        if args.command in ("documents",):
            store = _open(settings)
            try:
                return _documents(store, args)
            finally:
                store.close()
        services = open_services(settings)
        try:
            if args.command == "ingest":
                return _ingest(services, args)
            if args.command == "delete":
                document = services.store.get(args.doc_id)
                services.indexer.delete(args.doc_id)
                print(f"deleted {document.id} ({document.name}, {len(document.versions)} versions)")
                return 0
            if args.command == "search":
                return _search(services, args)
            if args.command == "reindex":
                return _reindex(services)
            if args.command == "doctor":
                from ..index.doctor import command

                return command(services.indexer, fix=args.repair)
            if args.command == "optimize":
                return _optimize(services)
            if args.command == "ask":
                return cli_ask.ask(services, args)
        finally:
            services.close()
    except StreamRagError as exc:
        print(f"stream-rag: error: {exc.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    raise AssertionError(f"unhandled command {args.command}")


def _open(settings: Settings) -> DocumentStore:
    from ..services import open_store

    return open_store(settings)


# -- serve ------------------------------------------------------------------------------------


def json_request_log() -> None:
    """Send the JSON request log (`stream_rag.access`) to stderr, one line per request."""
    import logging

    from ..http.telemetry import access_log

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    access_log.addHandler(handler)
    access_log.setLevel(logging.INFO)
    access_log.propagate = False


def _serve(settings: Settings, args: argparse.Namespace) -> int:
    from ..http.app import create_app
    from ..http.serving import build_server

    settings = settings.with_overrides(host=args.host, port=args.port)
    ring = KeyRing.open(settings)
    if args.init_key and ring.empty:
        cli_keys.print_first_key(settings)
        ring.reload()
    check_open_mode(settings, ring)  # before loading anything
    if args.sample:
        store = _open(settings)
        try:
            report = ingest_paths(store, [sample_kb_dir()], settings, quiet=True)
        finally:
            store.close()
        print(
            f"sample knowledge base: {len(report.added)} added, "
            f"{len(report.duplicates)} already stored",
            file=sys.stderr,
        )
    print(f"serving on http://{settings.host}:{settings.port}", file=sys.stderr)
    if settings.ungated_baseline:
        print("WARNING: STREAM_RAG_UNGATED_BASELINE: answers are NOT verified", file=sys.stderr)
    if settings.access_log:
        json_request_log()
    build_server(create_app(settings), settings).run()
    return 0


# -- ingest -----------------------------------------------------------------------------------


def _ingest(services: Services, args: argparse.Namespace) -> int:
    if args.name and (len(args.paths) != 1 or args.paths[0].is_dir()):
        print("stream-rag: error: --name needs exactly one file", file=sys.stderr)
        return 2
    # Catch up first (work a crash left, or a changed embedder), and record the index's
    # fingerprint, so the next `serve` does not index everything again.
    for doc_id, version in services.indexer.reconcile():
        services.indexer.index_version(doc_id, version)
    report = ingest_paths(
        services.store,
        args.paths,
        services.settings,
        indexer=services.indexer,
        collection=args.collection,
        name=args.name,
    )
    return _print_report(report)


def _ingest_remote(settings: Settings, args: argparse.Namespace) -> int:
    import httpx

    report = IngestReport()
    files = list(iter_files(args.paths))
    progress = Progress(len(files))
    fields = {k: v for k, v in (("collection", args.collection), ("name", args.name)) if v}
    with httpx.Client(base_url=args.url, timeout=300, headers=cli_keys.client_headers()) as client:
        for path in files:
            try:
                with path.open("rb") as fh:
                    response = client.post(
                        "/v1/documents", files={"file": (path.name, fh)}, data=fields
                    )
            except OSError as exc:
                report.failed.append((path, exc.strerror or str(exc)))
            except httpx.HTTPError as exc:
                print(f"stream-rag: error: cannot reach {args.url}: {exc}", file=sys.stderr)
                return 1
            else:
                body = response.json()
                if response.status_code in (200, 201):
                    result = UploadResult.from_json(body)
                    bucket = report.duplicates if result.duplicate else report.added
                    bucket.append((path, result))
                else:
                    report.failed.append((path, body.get("error", {}).get("message", "?")))
            progress.advance(path.name)
    progress.close()
    return _print_report(report)


def _print_report(report: IngestReport) -> int:
    for path, result in report.added:
        print(f"added      {result.document.id}  v{result.version.version}  {path}")
    for path, result in report.duplicates:
        print(f"duplicate  {result.document.id}  v{result.version.version}  {path}")
    for path, reason in report.failed:
        print(f"failed     {path}: {reason}")
    print(
        f"summary: {len(report.added)} added, {len(report.duplicates)} duplicates, "
        f"{len(report.failed)} failed"
    )
    return 1 if report.failed else 0


# -- search, reindex, eval --------------------------------------------------------------------


def _search(services: Services, args: argparse.Namespace) -> int:
    import anyio

    weights = None
    if args.dense_weight is not None or args.bm25_weight is not None:
        weights = {"dense": args.dense_weight or 0.0, "bm25": args.bm25_weight or 0.0}

    async def run() -> SearchResult:
        try:
            return await services.retriever.search(
                args.query,
                collection=args.collection,
                top_k=args.top_k,
                weights=weights,
                fusion=args.fusion,
            )
        finally:
            await services.aclose()

    result = anyio.run(run)
    if args.json:
        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
        return 0
    print(f"# {result.dense}; rerank {result.rerank}; {result.timings_ms['total']:.1f} ms")
    for block in result.blocks:
        scores = "  ".join(f"{k} {v:.3f}" for k, v in block.scores.items())
        print(f"[{block.n}] {block.name}  ({block.doc_id} v{block.version})  {scores}")
        snippet = " ".join(block.text.split())
        print(f"    {snippet[:160]}{'…' if len(snippet) > 160 else ''}")
    if not result.blocks:
        print("no blocks matched")
    return 0


def _optimize(services: Services) -> int:
    build = getattr(services.index, "build_hnsw", None)
    if build is None:
        print("stream-rag: error: a Qdrant server builds its own HNSW graphs", file=sys.stderr)
        return 2
    timings = build()
    print(
        " ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in timings.items())
    )
    return 0


def _optimize_remote(args: argparse.Namespace) -> int:
    import os

    import httpx

    key = args.api_key or os.environ.get("STREAM_RAG_API_KEY")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    url = f"{args.url.rstrip('/')}/v1/index/optimize"
    response = httpx.post(url, headers=headers, timeout=httpx.Timeout(30.0, read=None))
    print(response.text)
    return 0 if response.status_code == 200 else 1


def _reindex(services: Services) -> int:
    work = services.store.newest_versions()
    services.store.set_indexing(work)
    progress = Progress(len(work))
    for doc_id, version in work:
        services.indexer.index_version(doc_id, version)
        progress.advance(doc_id)
    progress.close()
    services.store.set_meta("index_fingerprint", services.indexer.fingerprint)
    failed = [d for d in services.store.list_documents() if d.latest.status == "failed"]
    print(f"reindexed {len(work) - len(failed)} documents, {len(failed)} failed")
    for document in failed:
        print(f"failed     {document.id}: {document.latest.status_reason}")
    return 1 if failed else 0


def _eval(settings: Settings, args: argparse.Namespace) -> int:
    if args.kind == "gate":
        return _eval_gate(settings, args)
    if args.kind == "answers":
        from ..answer.evaluate import main as eval_answers

        return eval_answers(settings, args)
    from ..embed.backends import build_embedder
    from ..retrieve.evaluate import MODES, evaluate_retrieval, format_reports
    from ..retrieve.metrics import load_beir

    data = load_beir(args.beir, args.split)
    modes = list(MODES) if args.mode == "all" else [args.mode]
    embedder, status = (
        (None, "dense branch not needed") if modes == ["bm25"] else build_embedder(settings)
    )
    if embedder is None and modes != ["bm25"]:
        print(f"stream-rag: {status}; evaluating bm25 only", file=sys.stderr)
        modes = ["bm25"]
    weights = {
        "dense": settings.dense_weight if args.dense_weight is None else args.dense_weight,
        "bm25": settings.bm25_weight if args.bm25_weight is None else args.bm25_weight,
        "title": settings.title_weight if args.title_weight is None else args.title_weight,
    }
    print(
        f"# {args.beir}: {len(data.corpus)} documents, {len(data.queries)} judged queries; "
        f"{status}; fusion {args.fusion} " + " ".join(f"{k} {v}" for k, v in weights.items())
    )
    reports = evaluate_retrieval(
        data,
        modes,
        embedder,
        weights=weights,
        fusion=args.fusion,
        progress=lambda message: print(f"# {message}", file=sys.stderr),
    )
    print(format_reports(reports))
    return 0


def _eval_gate(settings: Settings, args: argparse.Namespace) -> int:
    from ..gate.evaluate import curve, judge, load, report, score
    from ..gate.lexical import DEFAULT_MAX_UNSUPPORTED, DEFAULT_THRESHOLD

    examples = load(args.data)
    if not examples:
        print(f"stream-rag: error: no examples in {args.data}", file=sys.stderr)
        return 1
    threshold = args.threshold or settings.gate_threshold or DEFAULT_THRESHOLD
    stages = None
    if args.stages == "all":
        from ..gate.evaluate import eval_stages

        stages, status = eval_stages(settings)
        print(status)
    result = score(examples, judge(examples, threshold, DEFAULT_MAX_UNSUPPORTED, stages))
    print(report(result, threshold, DEFAULT_MAX_UNSUPPORTED))
    if args.curve:
        print(curve(examples, DEFAULT_MAX_UNSUPPORTED))
    return 0


# -- ask, fake-llm ----------------------------------------------------------------------------


# -- documents --------------------------------------------------------------------------------


def _documents(store: DocumentStore, args: argparse.Namespace) -> int:
    documents = store.list_documents(args.collection)
    if args.json:
        print(json.dumps([d.to_json() for d in documents], indent=2, ensure_ascii=False))
        return 0
    if not documents:
        print("no documents")
        return 0
    print(f"{'ID':<24}  {'VER':>3}  {'CHUNKS':>6}  {'SIZE':>9}  {'COLLECTION':<12}  NAME")
    for d in documents:
        latest = d.latest
        print(
            f"{d.id:<24}  {latest.version:>3}  {latest.chunk_count:>6}  {latest.size:>9}  "
            f"{d.collection:<12}  {d.name}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
