"""Errors raised by stream_rag, mapped once to HTTP responses in `app.py`.

StreamRagError                  base of everything stream_rag raises on purpose
 ├── InputError                 the request or file is unusable (4xx); `status` says which
 │    ├── MissingFieldError     a required form or JSON field is absent (400)
 │    ├── InvalidFieldError     a field is present but malformed (400)
 │    ├── InvalidFilenameError  a file name with separators, `..`, control chars or too long (400)
 │    ├── EmptyFileError        the upload has zero bytes (400)
 │    ├── FileTooLargeError     the upload exceeds STREAM_RAG_MAX_UPLOAD_MB (413)
 │    ├── UnsupportedTypeError  the file's extension is not one we extract (415)
 │    ├── ClientGoneError       the client disconnected before its request was complete
 │    ├── BodyTimeoutError      the request body did not arrive within its time budget (408)
 │    └── ExtractionError       the bytes cannot be turned into text (422)
 │         ├── InvalidTextError      a text file that is not valid UTF-8 (or UTF-16 with BOM)
 │         ├── InvalidPdfError       a `.pdf` that is not a PDF
 │         ├── EncryptedPdfError     a PDF that needs a password
 │         ├── CorruptDocumentError  a PDF or DOCX that is damaged
 │         ├── NoTextError           a well-formed file with no extractable text
 │         └── LimitExceededError    a per-document extraction limit was hit (names it)
 ├── NotFoundError              an unknown document id or version (404)
 ├── DataDirMissingError        a CLI command that reads stored documents names no directory
 ├── ShuttingDownError          the server is stopping and its drain period is over (503)
 ├── AnswerTimeoutError         the whole answer took over STREAM_RAG_ANSWER_TIMEOUT_S (504)
 ├── QueueFullError             too many versions wait to be indexed; retry later (503)
 └── StoreUnavailableError      the database (STREAM_RAG_DATABASE_URL) cannot be reached (503)
"""

from __future__ import annotations

from typing import ClassVar


class StreamRagError(Exception):
    """Base class; `code` is a stable machine-readable string, `status` an HTTP status."""

    code = "internal_error"
    status = 500
    headers: ClassVar[dict[str, str] | None] = None  # sent with the error's response

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_json(self) -> dict[str, object]:
        return {"error": {"code": self.code, "message": self.message}}


class InputError(StreamRagError):
    code = "invalid_input"
    status = 400


class MissingFieldError(InputError):
    code = "missing_field"


class InvalidFieldError(InputError):
    code = "invalid_field"


class InvalidFilenameError(InputError):
    code = "invalid_filename"


class EmptyFileError(InputError):
    code = "empty_file"


class FileTooLargeError(InputError):
    code = "file_too_large"
    status = 413


class UnsupportedTypeError(InputError):
    code = "unsupported_type"
    status = 415


class ClientGoneError(InputError):
    code = "client_disconnected"


class BodyTimeoutError(InputError):
    code = "body_timeout"
    status = 408


class ExtractionError(InputError):
    code = "extraction_failed"
    status = 422


class InvalidTextError(ExtractionError):
    code = "invalid_text_encoding"


class InvalidPdfError(ExtractionError):
    code = "invalid_pdf"


class EncryptedPdfError(ExtractionError):
    code = "encrypted_pdf"


class CorruptDocumentError(ExtractionError):
    code = "corrupt_document"


class NoTextError(ExtractionError):
    code = "no_text"


class LimitExceededError(ExtractionError):
    """`limit` is the setting that was exceeded, e.g. `STREAM_RAG_MAX_CHUNKS_PER_DOC`."""

    code = "limit_exceeded"

    def __init__(self, message: str, limit: str) -> None:
        super().__init__(message)
        self.limit = limit

    def __reduce__(self) -> tuple[type[LimitExceededError], tuple[str, str]]:
        # Raised in extraction worker processes and re-raised here: keep `limit` over pickle.
        return (type(self), (self.message, self.limit))

    def to_json(self) -> dict[str, object]:
        return {"error": {"code": self.code, "message": self.message, "limit": self.limit}}


class NotFoundError(StreamRagError):
    code = "not_found"
    status = 404


class ShuttingDownError(StreamRagError):
    code = "shutting_down"
    status = 503


class AnswerTimeoutError(StreamRagError):
    code = "answer_timeout"
    status = 504


class QueueFullError(StreamRagError):
    code = "queue_full"
    status = 503


class DataDirMissingError(StreamRagError):
    """A CLI command that reads what is stored was pointed at a data directory that does not
    exist (a mistyped --data-dir), so it would have opened an empty store there."""

    code = "data_dir_missing"


class StoreUnavailableError(StreamRagError):
    code = "store_unavailable"
    status = 503
