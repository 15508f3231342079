"""The OpenAPI 3.1 document served at `/openapi.json`, written by hand.

Handlers parse their own input, so nothing is generated from code; `tests/test_openapi.py`
checks that every route of the app is described here and nothing else is. A new route or
request field goes into `PATHS` below, a request or response body into `SCHEMAS`
(openapi_schemas.py); then `python -m tools.reference` regenerates docs/reference/http.md.
"""

from __future__ import annotations

from typing import Any

from .. import __version__
from ..store.records import COLLECTION_NAME
from .openapi_schemas import SCHEMAS, ref

JSON = "application/json"
SSE = "text/event-stream"


def _json(schema: dict[str, Any], description: str = "OK") -> dict[str, Any]:
    return {"description": description, "content": {JSON: {"schema": schema}}}


def _errors(*statuses: int) -> dict[str, Any]:
    return {str(s): _json(ref("Error"), "error") for s in statuses}


def _body(name: str) -> dict[str, Any]:
    return {"required": True, "content": {JSON: {"schema": ref(name)}}}


# The name rule of store/records.py, as a JSON Schema pattern.
_COLLECTION = f"^{COLLECTION_NAME.pattern}$"
_DOC_ID = {"name": "doc_id", "in": "path", "required": True, "schema": {"type": "string"}}
_VERSION_N = {
    "name": "n",
    "in": "path",
    "required": True,
    "schema": {"type": "integer", "minimum": 1},
}
_UPLOAD = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["file"],
                "properties": {
                    "file": {"type": "string", "contentMediaType": "application/octet-stream"},
                    "name": {"type": "string", "maxLength": 255},
                    "collection": {
                        "type": "string",
                        "pattern": _COLLECTION,
                    },
                },
            }
        }
    },
}
_BYTES = {
    "description": "the version's original bytes",
    "content": {"application/octet-stream": {"schema": {"type": "string"}}},
}
_SSE_ANSWER = {
    "description": "Server-Sent Events: sources, sentence/dropped..., refusal?, then done or error",
    "content": {SSE: {"schema": {"type": "string"}}},
}

PATHS: dict[str, dict[str, Any]] = {
    "/": {"get": {"summary": "the web page (a redirect) or a service note", "responses": {}}},
    "/healthz": {"get": {"summary": "liveness", "responses": {"200": _json(ref("Health"))}}},
    "/readyz": {
        "get": {
            "summary": "readiness: dependencies answer, start-up indexing is done",
            "responses": {
                "200": _json(ref("Health"), "ready"),
                "503": _json(ref("Health"), "not ready; `failed` names the checks"),
            },
        }
    },
    "/metrics": {
        "get": {
            "summary": "Prometheus text exposition",
            "responses": {
                "200": {"description": "metrics", "content": {"text/plain": {"schema": {}}}}
            },
        }
    },
    "/openapi.json": {
        "get": {"summary": "this document", "responses": {"200": _json({"type": "object"})}}
    },
    "/v1/documents": {
        "post": {
            "summary": "upload a document",
            "requestBody": _UPLOAD,
            "responses": {
                "201": _json(ref("UploadResult"), "stored"),
                "200": _json(ref("UploadResult"), "duplicate"),
                **_errors(400, 408, 413, 415, 422, 507),
            },
        },
        "get": {
            "summary": "list documents",
            "parameters": [{"name": "collection", "in": "query", "schema": {"type": "string"}}],
            "responses": {"200": _json({"type": "object"})},
        },
    },
    "/v1/documents/{doc_id}": {
        "get": {
            "summary": "one document with its versions",
            "parameters": [_DOC_ID],
            "responses": {"200": _json(ref("Document")), **_errors(404)},
        },
        "delete": {
            "summary": "delete a document and all its versions",
            "parameters": [_DOC_ID],
            "responses": {"200": _json({"type": "object"}), **_errors(404)},
        },
    },
    "/v1/documents/{doc_id}/content": {
        "get": {
            "summary": "the newest version's original bytes",
            "parameters": [_DOC_ID],
            "responses": {"200": _BYTES, **_errors(404)},
        }
    },
    "/v1/documents/{doc_id}/versions": {
        "post": {
            "summary": "add a version",
            "parameters": [_DOC_ID],
            "requestBody": _UPLOAD,
            "responses": {
                "201": _json(ref("UploadResult"), "stored"),
                "200": _json(ref("UploadResult"), "identical to the newest version"),
                **_errors(400, 404, 408, 413, 415, 422, 507),
            },
        }
    },
    "/v1/documents/{doc_id}/versions/{n}": {
        "get": {
            "summary": "one version's record",
            "parameters": [_DOC_ID, _VERSION_N],
            "responses": {"200": _json(ref("Version")), **_errors(404)},
        }
    },
    "/v1/documents/{doc_id}/versions/{n}/chunks": {
        "get": {
            "summary": "a version's chunks with spans and text",
            "parameters": [_DOC_ID, _VERSION_N],
            "responses": {"200": _json({"type": "object"}), **_errors(404)},
        }
    },
    "/v1/documents/{doc_id}/versions/{n}/content": {
        "get": {
            "summary": "a version's original bytes",
            "parameters": [_DOC_ID, _VERSION_N],
            "responses": {"200": _BYTES, **_errors(404)},
        }
    },
    "/v1/search": {
        "post": {
            "summary": "hybrid retrieval",
            "requestBody": _body("SearchRequest"),
            "responses": {"200": _json({"type": "object"}), **_errors(400)},
        }
    },
    "/v1/chat": {
        "post": {
            "summary": "the gated answer as Server-Sent Events",
            "requestBody": _body("AnswerRequest"),
            "responses": {"200": _SSE_ANSWER, **_errors(400)},
        },
        "get": {
            "summary": "the gated answer as Server-Sent Events (for EventSource)",
            "parameters": [
                {"name": "q", "in": "query", "required": True, "schema": {"type": "string"}},
                {"name": "collection", "in": "query", "schema": {"type": "string"}},
                {
                    "name": "top_k",
                    "in": "query",
                    "schema": {"type": "integer", "minimum": 1, "maximum": 100},
                },
            ],
            "responses": {
                "200": _SSE_ANSWER,
                "204": {"description": "a reconnect (Last-Event-ID) with nothing more to send"},
            },
        },
    },
    "/v1/streams/{stream_id}": {
        "delete": {
            "summary": "stop a /v1/chat answer whose connection closed (the widget's Stop): "
            "it would go on for STREAM_RAG_RESUME_GRACE_S for a resume",
            "parameters": [
                {"name": "stream_id", "in": "path", "required": True, "schema": {"type": "string"}},
            ],
            "responses": {
                "204": {"description": "asked stopped (or already over)"},
                **_errors(404),
            },
        },
        "get": {
            "summary": "resume a /v1/chat answer on any replica: the events after Last-Event-ID "
            "(or ?after=n), then the rest live; `error` `interrupted` if its server died",
            "parameters": [
                {"name": "stream_id", "in": "path", "required": True, "schema": {"type": "string"}},
                {"name": "after", "in": "query", "schema": {"type": "integer", "minimum": 0}},
            ],
            "responses": {
                "200": _SSE_ANSWER,
                "204": {"description": "nothing after the client's last event"},
                **_errors(404),
            },
        },
    },
    "/v1/answer": {
        "post": {
            "summary": "the non-streaming verified answer with its attempts",
            "requestBody": _body("AnswerRequest"),
            "responses": {"200": _json({"type": "object"}), **_errors(400, 502, 503, 504)},
        }
    },
    "/v1/chat/completions": {
        "post": {
            "summary": "OpenAI-compatible gated model",
            "requestBody": _body("ChatCompletionRequest"),
            "responses": {
                "200": {
                    "description": "a chat.completion, or chat.completion.chunk events",
                    "content": {JSON: {"schema": {"type": "object"}}, SSE: {}},
                },
                **_errors(400, 502, 503, 504),
            },
        }
    },
    "/v1/keys": {
        "post": {
            "summary": "create an API key (admin); its secret is in this response only",
            "requestBody": _body("KeyRequest"),
            "responses": {"201": _json({"type": "object"}, "created"), **_errors(400, 401, 403)},
        },
        "get": {
            "summary": "list API keys, never their secrets (admin)",
            "responses": {"200": _json({"type": "object"}), **_errors(401, 403)},
        },
    },
    "/v1/keys/{key_id}": {
        "delete": {
            "summary": "revoke an API key at once (admin)",
            "parameters": [
                {"name": "key_id", "in": "path", "required": True, "schema": {"type": "string"}}
            ],
            "responses": {"200": _json({"type": "object"}), **_errors(401, 403, 404)},
        }
    },
    "/v1/documents/{doc_id}/versions/{n}/text": {
        "get": {
            "summary": "version n's extracted text, with a cited chunk's span (the reader)",
            "parameters": [
                _DOC_ID,
                _VERSION_N,
                {"name": "chunk", "in": "query", "schema": {"type": "string"}},
            ],
            "responses": {"200": _json({"type": "object"}), **_errors(401, 404)},
        }
    },
    "/v1/feedback": {
        "post": {
            "summary": "rate an answer this key was given (its events' id before the dot)",
            "requestBody": _body("FeedbackRequest"),
            "responses": {"200": _json({"type": "object"}), **_errors(400, 401, 404, 429)},
        }
    },
    "/v1/conversations/{conversation}": {
        "delete": {
            "summary": "delete a conversation's logged questions and ratings",
            "parameters": [
                {
                    "name": "conversation",
                    "in": "path",
                    "required": True,
                    "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{8,64}$"},
                }
            ],
            "responses": {"200": _json({"type": "object"}), **_errors(400, 401)},
        }
    },
    "/v1/insights": {
        "get": {
            "summary": "questions over time, refusals by reason and topic, ratings (admin)",
            "parameters": [
                {"name": "days", "in": "query", "schema": {"type": "integer", "minimum": 1}},
                {"name": "collection", "in": "query", "schema": {"type": "string"}},
            ],
            "responses": {"200": _json({"type": "object"}), **_errors(400, 401, 403)},
        }
    },
    "/v1/insights/questions": {
        "get": {
            "summary": "the question log as a CSV or JSON download (admin)",
            "parameters": [
                {"name": "format", "in": "query", "schema": {"enum": ["csv", "json"]}},
                {"name": "days", "in": "query", "schema": {"type": "integer", "minimum": 1}},
                {"name": "collection", "in": "query", "schema": {"type": "string"}},
            ],
            "responses": {
                "200": {
                    "description": "the rows, newest first",
                    "content": {"text/csv": {}, JSON: {"schema": {"type": "object"}}},
                },
                **_errors(400, 401, 403),
            },
        }
    },
    "/v1/index/optimize": {
        "post": {
            "summary": "build HNSW graphs for the embedded index on a copy, then swap (admin)",
            "responses": {"200": _json({"type": "object"}), **_errors(400, 401, 403, 409)},
        }
    },
    "/v1/models": {
        "get": {"summary": "the models", "responses": {"200": _json({"type": "object"})}}
    },
}


def document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "stream_rag",
            "version": __version__,
            "description": "Streaming RAG answers whose citations are checked (see docs/).",
        },
        "paths": PATHS,
        "components": {"schemas": SCHEMAS},
    }
