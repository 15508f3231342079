"""Reading a chat model's streamed reply: Server-Sent Events lines to text pieces.

The openai client sends the request (errors, retries, timeouts); the body is read here with
httpx and `json.loads`, because the client's typed chunk objects cost more CPU than the rest
of an answer's streaming path. Accepts what OpenAI, vLLM, llama.cpp and Ollama send: `data:`
with or without a space, CRLF, comments, multi-line data, an `error` object, `[DONE]` or none.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator

from ..errors import StreamRagError
from .usage import record


class StreamReplyError(StreamRagError):
    """The model's stream carried an error object, or a line that is not JSON."""

    code = "upstream_error"
    status = 502


async def content_pieces(lines: AsyncIterable[str]) -> AsyncIterator[str]:
    """The non-empty `choices[0].delta.content` of each event, in order, until `[DONE]`."""
    data: list[str] = []
    async for line in lines:
        if line:
            if line.startswith("data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(" ") else value)
            # `event:`, `id:`, `retry:` and `:` comments carry nothing for chat chunks.
            continue
        if not data:
            continue
        payload = "\n".join(data)
        data = []
        if payload.startswith("[DONE]"):
            return
        piece = _content(payload)
        if piece:
            yield piece
    if data:  # a last event without its blank line
        payload = "\n".join(data)
        if not payload.startswith("[DONE]"):
            piece = _content(payload)
            if piece:
                yield piece


def _content(payload: str) -> str | None:
    try:
        chunk = json.loads(payload)
    except ValueError:
        raise StreamReplyError(
            f"the model sent a line that is not JSON: {payload[:80]!r}"
        ) from None
    if not isinstance(chunk, dict):
        return None
    error = chunk.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        raise StreamReplyError(f"the model reported an error: {str(message)[:240]}")
    if isinstance(chunk.get("usage"), dict):
        record(chunk["usage"])  # the last chunk, when the request asked to include usage
    choices = chunk.get("choices")
    if not choices or not isinstance(choices, list):
        return None  # e.g. the usage-only chunk OpenAI sends last with include_usage
    first = choices[0]
    delta = first.get("delta") if isinstance(first, dict) else None
    content = delta.get("content") if isinstance(delta, dict) else None
    return content if isinstance(content, str) else None
