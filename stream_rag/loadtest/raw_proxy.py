"""The raw baseline of `stream-rag loadtest`: a pass-through proxy with no retrieval, no gate.

`POST /v1/chat {"question"}` sends the model the same kind of prompt the RAG path sends (the
bundled sample knowledge base's chunks as numbered blocks, fixed at start-up, so the model
writes answers of the same length) and relays each streamed piece as an SSE `token` event,
then `done`. What it costs per answer is the floor the gated path is compared with.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from ..answer.prompt import build_messages
from ..ingest.chunking import chunk_spans
from ..ingest.extract import extract_text, media_type_for
from ..model.stream import content_pieces
from ..retrieve.hybrid import Block


def fixed_blocks(folder: Path, limit: int = 8) -> list[Block]:
    """The first `limit` chunks of the files in `folder`, as blocks."""
    blocks: list[Block] = []
    for path in sorted(folder.iterdir()):
        text, _ = extract_text(path, media_type_for(path.name))
        for start, end in chunk_spans(text, 1000, 150):
            if len(blocks) == limit:
                return blocks
            n = len(blocks) + 1
            chunk = text[start:end]
            blocks.append(
                Block(
                    n, f"raw{n}", f"doc_raw{n}", 1, "", path.name, path.name, start, end, chunk, {}
                )
            )
    return blocks


def create_raw_proxy(model_url: str, model: str, blocks: list[Block]) -> Starlette:
    """`model_url` is the OpenAI-compatible base URL (ending in `/v1`)."""
    # The openai client's pool limits, as in the server. httpx's default keeps 20 idle
    # connections, and httpcore 1.0's pool then closes any idle connection while it holds more
    # than 20 in all, even one just handed to a request (which then fails if it had started).
    limits = httpx.Limits(max_connections=1000, max_keepalive_connections=100)
    client = httpx.AsyncClient(
        base_url=model_url, timeout=httpx.Timeout(60, read=20), limits=limits
    )

    async def chat(request: Request) -> Response:
        question = str((await request.json()).get("question", ""))
        payload = {
            "model": model,
            "stream": True,
            "messages": [m.to_json() for m in build_messages(question, blocks)],
        }

        async def events() -> AsyncIterator[str]:
            pieces = 0
            async with upstream_reply(client, payload) as upstream:
                async for piece in content_pieces(upstream.aiter_bytes()):
                    pieces += 1
                    yield f"event: token\ndata: {json.dumps({'text': piece})}\n\n"
            yield f"event: done\ndata: {json.dumps({'tokens': pieces})}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def healthz(request: Request) -> Response:
        return Response('{"status": "ok"}', media_type="application/json")

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await client.aclose()

    return Starlette(
        routes=[Route("/v1/chat", chat, methods=["POST"]), Route("/healthz", healthz)],
        lifespan=lifespan,
    )


@asynccontextmanager
async def upstream_reply(
    client: httpx.AsyncClient, payload: dict[str, object]
) -> AsyncIterator[httpx.Response]:
    """The model's streamed reply; the request is sent again when it failed before the reply
    on a reused connection (the model server closed it as idle: it never read the request)."""
    for attempt in range(_TRIES):
        connected = False

        async def trace(event: str, info: dict[str, object]) -> None:
            nonlocal connected
            connected = connected or event.startswith("connection.connect_tcp")

        request = client.build_request(
            "POST", "/chat/completions", json=payload, extensions={"trace": trace}
        )
        try:
            response = await client.send(request, stream=True)
        except httpx.TimeoutException:
            raise
        except httpx.TransportError:
            if connected or attempt + 1 == _TRIES:
                raise
            continue
        try:
            yield response
        finally:
            await response.aclose()
        return


# Sends of one request whose reused connections were closed: a few, as the pool's other
# connections that went idle together may be closing too.
_TRIES = 8


def main(argv: list[str] | None = None) -> int:
    """Serve the raw proxy (`stream-rag loadtest` starts it as a process of its own)."""
    import argparse

    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model-url", required=True, help="OpenAI-compatible base URL (…/v1)")
    parser.add_argument("--model", default="fake")
    args = parser.parse_args(argv)
    blocks = fixed_blocks(Path(__file__).resolve().parents[1] / "sample_kb")
    app = create_raw_proxy(args.model_url, args.model, blocks)
    # h11, as `stream-rag serve` runs: the baseline's HTTP layer costs what the server's does.
    uvicorn.run(
        app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False, http="h11"
    )
    return 0
