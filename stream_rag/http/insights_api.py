"""Feedback and insight routes: `POST /v1/feedback` (chat keys may, rate-limited),
`DELETE /v1/conversations/{id}` (a visitor forgets their questions), and for admin keys
`GET /v1/insights` (the report) and `GET /v1/insights/questions` (CSV or JSON export)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import partial

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..access import tenancy
from ..access.guard import RateLimiter, RateLimitError, error_response
from ..errors import InvalidFieldError, NotFoundError
from ..insights.report import export_csv, export_json, report
from ..store.questions import MAX_COMMENT_CHARS, Asked, QuestionLog
from . import state
from .asklog import CONVERSATION_ID

RATINGS = {"up": 1, "down": -1}
MAX_DAYS = 3660


def questions(request: Request) -> QuestionLog:
    found: QuestionLog = request.state.questions
    return found


async def _rating_wait(request: Request, who: str) -> float | None:
    """Take one rating from `who`'s bucket: every replica's (the database's) when shared."""
    rpm = state.settings(request).feedback_rpm
    shared = tenancy.access(request).limits
    if shared is not None:
        return await anyio.to_thread.run_sync(shared.take, f"feedback:{who}", rpm)
    limiter: RateLimiter | None = getattr(request.app.state, "feedback_limiter", None)
    if limiter is None:
        limiter = request.app.state.feedback_limiter = RateLimiter()
    return limiter.take(who, rpm)


async def feedback(request: Request) -> Response:
    """`{"answer_id", "rating": "up" | "down", "comment"?}`: 200, or 404 for an answer this key
    was not given (or no longer kept). A rating again replaces the earlier one."""
    who = tenancy.principal(request)
    client = request.client.host if request.client else "?"
    wait = await _rating_wait(request, f"{who.id}@{client}")
    if wait is not None:
        return error_response(RateLimitError("too many ratings from this visitor; slow down", wait))
    body = await state.json_object(request)
    answer_id, rating, comment = body.get("answer_id"), body.get("rating"), body.get("comment", "")
    if not isinstance(answer_id, str) or not 1 <= len(answer_id) <= 64:
        raise InvalidFieldError("'answer_id' must be the answer's id (its events' id before '.')")
    if not isinstance(rating, str) or rating not in RATINGS:  # {} or [] is unhashable
        raise InvalidFieldError('\'rating\' must be "up" or "down"')
    if not isinstance(comment, str) or len(comment) > MAX_COMMENT_CHARS:
        raise InvalidFieldError(
            f"'comment' must be a string of at most {MAX_COMMENT_CHARS} characters"
        )
    log = questions(request)
    if not log.enabled:
        raise NotFoundError("the question log is off (STREAM_RAG_QUESTION_LOG_DAYS=0)")
    key_id = None if who.admin else who.id
    found = await anyio.to_thread.run_sync(
        log.rate, answer_id, key_id, RATINGS[rating], comment.strip()
    )
    if not found:
        raise NotFoundError(f"no answer {answer_id!r} to rate")
    return JSONResponse({"answer_id": answer_id, "rating": rating, "comment": comment.strip()})


async def forget_conversation(request: Request) -> JSONResponse:
    """Delete a conversation's questions and ratings; 200 with how many (0 is no error)."""
    conversation = request.path_params["conversation"]
    if not CONVERSATION_ID.fullmatch(conversation):
        raise InvalidFieldError("a conversation id is 8-64 letters, digits, '-' or '_'")
    who = tenancy.principal(request)
    deleted = await anyio.to_thread.run_sync(
        questions(request).forget_conversation, conversation, None if who.admin else who.id
    )
    return JSONResponse({"conversation": conversation, "deleted": deleted})


async def insights(request: Request) -> JSONResponse:
    """`?collection=&days=30`: the report (see insights/report.py)."""
    rows, days = await _rows(request)
    embedder = state.services(request).embedder
    embed = None if embedder is None else embedder.embed
    body = await anyio.to_thread.run_sync(partial(report, rows, embed))
    log = questions(request)
    return JSONResponse({"days": days, "retention_days": log.keep_days, **body})


async def export(request: Request) -> Response:
    """`?format=csv|json&collection=&days=`: every question kept, newest first."""
    rows, _ = await _rows(request)
    kind = request.query_params.get("format", "json")
    stamp = datetime.now(UTC).strftime("%Y%m%d")
    if kind == "csv":
        text = await anyio.to_thread.run_sync(export_csv, rows)
        media, name = "text/csv; charset=utf-8", f"questions-{stamp}.csv"
    elif kind == "json":
        text = await anyio.to_thread.run_sync(export_json, rows)
        media, name = "application/json", f"questions-{stamp}.json"
    else:
        raise InvalidFieldError("'format' must be csv or json")
    headers = {"Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "no-store"}
    return Response(text, media_type=media, headers=headers)


async def _rows(request: Request) -> tuple[list[Asked], int]:
    params = request.query_params
    raw_days = params.get("days", "30")
    if not state.is_ascii_int(raw_days) or not 1 <= int(raw_days) <= MAX_DAYS:
        raise InvalidFieldError(f"'days' must be an integer between 1 and {MAX_DAYS}")
    days = int(raw_days)
    collection = params.get("collection")
    collections = None if not collection else [collection]
    since = (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="milliseconds")
    since = since.replace("+00:00", "Z")
    rows = await anyio.to_thread.run_sync(questions(request).rows, collections, since)
    return rows, days


def routes() -> list[Route]:
    return [
        Route("/v1/feedback", feedback, methods=["POST"]),
        Route("/v1/conversations/{conversation}", forget_conversation, methods=["DELETE"]),
        Route("/v1/insights", insights, methods=["GET"]),
        Route("/v1/insights/questions", export, methods=["GET"]),
    ]
