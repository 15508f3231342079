"""`stream-rag search` and `ask`: what retrieval finds for a question, and the gated answer."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..counts import counted
from ..retrieve.hybrid import SearchResult
from ..services import Services
from . import remote


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`search`, `ask`."""
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
    search.add_argument(
        "--url",
        type=remote.server_url,
        help="search through a running server's API (POST /v1/search, a read key)",
    )

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
    ask.add_argument(
        "--url",
        type=remote.server_url,
        help="ask a running server instead of opening the data directory",
    )
    ask.add_argument(
        "--no-stream",
        action="store_true",
        help="wait for the whole verified answer (one regeneration if a draft fails)",
    )


def search(services: Services, args: argparse.Namespace) -> int:
    import anyio

    async def run() -> SearchResult:
        try:
            return await services.retriever.search(
                args.query,
                collection=args.collection,
                top_k=args.top_k,
                weights=_weights(args),
                fusion=args.fusion,
            )
        finally:
            await services.aclose()

    return _print_search(anyio.run(run).to_json(), args)


def search_remote(args: argparse.Namespace) -> int:
    fields = {
        "query": args.query,
        "collection": args.collection,
        "top_k": args.top_k,
        "weights": _weights(args),
        "fusion": args.fusion,
    }
    try:
        response = remote.call(
            args.url, "POST", "/v1/search", json={k: v for k, v in fields.items() if v is not None}
        )
        result = remote.body(response)
        if not isinstance(result, dict) or not isinstance(result.get("blocks"), list):
            raise remote.RemoteFailed(f"{args.url} answered /v1/search without blocks")
    except remote.RemoteFailed as exc:
        return remote.fail(exc)
    return _print_search(result, args)


def _weights(args: argparse.Namespace) -> dict[str, float] | None:
    if args.dense_weight is None and args.bm25_weight is None:
        return None
    return {"dense": args.dense_weight or 0.0, "bm25": args.bm25_weight or 0.0}


def _print_search(result: dict[str, Any], args: argparse.Namespace) -> int:
    """`result` as `SearchResult.to_json` gives it (here or from a server)."""
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    total = result.get("timings_ms", {}).get("total", 0.0)
    print(f"# {result.get('dense')}; rerank {result.get('rerank')}; {total:.1f} ms")
    for block in result["blocks"]:
        scores = "  ".join(f"{k} {v:.3f}" for k, v in block["scores"].items())
        print(f"[{block['n']}] {block['name']}  ({block['doc_id']} v{block['version']})  {scores}")
        snippet = " ".join(block["text"].split())
        print(f"    {snippet[:160]}{'…' if len(snippet) > 160 else ''}")
    if not result["blocks"]:
        print("no blocks matched")
    return 0


def ask(services: Services, args: argparse.Namespace) -> int:
    import anyio

    if args.no_stream:
        return _ask_whole(services, args)

    from ..answer.pipeline import Answerer, Options

    async def run(answerer: Answerer) -> int:
        printer = AnswerPrinter()
        try:
            options = Options(collection=args.collection, top_k=args.top_k)
            async for event in answerer.stream(args.question, options):
                printer.show(event.name, event.data())
        finally:
            await services.aclose()
        return printer.exit_code()

    return anyio.run(run, services.answerer)


def _ask_whole(services: Services, args: argparse.Namespace) -> int:
    import anyio

    from ..answer.pipeline import AnswerResult, Options

    async def run() -> AnswerResult:
        try:
            options = Options(collection=args.collection, top_k=args.top_k)
            return await services.answerer.answer(args.question, options)
        finally:
            await services.aclose()

    return _print_whole(anyio.run(run).to_json())


def _print_whole(body: dict[str, Any]) -> int:
    """`body` as `AnswerResult.to_json` gives it (here or from a server's /v1/answer)."""
    printer = AnswerPrinter()
    printer.show("sources", {"generator": body.get("generator"), "blocks": body["sources"]})
    for sentence in body["sentences"]:
        printer.show("sentence", sentence)
    if body.get("refusal") is not None:
        printer.show("refusal", body["refusal"])
    print(f"# {counted(len(body.get('attempts') or []), 'attempt')}", file=sys.stderr)
    printer.show("done", {"uncovered": body.get("uncovered") or []})
    return printer.exit_code()


def _ask_whole_remote(args: argparse.Namespace) -> int:
    fields = {"question": args.question, "collection": args.collection, "top_k": args.top_k}
    try:
        response = remote.call(
            args.url, "POST", "/v1/answer", json={k: v for k, v in fields.items() if v is not None}
        )
        body = remote.body(response)
        if not isinstance(body, dict) or not all(
            isinstance(body.get(k), list) for k in ("sources", "sentences")
        ):
            raise remote.RemoteFailed(f"{args.url} answered /v1/answer without an answer")
    except remote.RemoteFailed as exc:
        return remote.fail(exc)
    return _print_whole(body)


def ask_remote(args: argparse.Namespace) -> int:
    if args.no_stream:
        return _ask_whole_remote(args)  # POST /v1/answer, as --no-stream is locally
    import httpx

    from ..sse import parse_lines
    from .keys import client_headers, error_message

    body = {"question": args.question, "collection": args.collection, "top_k": args.top_k}
    printer = AnswerPrinter()
    try:
        with httpx.stream(
            "POST",
            f"{args.url.rstrip('/')}/v1/chat",
            json={k: v for k, v in body.items() if v is not None},
            headers=client_headers(),
            timeout=httpx.Timeout(30, read=120),
        ) as response:
            if response.status_code != 200:
                response.read()
                print(f"stream-rag: error: {error_message(response)}", file=sys.stderr)
                return 1
            for event in parse_lines(response.iter_lines()):
                printer.show(event.event, event.json())
    except httpx.HTTPError as exc:
        print(f"stream-rag: error: cannot reach {args.url}: {exc}", file=sys.stderr)
        return 1
    except ValueError:  # an event whose data is not JSON: not a stream_rag server
        print(f"stream-rag: error: {args.url} sent an event that is not JSON", file=sys.stderr)
        return 1
    return printer.exit_code()


class AnswerPrinter:
    """Prints verified sentences as they come, then the sources they cite."""

    def __init__(self) -> None:
        self.sources: list[dict[str, object]] = []
        self.cited: set[int] = set()
        self.refused = False
        self.failed = False

    def show(self, name: str, data: dict[str, object]) -> None:
        if name == "sources":
            blocks = data.get("blocks")
            self.sources = list(blocks) if isinstance(blocks, list) else []
            print(f"# generator: {data.get('generator')}", file=sys.stderr)
        elif name == "sentence":
            citations = data.get("citations")
            numbers = [int(c["n"]) for c in citations] if isinstance(citations, list) else []
            self.cited.update(numbers)
            print(f"{data.get('text')} " + "".join(f"[{n}]" for n in numbers), flush=True)
        elif name == "refusal":
            self.refused = True
            print(f"(refused: {data.get('reason')}) {data.get('message')}", flush=True)
        elif name == "error":
            self.failed = True
            print(f"stream-rag: error: {data.get('code')}: {data.get('message')}", file=sys.stderr)
        elif name == "done" and self.cited:
            # What the question asked that no source covers, as the widget says it: without
            # it the answer's silence on that part reads as a "no".
            gaps = data.get("uncovered")
            asked = (
                [g.get("question") for g in gaps if isinstance(g, dict)]
                if isinstance(gaps, list)
                else []
            )
            if asked:
                print(f"The sources do not cover: {' '.join(map(str, asked))}")
            print("\nSources:")
            for source in self.sources:
                if source.get("n") in self.cited:
                    print(
                        f"[{source['n']}] {source['name']} ({source['doc_id']} "
                        f"v{source['version']}) {source['url']}"
                    )

    def exit_code(self) -> int:
        return 1 if self.failed else 3 if self.refused else 0
