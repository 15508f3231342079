"""Streaming multipart parsing: the file part goes straight to a `Stager` on disk, hashed and
size-checked as it arrives, so an oversized upload is refused without being buffered."""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio.to_thread
from python_multipart import MultipartParser
from python_multipart.multipart import parse_options_header
from starlette.requests import ClientDisconnect, Request

from ..errors import (
    ClientGoneError,
    FileTooLargeError,
    InputError,
    InvalidFieldError,
    MissingFieldError,
)
from ..ingest.extract import media_type_for
from ..store.blobs import BlobStore, StagedFile, Stager
from ..store.records import validate_filename
from .limits import check_coding

MAX_TEXT_FIELD = 4096
# Room for the multipart envelope and text fields beyond the file's own size.
_ENVELOPE_SLACK = 64 * 1024


@dataclass(frozen=True, slots=True)
class UploadForm:
    """The parsed form: the staged file, its client-side name, and the text fields."""

    staged: StagedFile
    filename: str
    fields: dict[str, str]

    def discard(self) -> None:
        self.staged.path.unlink(missing_ok=True)


@dataclass(slots=True)
class _Part:
    name: str | None = None
    filename: str | None = None
    header_field: bytearray = field(default_factory=bytearray)
    header_value: bytearray = field(default_factory=bytearray)
    content_disposition: bytes = b""
    text: bytearray = field(default_factory=bytearray)


async def read_upload(request: Request, blobs: BlobStore, limit: int) -> UploadForm:
    """Parse a `multipart/form-data` request body; the caller must `discard()` the result."""
    check_coding(request)
    content_type, params = parse_options_header(request.headers.get("content-type", ""))
    if content_type != b"multipart/form-data" or b"boundary" not in params:
        raise InputError("expected a multipart/form-data body with a 'file' field")
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit + _ENVELOPE_SLACK:
        raise FileTooLargeError(
            f"the request is {int(declared)} bytes, over the upload limit of "
            f"{limit / (1024 * 1024):g} MB (STREAM_RAG_MAX_UPLOAD_MB)"
        )

    filename = ""
    fields: dict[str, str] = {}
    stager: Stager | None = None
    part = _Part()
    pending: list[bytes] = []
    errors: list[InputError] = []
    ended: list[bool] = []

    def on_part_begin() -> None:
        nonlocal part
        part = _Part()

    def on_header_field(data: bytes, start: int, end: int) -> None:
        part.header_field += data[start:end]

    def on_header_value(data: bytes, start: int, end: int) -> None:
        part.header_value += data[start:end]

    def on_header_end() -> None:
        if bytes(part.header_field).lower() == b"content-disposition":
            part.content_disposition = bytes(part.header_value)
        part.header_field.clear()
        part.header_value.clear()

    def on_headers_finished() -> None:
        nonlocal stager, filename
        _, options = parse_options_header(part.content_disposition)
        part.name = options.get(b"name", b"").decode("utf-8", "replace")
        if b"filename" in options:
            part.filename = options[b"filename"].decode("utf-8", "replace")
        if part.name == "file":
            if stager is not None:
                errors.append(InvalidFieldError("send exactly one 'file' field"))
            elif part.filename is None:
                errors.append(InvalidFieldError("the 'file' field must be a file with a name"))
            else:
                try:
                    # Refuse a bad name or type before a single byte of the file is stored.
                    filename = validate_filename(part.filename)
                    media_type_for(filename)
                except InputError as exc:
                    errors.append(exc)
                    return
                stager = blobs.stager(limit)

    def on_part_data(data: bytes, start: int, end: int) -> None:
        if part.name == "file" and stager is not None and not errors:
            pending.append(data[start:end])
        elif part.name != "file":
            part.text += data[start:end]
            if len(part.text) > MAX_TEXT_FIELD:
                errors.append(InvalidFieldError(f"field {part.name!r} is over 4 KB"))

    def on_part_end() -> None:
        if part.name and part.name != "file" and part.filename is None:
            try:
                fields[part.name] = part.text.decode("utf-8")
            except UnicodeDecodeError:
                errors.append(InvalidFieldError(f"field {part.name!r} is not valid UTF-8"))

    parser = MultipartParser(
        params[b"boundary"],
        {
            "on_part_begin": on_part_begin,
            "on_header_field": on_header_field,
            "on_header_value": on_header_value,
            "on_header_end": on_header_end,
            "on_headers_finished": on_headers_finished,
            "on_part_data": on_part_data,
            "on_part_end": on_part_end,
            "on_end": lambda: ended.append(True),
        },
    )
    try:
        async for chunk in request.stream():
            try:
                parser.write(chunk)
            except Exception as exc:
                raise InputError(f"malformed multipart body ({exc})") from None
            if errors:
                raise errors[0]
            if pending and stager is not None:
                data = b"".join(pending)
                pending.clear()
                await anyio.to_thread.run_sync(stager.write, data)
        parser.finalize()
        if errors:
            raise errors[0]
        if not ended:
            # python-multipart's finalize() does not check this: a body cut off before its
            # closing boundary would otherwise be stored as if it were the whole file.
            raise InputError("the multipart body ends before its closing boundary (truncated)")
        if stager is None:
            raise MissingFieldError("the multipart body has no 'file' field")
        staged = await anyio.to_thread.run_sync(stager.finish)
        return UploadForm(staged, filename, fields)
    except ClientDisconnect:
        if stager is not None:
            stager.discard()
        raise ClientGoneError("the client disconnected during the upload") from None
    except BaseException:
        if stager is not None:
            stager.discard()
        raise
