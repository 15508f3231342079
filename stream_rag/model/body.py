"""A chunked reply body read straight from the lean network stream, past h11 and httpx.

Read through httpx, each token's chunk costs a wake-up of six generators (httpx's, httpcore's),
two exception maps and h11's parse: about twice what reading it takes. When the reply came on
the lean backend (network.py), over HTTP/1.1, chunked and uncompressed, and nothing after its
head has been read (the lean stream ends a read where a head ends, so h11 holds none of the
body), the chunks are read here: everything buffered at once, the framing split by
`ChunkedFraming`, the data given to `PieceDecoder`. When the pieces end (`[DONE]` or the body's
end) the unread rest goes back to the stream, framed so that h11 reads on from a chunk boundary
and finds the body's end itself: the connection goes back to the pool as before.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncGenerator
from types import ModuleType
from typing import Any

from .network import LeanStream
from .stream import PieceDecoder
from .transport import as_http_error

_SIZE, _DATA, _DATA_END, _TRAILER, _ENDED = range(5)
_MAX_LINE = 64 * 1024  # a chunk size or trailer line longer than this is not HTTP


class FramingError(Exception):
    """The body's chunked framing is broken (raised as httpx's `RemoteProtocolError`)."""


class ChunkedFraming:
    """HTTP/1.1 chunked framing: body bytes in, cut anywhere; the chunks' data out."""

    __slots__ = ("_buf", "_crlf", "_left", "_state")

    def __init__(self) -> None:
        self._buf = b""  # unparsed bytes: an unfinished size or trailer line
        self._left = 0  # data bytes left in the current chunk
        self._crlf = 0  # bytes of the CRLF after a chunk's data seen so far
        self._state = _SIZE

    @property
    def ended(self) -> bool:
        """Whether the last chunk and the trailers (the body's end) have been read."""
        return self._state == _ENDED

    def feed(self, raw: bytes) -> bytes:
        """The data of the chunks `raw` continues; the bytes after the body's end are kept."""
        buf = self._buf + raw if self._buf else raw
        self._buf = b""
        out: list[bytes] = []
        i, n = 0, len(buf)
        while i < n:
            state = self._state
            if state == _DATA:
                take = min(self._left, n - i)
                out.append(buf[i : i + take])
                i += take
                self._left -= take
                if not self._left:
                    self._state = _DATA_END
            elif state == _DATA_END:
                while i < n and self._crlf < 2:
                    if buf[i] != b"\r\n"[self._crlf]:
                        raise FramingError("malformed chunk footer")
                    i += 1
                    self._crlf += 1
                if self._crlf == 2:
                    self._state, self._crlf = _SIZE, 0
            elif state == _ENDED:
                self._buf = buf[i:]
                break
            else:
                end = buf.find(b"\r\n", i)
                if end < 0:
                    if n - i > _MAX_LINE:
                        raise FramingError("a chunk header or trailer line is too long")
                    self._buf = buf[i:]
                    break
                line, i = buf[i:end], end + 2
                if state == _SIZE:
                    size = _chunk_size(line)
                    self._state, self._left = (_DATA, size) if size else (_TRAILER, 0)
                elif not line:  # the blank line after the trailers
                    self._state = _ENDED
        return out[0] if len(out) == 1 else b"".join(out)

    def rest(self) -> bytes:
        """What to give back to the stream so that a chunked reader starting at a chunk
        boundary reads the same body on from here (data already taken is not repeated; the
        body's end, trailers aside, and what follows it are)."""
        buf, state = self._buf, self._state
        if state == _SIZE:
            return buf
        if state == _DATA:
            return b"%x\r\n" % self._left + buf
        if state == _DATA_END:
            # A one-byte chunk whose footer is the one still awaited: data after the pieces'
            # end, which no reader of them uses.
            return b"1\r\n-" + b"\r\n"[: self._crlf] + buf
        if state == _TRAILER:
            return b"0\r\n" + buf
        return b"0\r\n\r\n" + buf


def _chunk_size(line: bytes) -> int:
    size = line.split(b";", 1)[0].strip(b" \t")
    if not size or size.strip(b"0123456789abcdefABCDEF") or len(size) > 16:
        raise FramingError(f"illegal chunk header: {line[:40]!r}")
    return int(size, 16)


def direct_pieces(response: Any) -> AsyncGenerator[str, None] | None:
    """The content pieces of an httpx (or httpx2) `response`'s body read past httpx, or None
    when the reply is not one this reads (another backend, compressed, not chunked, bytes of
    its body already read)."""
    stream = response.extensions.get("network_stream")
    if type(stream) is not LeanStream or response.http_version != "HTTP/1.1":
        return None
    headers = response.headers
    if headers.get("content-encoding", "identity").lower() != "identity":
        return None
    if headers.get("transfer-encoding", "").lower() != "chunked":
        return None
    request = response.request
    if not stream.at_body or response.status_code in (204, 304) or request.method == "HEAD":
        return None
    timeout = (request.extensions.get("timeout") or {}).get("read")
    http = importlib.import_module(type(response).__module__.split(".")[0])
    return _pieces(stream, timeout, http)


async def _pieces(
    stream: LeanStream, stall_s: float | None, http: ModuleType
) -> AsyncGenerator[str, None]:
    framing, decoder = ChunkedFraming(), PieceDecoder()
    while not framing.ended:
        try:
            raw = await stream.read_buffered(stall_s)
        except Exception as exc:
            raise as_http_error(exc, http) from exc
        if not raw:
            raise http.RemoteProtocolError(
                "peer closed connection without sending complete message body: "
                "incomplete chunked read"
            )
        try:
            data = framing.feed(raw)
        except FramingError as exc:
            raise http.RemoteProtocolError(str(exc)) from None
        if data:
            for piece in decoder.feed(data):
                yield piece
        if decoder.done:
            break
    # From here httpx reads the rest (after `[DONE]`), or just the body's end.
    stream.unread(framing.rest())
    if not decoder.done:
        for piece in decoder.close():
            yield piece
