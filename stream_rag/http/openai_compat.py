"""`POST /v1/chat/completions` and `GET /v1/models`: stream_rag as an OpenAI-compatible model
whose output is gated. Any OpenAI client, chat front-end or load-testing harness can use it.

The last user message is the question; the messages before it are the conversation (each
user message with the assistant reply after it), used to resolve follow-ups. `stream: true`
sends only verified sentences as content deltas (standard chunk objects, then
`data: [DONE]`); `stream: false` returns one message from the non-streaming path (one
regeneration on failure). Citations travel in the extension field `stream_rag` of each chunk
or of the completion:
`{"citations": [{n, doc_id, version, sha256, name, chunk_id, url}], "index": i}` on a
sentence's chunk, `{"sources": [...]}` on the first chunk, `{"refusal": {reason, message}}`
on a refusal (whose message is also sent as ordinary content), `{"done": {...}}` at the end.
A part of the question no source covers (`uncovered`) is also said in the content, in a last
paragraph, as the widget says it.
With `STREAM_RAG_OPENAI_REFERENCE_LINKS`, sentences also carry markdown reference links.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from starlette.responses import JSONResponse, Response

from ..answer.conversation import turns_from_messages
from ..answer.limits import check_history_chars, check_question
from ..answer.pipeline import Answerer, Options
from ..errors import InvalidFieldError
from ..events import Done, Error, Refusal, SentenceOut, Sources, Uncovered, block_ref
from ..model.usage import Usage
from ..retrieve.hybrid import Block
from ..types import Turn
from . import chatview
from .answerwrites import AnswerChunks, AnswerWrites

MODEL_ID = "stream-rag"


def question_of(body: dict[str, Any]) -> str:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidFieldError("'messages' must be a non-empty list")
    texts = [_message_text(i, m) for i, m in enumerate(messages)]
    check_history_chars(sum(len(t) for t in texts), "messages")
    for message, text in zip(reversed(messages), reversed(texts), strict=True):
        if message["role"] == "user" and text.strip():
            return check_question(text, "messages")
    raise InvalidFieldError("no user message with text content in 'messages'")


def history(body: dict[str, Any]) -> tuple[Turn, ...]:
    """The earlier turns of `messages` (checked by `question_of`): user questions with the
    assistant replies that followed them."""
    pairs = [(str(m["role"]), _message_text(i, m)) for i, m in enumerate(body["messages"])]
    return turns_from_messages(pairs)


def _message_text(i: int, message: object) -> str:
    """A message's text; content parts of other types (images) are left out."""
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise InvalidFieldError(f"messages[{i}] must be an object with a string 'role'")
    content = message.get("content")
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise InvalidFieldError(f"messages[{i}].content must be a string or a list of parts")
    texts: list[str] = []
    for j, part in enumerate(content):
        if not isinstance(part, dict) or not isinstance(part.get("type", "text"), str):
            raise InvalidFieldError(f"messages[{i}].content[{j}] must be an object with a 'type'")
        if part.get("type", "text") == "text":
            text = part.get("text")
            if not isinstance(text, str):
                raise InvalidFieldError(f"messages[{i}].content[{j}].text must be a string")
            texts.append(text)
    return " ".join(texts)


def uncovered_note(uncovered: Sequence[Uncovered]) -> str:
    """The parts no source covers, as a paragraph after the answer (the widget's words): a chat
    front-end shows only the content, where silence on a part reads as a "no"."""
    if not uncovered:
        return ""
    return "\n\nThe sources do not cover: " + " ".join(u.ask for u in uncovered)


def with_links(sentence: SentenceOut) -> str:
    marks = "".join(f"[[{c.n}]]({c.url})" for c in sentence.citations)
    return f"{sentence.text} {marks}"


class CompletionsEndpoint:
    def __init__(
        self,
        answerer: Answerer,
        *,
        reference_links: bool = False,
        on_cited: Callable[[Sequence[Block]], None] | None = None,
        chat_only: bool = False,
        top_k: int | None = None,
    ) -> None:
        self.answerer = answerer
        self.reference_links = reference_links
        self.on_cited = on_cited or (lambda blocks: None)
        # A chat key's view (chatview.py): no drafts, no refused question's quotes.
        self.chat_only = chat_only
        self.top_k = top_k

    async def handle(self, body: dict[str, Any]) -> Response:
        question = question_of(body)
        for name, kind, label in (
            ("collection", str, "a string"),
            ("model", str, "a string"),
            ("stream", bool, "true or false"),
        ):
            if body.get(name) is not None and not isinstance(body[name], kind):
                raise InvalidFieldError(f"'{name}' must be {label}")
        options = Options(
            collection=_str(body.get("collection")), top_k=self.top_k, history=history(body)
        )
        model = _str(body.get("model")) or MODEL_ID
        if body.get("stream"):
            writes = AnswerWrites()
            chunks = self._chunks(
                question, options, model, include_usage=_include_usage(body), writes=writes
            )
            return AnswerChunks(
                chunks,
                writes,
                media_type="text/event-stream",
                headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
            )
        result = await self.answerer.answer(question, options)
        for sentence in result.sentences:
            self.on_cited(sentence.citations)
        if result.refusal is not None:
            content = (
                chatview.refusal_text(result.refusal) if self.chat_only else result.refusal.message
            )
        elif self.reference_links:
            content = " ".join(with_links(s) for s in result.sentences)
        else:
            content = result.text
        if result.refusal is None:
            content += uncovered_note(result.uncovered)
        return JSONResponse(
            {
                "id": f"chatcmpl-{secrets.token_hex(12)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": result.usage.to_json(),  # zeros unless the upstream model reported
                "stream_rag": chatview.answer_json(result) if self.chat_only else result.to_json(),
            }
        )

    async def _chunks(
        self,
        question: str,
        options: Options,
        model: str,
        *,
        include_usage: bool = False,
        writes: AnswerWrites | None = None,
    ) -> AsyncIterator[str]:
        header = {
            "id": f"chatcmpl-{secrets.token_hex(12)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }
        spoken = False
        usage = Usage()
        async for event in self.answerer.stream(question, options):
            delta: dict[str, str] = {}
            finish: str | None = None
            extension: dict[str, Any]
            if isinstance(event, Sources):
                delta = {"role": "assistant", "content": ""}
                extension = {"sources": [block_ref(b) for b in event.blocks]}
            elif isinstance(event, SentenceOut):
                self.on_cited(event.citations)
                text = with_links(event) if self.reference_links else event.text
                delta = {"content": (" " if spoken else "") + text}
                spoken = True
                extension = {
                    "index": event.index,
                    "citations": [block_ref(c) for c in event.citations],
                }
            elif isinstance(event, Refusal):
                message, refused = event.message, event.data()
                if self.chat_only:
                    message, refused = chatview.refusal_text(event), chatview.refusal(event)
                delta = {"content": (" " if spoken else "") + message}
                extension = {"refusal": refused}
            elif isinstance(event, Done):
                finish, extension = "stop", {"done": event.data()}
                usage.add(event.usage or {})
                if note := uncovered_note(event.uncovered):
                    # A chunk of its own, as the sentences come: a client may read no content
                    # on the chunk that finishes.
                    chunk = {
                        **header,
                        "choices": [
                            {"index": 0, "delta": {"content": note}, "finish_reason": None}
                        ],
                        "stream_rag": {"uncovered": [u.data() for u in event.uncovered]},
                    }
                    yield f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"
            elif isinstance(event, Error):
                finish, extension = "error", {"error": event.data()}
            else:
                continue  # a dropped sentence sends nothing
            if finish is not None and writes is not None:
                # The last event: what follows it is sent at once, with the end (answerwrites.py).
                writes.next_is_last()
            payload = {
                **header,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                "stream_rag": extension,
            }
            if isinstance(event, Error):
                # How OpenAI's own streams report a failure: its client raises `APIError`.
                payload["error"] = {**event.data(), "type": "server_error"}
            yield f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"
        if include_usage:  # as OpenAI does: one last chunk with no choices and the counts
            last = {**header, "choices": [], "usage": usage.to_json()}
            yield f"data: {json.dumps(last)}\n\n"
        yield "data: [DONE]\n\n"


def _include_usage(body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    if options is None:
        return False
    if not isinstance(options, dict) or not isinstance(options.get("include_usage", False), bool):
        raise InvalidFieldError("'stream_options' must be an object like {\"include_usage\": true}")
    return bool(options.get("include_usage"))


def models() -> JSONResponse:
    return JSONResponse(
        {
            "object": "list",
            "data": [{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "stream_rag"}],
        }
    )


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
