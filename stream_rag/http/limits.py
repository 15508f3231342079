"""Request size limits: JSON bodies are capped while they are read (before parsing). Questions
and conversations are capped in characters by answer/limits.py."""

from __future__ import annotations

from typing import ClassVar

from starlette.requests import ClientDisconnect, Request

from ..errors import ClientGoneError, InputError, StreamRagError
from . import jsonbody


class BodyTooLargeError(InputError):
    code = "body_too_large"
    status = 413


class UnsupportedMediaTypeError(InputError):
    code = "unsupported_media_type"
    status = 415


class UnsupportedCodingError(UnsupportedMediaTypeError):
    """A body in a content coding (gzip...): none is decoded, and read as it is the bytes
    made a misleading error (or, labelled but sent plain, were taken)."""

    headers: ClassVar[dict[str, str] | None] = {"Accept-Encoding": "identity"}  # RFC 9110 12.5.3


class TransferCodingError(StreamRagError):
    """A transfer coding other than chunked: httptools removes chunked only (RFC 9112 6.1)."""

    code = "not_implemented"
    status = 501


def check_coding(request: Request) -> None:
    """The body is read as it arrives: no content coding, no transfer coding but chunked."""
    transfer = request.headers.get("transfer-encoding")
    if transfer is not None and transfer.strip().lower() != "chunked":
        raise TransferCodingError(
            f"Transfer-Encoding {transfer[:100]!r} is not supported: send the body as it is"
        )
    coding = request.headers.get("content-encoding")
    if coding is not None and coding.strip().lower() not in ("", "identity"):
        raise UnsupportedCodingError(
            f"Content-Encoding {coding[:100]!r} is not supported: send the body uncompressed"
        )


def check_json_type(request: Request) -> None:
    """JSON routes take `application/json` only: a page on another site can send a form or
    `text/plain` without a CORS preflight, but not this."""
    check_coding(request)
    declared = request.headers.get("content-type")
    if declared is None:
        raise InputError("the request body must be JSON, sent as Content-Type: application/json")
    media = declared.partition(";")[0].strip().lower()
    if media != "application/json" and not (
        media.startswith("application/") and media.endswith("+json")
    ):
        raise UnsupportedMediaTypeError(
            f"Content-Type must be application/json, not {declared[:100]!r}"
        )
    charset = _charset(declared)
    if charset not in (None, "utf-8", "utf8", "us-ascii", "ascii"):  # ASCII is UTF-8
        # JSON travels as UTF-8 (RFC 8259 section 8.1): a body declared otherwise would be
        # misread, so it is refused by what it declares, not by the first odd byte.
        raise UnsupportedMediaTypeError(f"JSON bodies must be UTF-8, not charset={charset[:40]!r}")


def _charset(declared: str) -> str | None:
    """The `charset` parameter of a Content-Type value, lower-cased and unquoted."""
    for param in declared.split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip('"').strip().lower()
    return None


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 as soon as it passes `limit` bytes (never buffered whole)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLargeError(f"the request body is over {limit // 1024} KB")
    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise BodyTooLargeError(f"the request body is over {limit // 1024} KB")
            parts.append(chunk)
    except ClientDisconnect:
        # The client's doing, as during an upload: a 4xx, not a server error in the logs.
        raise ClientGoneError("the client disconnected while sending the body") from None
    return b"".join(parts)


async def read_json(request: Request, limit: int) -> object:
    """A JSON body of at most `limit` bytes; parsing that little stays well under a
    millisecond, so it runs on the event loop."""
    check_json_type(request)
    return jsonbody.parse(await read_body(request, limit))
