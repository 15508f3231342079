"""stream_rag: a streaming RAG backend that only sends sentences whose citations check out."""

from .config import Settings
from .errors import (
    CorruptDocumentError,
    EmptyFileError,
    EncryptedPdfError,
    ExtractionError,
    FileTooLargeError,
    InputError,
    InvalidFieldError,
    InvalidFilenameError,
    InvalidPdfError,
    InvalidTextError,
    MissingFieldError,
    NoTextError,
    NotFoundError,
    StreamRagError,
    UnsupportedTypeError,
)
from .store.documents import DocumentStore
from .types import Chunk, Document, UploadResult, Version

__version__ = "0.1.0"

__all__ = [
    "Chunk",
    "CorruptDocumentError",
    "Document",
    "DocumentStore",
    "EmptyFileError",
    "EncryptedPdfError",
    "ExtractionError",
    "FileTooLargeError",
    "InputError",
    "InvalidFieldError",
    "InvalidFilenameError",
    "InvalidPdfError",
    "InvalidTextError",
    "MissingFieldError",
    "NoTextError",
    "NotFoundError",
    "Settings",
    "StreamRagError",
    "UnsupportedTypeError",
    "UploadResult",
    "Version",
]
