"""`stream-rag fake-llm`: an OpenAI-compatible chat server for tests and load tests.

Real HTTP, OpenAI's chunk objects and `data: [DONE]` framing. It answers from the blocks in
the prompt (as `build_messages` writes them) and misbehaves on purpose, each behaviour with a
rate, deterministically for a given seed and prompt:

- `faithful`: sentences quoted from the blocks with their right `[n]`
- `unissued`: cites a block number that was not issued
- `wrong_block`: a sentence from one block cited as another issued block
- `changed_number`: a quoted sentence with a number changed
- `extra_claim`: a quoted sentence with an unsupported clause added (paraphrase.py)
- `negate`, `swap_numbers`, `swap_entities`, `append_clause`, `move_markers`, `markup`,
  `invisible`: a false sentence built from the cited block's own (attacks.py)
- the red team's families (`RED_TEAM`: bounds, quantifiers, modals, antonyms, conditions
  dropped, framings, double negation, "not only", excess words, units, numbers in words,
  calendar, ranges, separators, a value from another block, look-alike letters, markup inside
  a word), each writing faithful controls one time in four (redteam.py, redteam_knobs.py)
- `paraphrase`: a quoted sentence reworded, with synonyms, a fronted phrase or the passive;
  numbers unchanged (paraphrase.py). Faithful: the gate should pass it
- `split_markers`: markers streamed as `[`, `1`, `]`
- `label_markers`: markers before the sentence, like a list label (`[1] The refund...`)
- keeps a ledger of what it wrote, sentence by sentence, with which are false
  (`GET /fake/ledger?after=N`), so a benchmark knows the truth without guessing, and the
  order in which each prompt offered its blocks (`stats.offered`)
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
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ..language.followups import resolve
from ..prompt_format import CONDENSE_PROMPT, parse_blocks, parse_history, parse_question
from .attacks import ATTACKS, Written, attack
from .extractive import NO_ANSWER, select, tokens_of
from .fake_stream import plan, send_plan
from .ledger import match, records
from .paraphrase import add_claim, paraphrase
from .redteam_knobs import RED_TEAM, red_team

FABRICATIONS = ("unissued", "wrong_block", "changed_number", "extra_claim")
# One roll per sentence picks at most one of these, in this order, each with its rate.
BEHAVIOURS = (*FABRICATIONS, *ATTACKS, *RED_TEAM, "paraphrase")


@dataclass(frozen=True, slots=True)
class FakeConfig:
    seed: int = 0
    unissued: float = 0.0
    wrong_block: float = 0.0
    changed_number: float = 0.0
    extra_claim: float = 0.0
    negate: float = 0.0
    swap_numbers: float = 0.0
    swap_entities: float = 0.0
    append_clause: float = 0.0
    move_markers: float = 0.0
    markup: float = 0.0
    invisible: float = 0.0
    # The red team's families (redteam.py, redteam_knobs.py), with faithful controls.
    bound_flip: float = 0.0
    quantifier: float = 0.0
    modal_flip: float = 0.0
    antonym_swap: float = 0.0
    drop_condition: float = 0.0
    restate: float = 0.0
    double_negation: float = 0.0
    not_only: float = 0.0
    exaggerate: float = 0.0
    unit_swap: float = 0.0
    number_words: float = 0.0
    calendar: float = 0.0
    range_shift: float = 0.0
    separators: float = 0.0
    cross_block: float = 0.0
    lookalike: float = 0.0
    smuggle: float = 0.0
    subject_swap: float = 0.0
    predicate_join: float = 0.0
    list_extend: float = 0.0
    novel_word: float = 0.0
    qualifier: float = 0.0
    scope_widen: float = 0.0
    causal_link: float = 0.0
    condition_add: float = 0.0
    sides_swap: float = 0.0
    bound_drop: float = 0.0
    fraction: float = 0.0
    due_to: float = 0.0
    role_swap: float = 0.0
    weaken: float = 0.0
    certain: float = 0.0
    comparative: float = 0.0
    foreign: float = 0.0
    parts_mix: float = 0.0
    condition_flip: float = 0.0
    obligation: float = 0.0
    unit_change: float = 0.0
    only_shift: float = 0.0
    rates: float = 0.0
    paraphrase: float = 0.0
    split_markers: float = 0.0
    label_markers: float = 0.0
    sentences: int = 3
    tokens_per_second: float = 0.0
    stall_after: int | None = None
    stall_s: float = 0.0
    error_after: int | None = None
    fix_on_retry: bool = False
    # A request carrying feedback gets the same draft less the sentences it names, as a model
    # following the revision request would write it (the hostile benchmark's); else the same.
    revise_on_retry: bool = False
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
    # What each request was answered with: (request number, question, sentences written).
    ledger: deque[tuple[int, str, tuple[Written, ...]]] = field(
        default_factory=lambda: deque(maxlen=KEEP)
    )
    # Per answering request: (request number, the block numbers in the order its prompt
    # offers them), so a test sees which block a model is shown first.
    offered: deque[tuple[int, tuple[int, ...]]] = field(default_factory=lambda: deque(maxlen=KEEP))

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
    written = write(config, messages)
    return _streamed(written), [w.behaviour for w in written] or ["no_answer"]


def write(config: FakeConfig, messages: list[dict[str, str]]) -> list[Written]:
    """The answer's sentences, each as written and with what it is; [] for no answer."""
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
    numbers = sorted(blocks)
    out: list[Written] = []
    for candidate in chosen:
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
        written: Written | None = None
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
        elif behaviour in ATTACKS:
            written = attack(behaviour, n, text, blocks, rng)
            behaviour = behaviour if written is not None else "faithful"
        elif behaviour in RED_TEAM:
            written = red_team(behaviour, n, text, blocks, rng)
            behaviour = behaviour if written is not None else "faithful"
        label = rng.random() < config.label_markers
        split = rng.random() < config.split_markers
        if written is not None:
            out.append(written)
            continue
        marker = ["[", str(n), "]"] if split else [f"[{n}]"]
        if label:
            pieces = (*marker, " ", *tokens_of(text))
        else:
            pieces = (*tokens_of(text.rstrip()), " ", *marker)
        false = behaviour in FABRICATIONS
        out.append(Written(behaviour, "", pieces, (n,), candidate.n, false, false))
    feedback = [m.get("content", "") for m in messages if m.get("role") == "user"][1:]
    if config.revise_on_retry and feedback:
        return revised(out, [text for f in feedback for text in failed_sentences(f)])
    return out


# A sentence the revision request (answer/results.py's `revision_request`) says failed.
_FAILED = re.compile(r'^- sentence \d+ "(.*?)": [a-z_]+ \(', re.MULTILINE | re.DOTALL)


def failed_sentences(feedback: str) -> list[str]:
    """The sentences a revision request quotes as failed."""
    return _FAILED.findall(feedback)


def revised(written: list[Written], failed: list[str]) -> list[Written]:
    """`written` less each sentence a failed one came from (a written sentence may have been
    judged as several units: a heading and its item)."""
    ledger = records([{"sentences": [w.to_json() for w in written]}])
    dropped = {found.text for text in failed if (found := match(text, ledger)[0]) is not None}
    return [w for w in written if w.text not in dropped]


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


def _streamed(written: list[Written]) -> list[str]:
    if not written:
        return tokens_of(NO_ANSWER)
    pieces: list[str] = []
    for i, sentence in enumerate(written):
        pieces += sentence.pieces
        pieces.append(" " if i + 1 < len(written) else "")
    return [p for p in pieces if p]


COMPLETIONS = "/v1/chat/completions"
LEDGER = "/fake/ledger"


class FakeLLM(Starlette):
    """The fake's app: streamed completions are taken straight from the server, past the
    middleware's per-message `send` wrappers; everything else goes through Starlette."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == COMPLETIONS:
            scope["app"] = self
            await self.state.completions(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)


class Completions:
    """`POST /v1/chat/completions` as a plain ASGI app."""

    def __init__(self, config: FakeConfig, stats: FakeStats) -> None:
        self.config, self.stats = config, stats

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        config, stats = self.config, self.stats
        raw = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            raw += message.get("body", b"")
            if not message.get("more_body", False):
                break
        body = json.loads(raw)
        stats.requests += 1
        refused = [name for name in config.reject_fields if name in body]
        if refused:
            text = f"Unrecognized request argument supplied: {refused[0]}"
            error = {"message": text, "type": "invalid_request_error", "param": refused[0]}
            reply = JSONResponse({"error": {**error, "code": None}}, status_code=400)
            return await reply(scope, receive, send)
        messages = body.get("messages", [])
        pieces = condense(messages)
        if not pieces:
            written = write(config, messages)
            prompt = next((m["content"] for m in messages if m.get("role") == "user"), "")
            stats.ledger.append((stats.requests, parse_question(prompt), tuple(written)))
            stats.offered.append((stats.requests, tuple(parse_blocks(prompt))))
            pieces = _streamed(written)
        # A word is a token here: real tokenizers differ, the point is that counts arrive.
        usage = {
            "prompt_tokens": sum(len(str(m.get("content", "")).split()) for m in messages),
            "completion_tokens": len(pieces),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        fields = {
            "id": f"chatcmpl-{stats.requests}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", config.model),
        }
        if not body.get("stream"):
            stats.completed += 1
            choice = {
                "index": 0,
                "message": {"role": "assistant", "content": "".join(pieces)},
                "finish_reason": "stop",
            }
            whole = {**fields, "object": "chat.completion", "choices": [choice], "usage": usage}
            return await JSONResponse(whole)(scope, receive, send)
        asked = (body.get("stream_options") or {}).get("include_usage")
        reply_plan = plan(config, pieces, fields, usage if asked else None)
        prompt = next((m["content"] for m in messages if m.get("role") == "user"), "")
        timeline = stats.timeline(parse_question(prompt))
        await send_plan(reply_plan, receive, send, stats, timeline)


def create_fake_llm(config: FakeConfig | None = None) -> Starlette:
    config = config or FakeConfig()
    stats = FakeStats()
    completions = Completions(config, stats)

    async def models(request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "object": "list",
                "data": [{"id": config.model, "object": "model", "owned_by": "fake"}],
            }
        )

    async def ledger(request: Request) -> JSONResponse:
        try:
            after = int(request.query_params.get("after", "0"))
        except ValueError:
            return JSONResponse({"error": "'after' must be a request number"}, status_code=400)
        entries = [
            {"request": k, "question": q, "sentences": [w.to_json() for w in written]}
            for k, q, written in stats.ledger
            if k > after
        ]
        return JSONResponse({"requests": stats.requests, "entries": entries})

    app = FakeLLM(
        routes=[
            Route(COMPLETIONS, completions, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route(LEDGER, ledger, methods=["GET"]),
        ]
    )
    app.state.stats = stats
    app.state.config = config
    app.state.completions = completions
    return app
