"""The request and response bodies of the OpenAPI document (`components.schemas`), by name;
the paths that use them are in openapi.py."""

from __future__ import annotations

from typing import Any

from ..access.keys import SCOPES


def ref(name: str) -> dict[str, str]:
    """A reference to the schema `name` below."""
    return {"$ref": f"#/components/schemas/{name}"}


_ANSWER_FIELDS: dict[str, Any] = {
    "question": {"type": "string", "minLength": 1, "maxLength": 4000},
    "collection": {"type": "string"},
    "top_k": {"type": "integer", "minimum": 1, "maximum": 100},
    "min_evidence": {"type": "number", "minimum": 0, "maximum": 1},
    "gate_threshold": {"type": "number", "minimum": 0, "maximum": 1},
    "check_conflicts": {"type": "boolean"},
    # /v1/chat: the question log keeps the answer under this id (the widget's tab's own).
    "conversation": {"type": "string", "pattern": "^[A-Za-z0-9_-]{8,64}$"},
    "history": {
        "type": "array",
        "items": {
            "type": "object",
            "required": ["question"],
            "properties": {"question": {"type": "string"}, "answer": {"type": "string"}},
        },
    },
}

SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
            }
        },
    },
    "Version": {
        "type": "object",
        "properties": {
            "doc_id": {"type": "string"},
            "version": {"type": "integer"},
            "sha256": {"type": "string"},
            "size": {"type": "integer"},
            "media_type": {"type": "string"},
            "filename": {"type": "string"},
            "created_at": {"type": "string"},
            "chunk_count": {"type": "integer"},
            "status": {"enum": ["indexing", "ready", "failed"]},
            "status_reason": {"type": ["string", "null"]},
        },
    },
    "Document": {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "collection": {"type": "string"},
            "name": {"type": "string"},
            "latest_version": {"type": "integer"},
            "live_version": {"type": ["integer", "null"]},
            "versions": {"type": "array", "items": ref("Version")},
        },
    },
    "UploadResult": {
        "type": "object",
        "properties": {
            "document": ref("Document"),
            "version": ref("Version"),
            "duplicate": {"type": "boolean"},
        },
    },
    "SearchRequest": {
        "type": "object",
        "required": ["query"],
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "collection": {"type": "string"},
            "top_k": {"type": "integer", "minimum": 1, "maximum": 100},
            "weights": {
                "type": "object",
                "properties": {
                    "dense": {"type": "number", "minimum": 0, "maximum": 1000},
                    "bm25": {"type": "number", "minimum": 0, "maximum": 1000},
                    "title": {"type": "number", "minimum": 0, "maximum": 1000},
                },
                "additionalProperties": False,
            },
            "fusion": {"enum": ["weighted", "rrf"]},
        },
    },
    "AnswerRequest": {
        "type": "object",
        "required": ["question"],
        "properties": _ANSWER_FIELDS,
    },
    "ChatCompletionRequest": {
        "type": "object",
        "required": ["messages"],
        "properties": {
            "messages": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["role"],
                    "properties": {
                        "role": {"type": "string"},
                        "content": {
                            "oneOf": [
                                {"type": "string"},
                                {"type": "null"},
                                {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "properties": {
                                            "type": {"type": "string"},
                                            "text": {"type": "string"},
                                        },
                                    },
                                },
                            ]
                        },
                    },
                },
            },
            "model": {"type": "string"},
            "stream": {"type": "boolean"},
            "stream_options": {
                "type": "object",
                "properties": {"include_usage": {"type": "boolean"}},
            },
            "collection": {"type": "string"},
        },
    },
    "FeedbackRequest": {
        "type": "object",
        "required": ["answer_id", "rating"],
        "properties": {
            "answer_id": {"type": "string", "maxLength": 64},
            "rating": {"enum": ["up", "down"]},
            "comment": {"type": "string", "maxLength": 2000},
        },
    },
    "KeyRequest": {
        "type": "object",
        "required": ["scopes"],
        "properties": {
            "scopes": {
                "type": "array",
                "items": {"type": "string", "enum": list(SCOPES)},
                "minItems": 1,
            },
            # "*" is every collection; none is refused (a 400), not widened to "*".
            "collections": {
                "oneOf": [
                    {"type": "string", "minLength": 1},
                    {"type": "array", "items": {"type": "string"}, "minItems": 1},
                ]
            },
            "name": {"type": "string", "maxLength": 200},
            "rpm": {"type": "integer", "minimum": 1},
            "max_streams": {"type": "integer", "minimum": 1},
        },
    },
    "Health": {
        "type": "object",
        "required": ["status"],
        "properties": {
            "status": {"type": "string"},
            "failed": {"type": "array", "items": {"type": "string"}},
            "checks": {"type": "object"},
            "indexing_queue": {"type": "integer"},
            "startup_indexing": {"type": "integer"},
        },
    },
}
