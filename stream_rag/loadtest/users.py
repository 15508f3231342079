"""The load generator of `stream-rag loadtest`: users asking over SSE, one record per answer.

Each user loops: ask the next question, read the stream to its end, record when each verified
sentence arrived and how the stream ended. Works against `/v1/chat`, the OpenAI-compatible
`/v1/chat/completions`, and the raw proxy's token stream.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import anyio
import httpx

from ..sse import EventStreamParser

Endpoint = Literal["chat", "openai", "raw"]
QUESTIONS = (
    "Can I get a refund on an annual plan?",
    "What does the Pro plan cost per month?",
    "Where does Lumen Notes store data?",
    "What happens when a note is edited on two devices at the same time?",
    "How can I export a notebook?",
    "When is support available by email?",
    "How long do deleted notes stay in the Trash?",
    "Which plans include live chat support?",
)


@dataclass(slots=True)
class Answer:
    """One request: when it started (s since the run began) and what came back."""

    question: str
    started: float
    ttfs: float | None = None  # request to first verified sentence (raw: first token), s
    total: float = 0.0
    gaps: list[float] = field(default_factory=list)
    sentences: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    refusal: str | None = None
    error: str | None = None
    ended: str = "none"  # "done", "error", or "none": the stream closed without either
    request_id: str | None = None


def request_for(endpoint: Endpoint, question: str) -> tuple[str, dict[str, object]]:
    """The path and JSON body that ask `question` over `endpoint`."""
    if endpoint == "openai":
        messages = [{"role": "user", "content": question}]
        return "/v1/chat/completions", {"model": "stream-rag", "stream": True, "messages": messages}
    return "/v1/chat", {"question": question}


class StreamReader:
    """Turns one answer's SSE events (or OpenAI-compatible chunks) into its `Answer`."""

    def __init__(self, answer: Answer, t0: float, endpoint: Endpoint = "chat") -> None:
        self.answer = answer
        self.t0 = t0
        self.endpoint = endpoint
        self.last: float | None = None
        self._parser = EventStreamParser()

    def line(self, line: str) -> None:
        """One line of the response body, as it arrives."""
        event = self._parser.line(line)
        if event is None or event.data == "[DONE]":
            return
        if self.endpoint == "openai":
            self.chunk(event.json())
        else:
            self.event(event.event, event.json())

    def sentence(self) -> None:
        now = time.perf_counter()
        if self.last is None:
            self.answer.ttfs = now - self.t0
        else:
            self.answer.gaps.append(now - self.last)
        self.last = now
        self.answer.sentences += 1

    def event(self, name: str, data: dict[str, object]) -> None:
        answer = self.answer
        if name in ("sentence", "token"):
            self.sentence()
        elif name == "dropped":
            answer.dropped[str(data.get("reason"))] += 1
        elif name == "refusal":
            answer.refusal = str(data.get("reason"))
        elif name == "error":
            answer.error, answer.ended = str(data.get("code")), "error"
        elif name == "done":
            answer.ended = "done"
            request_id = data.get("request_id")
            answer.request_id = request_id if isinstance(request_id, str) else None

    def chunk(self, data: dict[str, object]) -> None:
        """An OpenAI-compatible chunk: content is a verified sentence; the extension field
        `stream_rag` carries refusals and the final tallies."""
        extra = data.get("stream_rag")
        extra = extra if isinstance(extra, dict) else {}
        if "refusal" in extra:
            refusal = extra["refusal"]
            self.answer.refusal = str(refusal.get("reason")) if isinstance(refusal, dict) else "?"
        elif "citations" in extra:
            self.sentence()
        if "done" in extra:
            self.answer.ended = "done"
        if "error" in data:
            error = data["error"]
            code = error.get("code") if isinstance(error, dict) else None
            self.answer.error, self.answer.ended = str(code or "error"), "error"


async def ask(client: httpx.AsyncClient, endpoint: Endpoint, question: str, t_run: float) -> Answer:
    """One question, read to the end of its stream."""
    t0 = time.perf_counter()
    answer = Answer(question, t0 - t_run)
    reader = StreamReader(answer, t0, endpoint)
    path, body = request_for(endpoint, question)
    try:
        async with client.stream("POST", path, json=body) as response:
            if response.status_code != 200:
                answer.error, answer.ended = f"http_{response.status_code}", "error"
                await response.aread()
                return answer
            async for line in response.aiter_lines():
                reader.line(line)
    except (httpx.HTTPError, ValueError) as exc:
        answer.error, answer.ended = f"client_{type(exc).__name__}", "error"
    finally:
        answer.total = time.perf_counter() - t0
    return answer


async def run_load(
    base_url: str,
    *,
    endpoint: Endpoint,
    users: int,
    requests: int,
    duration_s: float,
    questions: tuple[str, ...] = QUESTIONS,
    distinct: bool = False,
    tag: str = "",
    headers: Mapping[str, str] | None = None,
) -> tuple[list[Answer], float]:
    """`users` concurrent users until `requests` answers or `duration_s` seconds, whichever
    comes first; returns the answers and the wall time. With `distinct`, every question gets
    a serial number (after `tag`, which keeps the questions of separate runs apart), so no
    answer is served from a cache. `headers` go with every request (a deployment's key)."""
    answers: list[Answer] = []
    issued = 0
    t_run = time.perf_counter()
    deadline = t_run + duration_s
    timeout = httpx.Timeout(120.0, connect=30.0)
    tls = httpx.create_ssl_context()  # once: building one costs ~20 ms of CPU per client
    # Every user has a client, a connection, of its own, as browsers do. Under one shared pool
    # (httpcore 1.0's) all waiting requests are handed the same idle connection, the first in
    # the pool; the losers are handed it again, round after round (seconds on a loaded
    # machine), and the last one gets the connection idle longest, just as the server's
    # keep-alive timeout closes it: a read error, seen as the server's fault.
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)

    async def user() -> None:
        nonlocal issued
        async with httpx.AsyncClient(
            base_url=base_url, limits=limits, timeout=timeout, verify=tls, headers=headers
        ) as client:
            while issued < requests and time.perf_counter() < deadline:
                question = questions[issued % len(questions)]
                if distinct:
                    question = f"{question} (#{tag}{issued})"
                issued += 1
                answers.append(await ask(client, endpoint, question, t_run))

    async with anyio.create_task_group() as group:
        for _ in range(users):
            group.start_soon(user)
    return answers, time.perf_counter() - t_run
