"""Routes that answer: `/v1/chat` (SSE), `/v1/answer`, and the OpenAI-compatible
`/v1/chat/completions` and `/v1/models`, with the per-request options they share."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from functools import partial

import anyio
import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..access import tenancy
from ..answer.conversation import history_of
from ..answer.limits import check_question
from ..answer.pipeline import Options
from ..errors import InvalidFieldError
from ..events import Done, Error, SentenceOut, to_sse
from ..sse import ServerSentEvent
from . import chatview, openai_compat, state
from . import resume as resume_api
from .answerwrites import AnswerStream, AnswerWrites
from .asklog import AnswerRecord, conversation_of
from .web import EventIds, is_reconnect

# What a client resuming an answer is told at its end when its asking connection closed and
# its client stopped it (DELETE /v1/streams/{id}) or no client resumed it within
# STREAM_RAG_RESUME_GRACE_S (or that is 0).
STOPPED = "the answer stopped: its client stopped it or left; ask again"


async def chat(request: Request) -> Response:
    """`POST {"question", "collection"?, "top_k"?, "min_evidence"?, "check_conflicts"?,
    "gate_threshold"?, "conversation"?}` or `GET ?q=&collection=&top_k=` (for EventSource): the
    gated answer as Server-Sent Events, each with an `id:` (`<answer id>.<n>`). The answer is
    kept in the question log under its id (what `POST /v1/feedback` rates)."""
    if request.method == "GET":
        if is_reconnect(request):
            # EventSource reconnecting: the rest of its answer if recorded, else 204 (which
            # stops EventSource for good rather than pay for a second answer).
            resume = resume_api.last_event(request.headers.get("last-event-id"))
            found = None if resume is None else await resume_api.resumed(request, *resume)
            return found or Response(status_code=204)
        params = request.query_params
        raw_top_k = params.get("top_k")
        if raw_top_k is not None and not state.is_ascii_int(raw_top_k):
            raise InvalidFieldError("'top_k' must be an integer")
        body: dict[str, object] = {
            "question": params.get("q") or params.get("question"),
            "collection": params.get("collection"),
            "top_k": int(raw_top_k) if raw_top_k else None,
        }
    else:
        body = await state.json_object(request)
    question = question_of(body)
    options = _scoped(request, body, answer_options(body))
    services, base_url, ids = (
        state.services(request),
        state.settings(request).public_url,
        EventIds(),
    )
    record = tenancy.citation_recorder(request)
    writes = AnswerWrites()
    render = chatview.event_sse if chatview.chat_only(request, str(options.collection)) else to_sse
    log = request.state.questions
    logged = AnswerRecord(
        ids.answer,
        collection=str(options.collection),
        question=question,
        conversation=conversation_of(body),
        key_id=tenancy.principal(request).id,
    )

    streams, live = resume_api.recorder(request)
    if streams is not None:
        await anyio.to_thread.run_sync(streams.open, ids.answer, tenancy.principal(request).id)
        live.ids.add(ids.answer)

    async def events() -> AsyncIterator[ServerSentEvent]:
        # The answerer ends every stream with `done` or `error` (shutting_down included):
        # that event goes out with the response's end, in one write (answerwrites.py).
        kept = False
        ended = False
        try:
            async for event in services.answerer.stream(question, options):
                logged.see(event)
                if isinstance(event, SentenceOut):
                    record(event.citations)
                elif isinstance(event, Done | Error):
                    writes.next_is_last()
                    # Logged before the last event goes out: a rating may follow it at once.
                    kept = True
                    await anyio.to_thread.run_sync(log.record, logged.asked())
                    # The citations shown are downloadable from any replica once it ends.
                    await tenancy.stored_grants(request)
                sse = render(event, id=ids.next(), base_url=base_url)
                if streams is not None:  # recorded before it is sent: a resume misses nothing
                    last = isinstance(event, Done | Error)
                    await anyio.to_thread.run_sync(
                        streams.append, ids.answer, ids.seq, sse.event or "", sse.data or "", last
                    )
                    ended = last
                yield sse
        finally:
            if streams is not None:
                live.ids.discard(ids.answer)
                live.stops.pop(ids.answer, None)
                if not ended:  # the client left (or Stop): the answer stopped, and says so
                    stopped = to_sse(Error("stopped", STOPPED), id=ids.next())
                    with anyio.CancelScope(shield=True):
                        await anyio.to_thread.run_sync(
                            streams.append, ids.answer, ids.seq, "error", stopped.data or "", True
                        )
            if not kept:  # the visitor left (or Stop): logged as stopped, even when cancelled
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(log.record, logged.asked())

    settings = state.settings(request)
    on_leave = None
    if streams is not None and settings.resume_grace_s > 0:
        # A client whose connection dropped resumes it (the widget does): it goes on, recorded,
        # while resumable; it holds its answer slot until it ends (the request is still open).
        stop = live.stops[ids.answer] = anyio.Event()
        on_leave = partial(resume_api.grace, streams, ids.answer, settings.resume_grace_s, stop)
    return AnswerStream(
        events(),
        writes,
        on_leave=on_leave,
        ping=settings.sse_ping_s,
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


async def answer(request: Request) -> JSONResponse:
    """The non-streaming answer, with its attempts and their verdicts."""
    body = await state.json_object(request)
    question = question_of(body)
    options = _scoped(request, body, answer_options(body))
    answerer = state.services(request).answerer
    # A client that leaves cancels the answer, which closes the model request.
    result = await state.unless_client_leaves(
        request.receive, partial(answerer.answer, question, options)
    )
    if result is None:
        return state.client_gone()
    record = tenancy.citation_recorder(request)
    for sentence in result.sentences:
        record(sentence.citations)
    await tenancy.stored_grants(request)
    chat_only = chatview.chat_only(request, str(options.collection))
    body = chatview.answer_json(result) if chat_only else result.to_json()
    return JSONResponse(state.public(request, body))


def question_of(body: dict[str, object]) -> str:
    question = body.get("question")
    if not isinstance(question, str) or not question.strip():
        raise InvalidFieldError("'question' must be a non-empty string")
    return check_question(question)


def answer_options(body: dict[str, object]) -> Options:
    """Per-request overrides, checked: collection, top_k, min_evidence, check_conflicts,
    gate_threshold, and the conversation's earlier turns (`history`)."""
    collection, top_k = body.get("collection"), body.get("top_k")
    if collection is not None and not isinstance(collection, str):
        raise InvalidFieldError("'collection' must be a string")
    if top_k is not None and (
        not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= 100
    ):
        raise InvalidFieldError("'top_k' must be an integer between 1 and 100")
    floats: dict[str, float | None] = {}
    for name in ("min_evidence", "gate_threshold"):
        value = body.get(name)
        if value is not None and (
            not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 1
        ):
            raise InvalidFieldError(f"'{name}' must be a number between 0 and 1")
        floats[name] = None if value is None else float(value)
    check = body.get("check_conflicts")
    if check is not None and not isinstance(check, bool):
        raise InvalidFieldError("'check_conflicts' must be true or false")
    return Options(
        collection=collection,
        top_k=top_k,
        min_evidence=floats["min_evidence"],
        check_conflicts=check,
        gate_threshold=floats["gate_threshold"],
        history=history_of(body.get("history")),
    )


async def chat_completions(request: Request) -> Response:
    body = await state.json_object(request)
    tenancy.check_overrides(request, body)
    settings = state.settings(request)
    collection = tenancy.collection_for(
        request, body.get("collection"), settings.default_collection
    )
    body["collection"] = collection
    chat_only = chatview.chat_only(request, collection)
    endpoint = openai_compat.CompletionsEndpoint(
        state.services(request).answerer,
        reference_links=settings.openai_reference_links,
        on_cited=tenancy.citation_recorder(request),
        chat_only=chat_only,
        top_k=min(settings.top_k, settings.chat_max_top_k) if chat_only else None,
    )
    response = await state.unless_client_leaves(request.receive, partial(endpoint.handle, body))
    return state.client_gone() if response is None else response


async def list_models(request: Request) -> Response:
    return openai_compat.models()


def _scoped(request: Request, body: dict[str, object], options: Options) -> Options:
    """Options inside the key's collections, with safety overrides only for admins."""
    tenancy.check_overrides(request, body)
    settings = state.settings(request)
    collection = tenancy.collection_for(request, options.collection, settings.default_collection)
    top_k = options.top_k
    if chatview.chat_only(request, collection):
        # Each block's metadata goes out: a chat key asks for a few, not a collection's worth.
        top_k = min(top_k or settings.top_k, settings.chat_max_top_k)
    return replace(options, collection=collection, top_k=top_k)
