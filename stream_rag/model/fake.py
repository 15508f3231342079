"""`stream-rag fake-llm`: an OpenAI-compatible chat server for tests and load tests.

Real HTTP, OpenAI's chunk objects and `data: [DONE]` framing. It answers from the blocks in
the prompt (as `build_messages` writes them) and misbehaves on purpose, each behaviour with a
rate, deterministically for a given seed and prompt:

- `faithful`: sentences quoted from the blocks with their right `[n]`
- `unissued`: cites a block number that was not issued
- `wrong_block`: a sentence from one block cited as another issued block
- `changed_number`: a quoted sentence with a number changed
- `extra_claim`: a quoted sentence with an unsupported clause added (paraphrase.py)
- `paraphrase`: a quoted sentence reworded, with synonyms, a fronted phrase or the passive;
  numbers unchanged (paraphrase.py). Faithful: the gate should pass it
- `split_markers`: markers streamed as `[`, `1`, `]`
- `label_markers`: markers before the sentence, like a list label (`[1] The refund...`)
- reports `usage` (words as tokens), also as a last chunk with `stream_options.include_usage`,
  and answers the follow-up rewrite request of `STREAM_RAG_CONDENSE=llm`
- `tokens_per_second`, `stall_after`/`stall_s` (a pause mid-stream), `error_after` (the
  stream breaks off), `fix_on_retry` (a request carrying feedback is answered faithfully),
  `reject_fields` (requests carrying these fields get 400, like a strict server)
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..language.followups import resolve
from ..prompt_format import CONDENSE_PROMPT, parse_blocks, parse_history, parse_question
from .extractive import NO_ANSWER, select, tokens_of
from .paraphrase import add_claim, paraphrase

FABRICATIONS = ("unissued", "wrong_block", "changed_number", "extra_claim")
# One roll per sentence picks at most one of these, in this order, each with its rate.
BEHAVIOURS = (*FABRICATIONS, "paraphrase")


@dataclass(frozen=True, slots=True)
class FakeConfig:
    seed: int = 0
    unissued: float = 0.0
    wrong_block: float = 0.0
    changed_number: float = 0.0
    extra_claim: float = 0.0
    paraphrase: float = 0.0
    split_markers: float = 0.0
    label_markers: float = 0.0
    sentences: int = 3
    tokens_per_second: float = 0.0
    stall_after: int | None = None
    stall_s: float = 0.0
    error_after: int | None = None
    fix_on_retry: bool = False
    model: str = "fake-llm"
    # Request fields refused with 400, as strict OpenAI-compatible servers refuse unknown ones.
    reject_fields: tuple[str, ...] = ()


# What a long-running fake (a load test's) remembers: the newest this many of each record.
KEEP = 10_000


@dataclass(slots=True)
class FakeStats:
    requests: int = 0
    completed: int = 0
    disconnected: int = 0
    disconnect_times: deque[float] = field(default_factory=lambda: deque(maxlen=KEEP))
    finished_at: deque[float] = field(default_factory=lambda: deque(maxlen=KEEP))
    # Per question, of its newest request: each streamed piece and when it was sent
    # (time.monotonic()). The oldest questions are forgotten past `keep`.
    timelines: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    keep: int = KEEP

    def timeline(self, question: str) -> list[tuple[str, float]]:
        """A new, empty timeline for a request asking `question`."""
        self.timelines.pop(question, None)  # re-inserted last: dicts keep insertion order
        while len(self.timelines) >= self.keep:
            del self.timelines[next(iter(self.timelines))]
        timeline: list[tuple[str, float]] = []
        self.timelines[question] = timeline
        return timeline


def compose(config: FakeConfig, messages: list[dict[str, str]]) -> tuple[list[str], list[str]]:
    """The answer as streamed pieces, and the behaviour used for each sentence."""
    prompt = next((m["content"] for m in messages if m.get("role") == "user"), "")
    retry = config.fix_on_retry and sum(m.get("role") == "user" for m in messages) > 1
    blocks = parse_blocks(prompt)
    # Seeded by the question and block texts, not the random document ids in the prompt, so
    # the same knowledge base and question script the same behaviour on every run.
    key = json.dumps([retry, parse_question(prompt), sorted(blocks.items())])
    seed = hashlib.sha256(f"{config.seed}\0{key}".encode()).digest()
    rng = random.Random(seed)
    # Like the local generator, it reads a follow-up with the earlier turns of the prompt.
    question = resolve(parse_question(prompt), parse_history(prompt))
    chosen = select(question, blocks, config.sentences)
    if not chosen:
        return tokens_of(NO_ANSWER), ["no_answer"]
    numbers = sorted(blocks)
    pieces: list[str] = []
    behaviours: list[str] = []
    for i, candidate in enumerate(chosen):
        text, n = candidate.text, candidate.n
        behaviour = "faithful"
        if not retry:
            roll = rng.random()
            for name in BEHAVIOURS:
                rate = getattr(config, name)
                if roll < rate:
                    behaviour = name
                    break
                roll -= rate
        if behaviour == "unissued":
            n = max(numbers) + rng.randint(1, 5)
        elif behaviour == "wrong_block":
            others = [m for m in numbers if m != n and text not in blocks[m]]
            if others:
                n = rng.choice(others)
            else:
                behaviour = "faithful"
        elif behaviour == "changed_number":
            text = _change_number(text, rng)
        elif behaviour == "extra_claim":
            text = add_claim(text, rng)
        elif behaviour == "paraphrase":
            text = paraphrase(text, rng)
        behaviours.append(behaviour)
        label = rng.random() < config.label_markers
        split = rng.random() < config.split_markers
        marker = ["[", str(n), "]"] if split else [f"[{n}]"]
        if label:
            pieces += [*marker, " ", *tokens_of(text)]
        else:
            pieces += [*tokens_of(text.rstrip()), " ", *marker]
        pieces.append(" " if i + 1 < len(chosen) else "")
    return [p for p in pieces if p], behaviours


def condense(messages: list[dict[str, str]]) -> list[str]:
    """A follow-up rewritten (`STREAM_RAG_CONDENSE=llm`): the last earlier question, then the
    follow-up, "How do firmware updates work: How long does it take?"; [] for other prompts."""
    if not messages or messages[0].get("content") != CONDENSE_PROMPT:
        return []
    request = next((m["content"] for m in messages if m.get("role") == "user"), "")
    earlier = [line[3:] for line in request.splitlines() if line.startswith("Q: ")]
    _, _, last = request.rpartition("Last question: ")
    rewritten = f"{earlier[-1].rstrip('?')}: {last.strip()}" if earlier else last.strip()
    return tokens_of(rewritten)


def _change_number(text: str, rng: random.Random) -> str:
    match = re.search(r"\d+", text)
    if match is None:
        return text.rstrip(".!?") + f", within {rng.randint(40, 90)} days."
    changed = str(int(match.group()) + rng.randint(3, 17))
    return text[: match.start()] + changed + text[match.end() :]


def create_fake_llm(config: FakeConfig | None = None) -> Starlette:
    config = config or FakeConfig()
    stats = FakeStats()

    async def completions(request: Request) -> Response:
        body = await request.json()
        stats.requests += 1
        refused = [name for name in config.reject_fields if name in body]
        if refused:
            message = f"Unrecognized request argument supplied: {refused[0]}"
            error = {"message": message, "type": "invalid_request_error", "param": refused[0]}
            return JSONResponse({"error": {**error, "code": None}}, status_code=400)
        messages = body.get("messages", [])
        pieces = condense(messages) or compose(config, messages)[0]
        # A word is a token here: real tokenizers differ, the point is that counts arrive.
        usage = {
            "prompt_tokens": sum(len(str(m.get("content", "")).split()) for m in messages),
            "completion_tokens": len(pieces),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        stream_options = body.get("stream_options") or {}
        model = body.get("model", config.model)
        created = int(time.time())
        completion_id = f"chatcmpl-{stats.requests}"
        if not body.get("stream"):
            stats.completed += 1
            return JSONResponse(
                {
                    "id": completion_id,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": "".join(pieces)},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": usage,
                }
            )

        def chunk(delta: dict[str, str], finish: str | None = None) -> bytes:
            payload = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return f"data: {json.dumps(payload)}\n\n".encode()

        # A token's chunk is the same bytes as `chunk({"content": piece})`, made by splicing
        # the piece into a template: the fake shares the cores with what it load-tests.
        head, _, tail = chunk({"content": "\0"}).partition(b'"\\u0000"')

        question = parse_question(
            next((m["content"] for m in messages if m.get("role") == "user"), "")
        )
        timeline = stats.timeline(question)

        async def events() -> AsyncIterator[bytes]:
            delay = 1 / config.tokens_per_second if config.tokens_per_second > 0 else 0.0
            # Paced on a schedule, like a model server: a late wake-up (a busy event loop)
            # does not push every later piece back. A client that leaves cancels this
            # generator (the response listens for the disconnect), which counts it below.
            due = anyio.current_time()
            try:
                yield chunk({"role": "assistant", "content": ""})
                for i, piece in enumerate(pieces):
                    if config.error_after is not None and i == config.error_after:
                        raise ConnectionAbortedError("fake-llm: scripted error mid-stream")
                    if config.stall_after is not None and i == config.stall_after:
                        await anyio.sleep(config.stall_s)
                        due += config.stall_s
                    if delay:
                        due += delay
                        await anyio.sleep(max(0.0, due - anyio.current_time()))
                    timeline.append((piece, time.monotonic()))
                    yield head + json.dumps(piece).encode() + tail
                yield chunk({}, "stop")
                if stream_options.get("include_usage"):
                    last: dict[str, object] = {"id": completion_id, "choices": [], "usage": usage}
                    last |= {"object": "chat.completion.chunk", "created": created, "model": model}
                    yield f"data: {json.dumps(last)}\n\n".encode()
                yield b"data: [DONE]\n\n"
                stats.completed += 1
                stats.finished_at.append(time.monotonic())
            except anyio.get_cancelled_exc_class():
                stats.disconnected += 1
                stats.disconnect_times.append(time.monotonic())
                raise

        return StreamingResponse(events(), media_type="text/event-stream")

    async def models(request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "object": "list",
                "data": [{"id": config.model, "object": "model", "owned_by": "fake"}],
            }
        )

    app = Starlette(
        routes=[
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
        ]
    )
    app.state.stats = stats
    app.state.config = config
    return app
