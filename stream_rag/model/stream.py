"""Reading a chat model's streamed reply: Server-Sent Events bytes to text pieces.

The openai client sends the request (errors, retries, timeouts); the body is read here with
httpx and `json.loads`, because the client's typed chunk objects cost more CPU than the rest
of an answer's streaming path. Accepts what OpenAI, vLLM, llama.cpp and Ollama send: `data:`
with or without a space, CRLF or CR line ends, comments, multi-line data, an `error` object,
`[DONE]` or none. The bytes are split here, not by httpx's text and line iterators: each
token's chunk would otherwise pass three more generators and two decoders.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterable, Callable
from typing import Any

from ..errors import StreamRagError
from .usage import record


class StreamReplyError(StreamRagError):
    """The model's stream carried an error object, or a line that is not JSON."""

    code = "upstream_error"
    status = 502


class PieceDecoder:
    """Body bytes in, in whatever pieces they arrive; the content of each complete event out.
    `done` turns true at `[DONE]`, after which the rest is ignored."""

    __slots__ = ("_data", "_partial", "done")

    def __init__(self) -> None:
        self._partial = b""  # an unfinished last line (or a CR that may be half a CRLF)
        self._data: list[bytes] = []  # the `data:` lines of the event being read
        self.done = False

    def feed(self, chunk: bytes) -> list[str]:
        """The non-empty `choices[0].delta.content` of the events that `chunk` completes."""
        if (
            chunk[-2:] == b"\n\n"
            and chunk[:6] == b"data: "
            and not (self._partial or self._data or self.done)
            and chunk.count(b"\n") == 2
            and b"\r" not in chunk
        ):
            # One whole event of one data line, as most servers send each token: the
            # general path below, without splitting lines.
            payload = chunk[6:-2]
            if payload.startswith(b"[DONE]"):
                self.done = True
                return []
            piece = _content(payload)
            return [piece] if piece else []
        buffer = self._partial + chunk if self._partial else chunk
        if b"\r" in buffer:
            # A CR last may be followed by the LF of a CRLF: it waits for the next chunk.
            held = buffer.endswith(b"\r")
            buffer = (buffer[:-1] if held else buffer).replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            if held:
                buffer += b"\r"
        lines = buffer.split(b"\n")
        self._partial = lines.pop()
        return self._lines(lines)

    def close(self) -> list[str]:
        """What an unfinished last event (the body ended without its blank line) carries."""
        partial, self._partial = self._partial.rstrip(b"\r"), b""
        return self._lines([partial, b""] if partial else [b""])

    def _lines(self, lines: list[bytes]) -> list[str]:
        pieces: list[str] = []
        data = self._data
        for line in lines:
            if self.done:
                break
            if line:
                if line.startswith(b"data:"):
                    data.append(line[6:] if line.startswith(b"data: ") else line[5:])
                # `event:`, `id:`, `retry:` and `:` comments carry nothing for chat chunks.
                continue
            if not data:
                continue
            payload = data[0] if len(data) == 1 else b"\n".join(data)
            data.clear()
            if payload.startswith(b"[DONE]"):
                self.done = True
                break
            piece = _content(payload)
            if piece:
                pieces.append(piece)
        return pieces


async def content_pieces(chunks: AsyncIterable[bytes]) -> AsyncGenerator[str, None]:
    """The non-empty `choices[0].delta.content` of each event, in order, until `[DONE]`."""
    decoder = PieceDecoder()
    async for chunk in chunks:
        for piece in decoder.feed(chunk):
            yield piece
        if decoder.done:
            return
    for piece in decoder.close():
        yield piece


# The C scanner `json.loads` runs, called directly: its decoder's `decode` and `raw_decode`
# wrap it in two Python calls and two whitespace matches, per token.
_scan: Callable[[str, int], tuple[Any, int]] = getattr(json.JSONDecoder(), "scan_once")  # noqa: B009
_SPACE = " \t\n\r"  # JSON's whitespace


def _loads(payload: bytes) -> Any:
    """`json.loads(payload)`, without its encoding detection for what can only be UTF-8 (a
    first byte `{`, a second not NUL): every chat chunk."""
    if payload[:1] != b"{" or payload[1:2] == b"\x00":
        return json.loads(payload)
    text = payload.decode("utf-8", "surrogatepass")
    try:
        value, end = _scan(text, 0)
    except StopIteration as exc:  # what `JSONDecoder.raw_decode` makes of it
        raise json.JSONDecodeError("Expecting value", text, exc.value) from None
    if end != len(text):
        rest = text[end:].lstrip(_SPACE)
        if rest:
            raise json.JSONDecodeError("Extra data", text, len(text) - len(rest))
    return value


def _content(payload: bytes) -> str | None:
    try:
        chunk = _loads(payload)
    except ValueError:
        shown = payload[:80].decode("utf-8", "replace")
        raise StreamReplyError(f"the model sent a line that is not JSON: {shown!r}") from None
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
