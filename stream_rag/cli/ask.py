"""The `ask` and `fake-llm` commands."""

from __future__ import annotations

import argparse
import json
import sys

from ..services import Services


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

    result = anyio.run(run)
    body = result.to_json()
    printer = AnswerPrinter()
    printer.show("sources", {"generator": result.generator, "blocks": body["sources"]})
    for sentence in result.sentences:
        printer.show("sentence", sentence.data())
    if result.refusal is not None:
        printer.show("refusal", result.refusal.data())
    print(f"# {len(result.attempts)} attempt(s)", file=sys.stderr)
    printer.show("done", {})
    return printer.exit_code()


def ask_remote(args: argparse.Namespace) -> int:
    import httpx

    from .keys import client_headers

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
                message = response.json().get("error", {}).get("message", response.text)
                print(f"stream-rag: error: {message}", file=sys.stderr)
                return 1
            name = "message"
            for line in response.iter_lines():
                if line.startswith("event:"):
                    name = line.partition(":")[2].strip()
                elif line.startswith("data:"):
                    printer.show(name, json.loads(line.partition(":")[2]))
                    name = "message"
    except httpx.HTTPError as exc:
        print(f"stream-rag: error: cannot reach {args.url}: {exc}", file=sys.stderr)
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
            print("\nSources:")
            for source in self.sources:
                if source.get("n") in self.cited:
                    print(
                        f"[{source['n']}] {source['name']} ({source['doc_id']} "
                        f"v{source['version']}) {source['url']}"
                    )

    def exit_code(self) -> int:
        return 1 if self.failed else 3 if self.refused else 0


def fake_llm(args: argparse.Namespace) -> int:
    import uvicorn

    from ..model.fake import FakeConfig, create_fake_llm

    config = FakeConfig(
        seed=args.seed,
        unissued=args.unissued,
        wrong_block=args.wrong_block,
        changed_number=args.changed_number,
        extra_claim=args.extra_claim,
        paraphrase=args.paraphrase,
        split_markers=args.split_markers,
        label_markers=args.label_markers,
        tokens_per_second=args.tokens_per_second,
        stall_after=args.stall_after,
        stall_s=args.stall_s,
        error_after=args.error_after,
        fix_on_retry=args.fix_on_retry,
        reject_fields=tuple(args.reject_field),
    )
    print(f"fake-llm on http://{args.host}:{args.port}/v1", file=sys.stderr)
    uvicorn.run(create_fake_llm(config), host=args.host, port=args.port, log_level="warning")
    return 0
