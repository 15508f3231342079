"""Locust users for any stream_rag deployment: they ask over `/v1/chat` (SSE) or the
OpenAI-compatible `/v1/chat/completions`, and report per answer, as Locust entries of type
`SSE`:

- `ttfs`: time to the first verified sentence (ms); `gap`: between two sentences (ms);
  `total`: the whole answer (ms; its response length is the number of sentences);
- `sentences`: sentences per answer (the "response time" column holds the count, not ms);
- `dropped/<reason>`, `refusal/<reason>` (one entry each, time 0);
- failures: `error/<code>` and `ended_without_done` (the stream closed with neither event).

    pip install -e '.[load]'
    locust -f loadtests/locustfile.py --host http://127.0.0.1:8000 --headless \
        -u 50 -r 10 -t 2m --csv report/locust --csv-full-history

`STREAM_RAG_LOCUST_ENDPOINT=openai` asks over `/v1/chat/completions`;
`STREAM_RAG_LOCUST_QUESTIONS=FILE` takes questions from a file, one a line. A deployment with
keys gets the key in `STREAM_RAG_API_KEY` (a `chat` key will do), as `ask --url` sends it.
"""

from __future__ import annotations

import os
import time
from itertools import count
from pathlib import Path

from locust import HttpUser, constant, task

from stream_rag.cli.keys import client_headers
from stream_rag.loadtest.users import QUESTIONS, Answer, Endpoint, StreamReader, request_for

ENDPOINT: Endpoint = (
    "openai" if os.environ.get("STREAM_RAG_LOCUST_ENDPOINT") == "openai" else "chat"
)
_FILE = os.environ.get("STREAM_RAG_LOCUST_QUESTIONS")
ASKED = (
    tuple(q for q in Path(_FILE).read_text(encoding="utf-8").splitlines() if q.strip())
    if _FILE
    else QUESTIONS
)
_NEXT = count()
_HEADERS = client_headers()


class AskingUser(HttpUser):
    """Asks one question after another, reading each answer's stream to its end."""

    wait_time = constant(0)

    @task
    def ask(self) -> None:
        question = ASKED[next(_NEXT) % len(ASKED)]
        t0 = time.perf_counter()
        answer = Answer(question, 0.0)
        reader = StreamReader(answer, t0, ENDPOINT)
        path, body = request_for(ENDPOINT, question)
        with self.client.post(
            path, json=body, headers=_HEADERS, stream=True, catch_response=True, name=path
        ) as response:
            if response.status_code != 200:
                response.failure(f"HTTP {response.status_code}")
                return
            for line in response.iter_lines(decode_unicode=True):
                reader.line(line or "")
            response.success()
        answer.total = time.perf_counter() - t0
        self.report(answer)

    def report(self, answer: Answer) -> None:
        def fire(name: str, value: float, length: int = 0, failure: str | None = None) -> None:
            self.environment.events.request.fire(
                request_type="SSE",
                name=name,
                response_time=value,
                response_length=length,
                exception=None if failure is None else RuntimeError(failure),
                context={},
            )

        if answer.ttfs is not None:
            fire("ttfs", answer.ttfs * 1000)
        for gap in answer.gaps:
            fire("gap", gap * 1000)
        fire("total", answer.total * 1000, answer.sentences)
        fire("sentences", answer.sentences)
        for reason, times in answer.dropped.items():
            for _ in range(times):
                fire(f"dropped/{reason}", 0)
        if answer.refusal:
            fire(f"refusal/{answer.refusal}", 0)
        if answer.error:
            fire(f"error/{answer.error}", 0, failure=answer.error)
        elif answer.ended != "done":
            fire("ended_without_done", 0, failure="the stream ended without done or error")
