"""End to end with the official `openai` client and a `chat` key, against a real server: the
key goes in `api_key` unchanged, answers stay in the key's collection, and the key can
download exactly what its answers cited."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import openai
import pytest
from openai import OpenAI

from stream_rag.access.keys import KeyStore
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app

from .helpers import HTTP_GUARD_S, running_server

REFUNDS = b"Annual plans can be refunded within 30 days of purchase. Refunds go to the card."
SHIPPING = b"Orders ship within 2 business days. Express shipping costs 12 euros."
SECRET = b"Annual plans for the board can be refunded within 90 days, says the internal memo."


def test_openai_client_with_a_chat_key(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    store = KeyStore(settings.data_dir)
    _, admin_key = store.create(name="ops", scopes=["admin"])
    _, chat_key = store.create(name="widget", scopes=["chat"], collections=["docs"])
    admin = {"Authorization": f"Bearer {admin_key}"}
    with running_server(create_app(settings, embedder=minilm)) as base_url:
        ids = {}
        for name, data, collection in (
            ("refunds.txt", REFUNDS, "docs"),
            ("shipping.txt", SHIPPING, "docs"),
            ("memo.txt", SECRET, "internal"),
        ):
            response = httpx.post(
                f"{base_url}/v1/documents",
                files={"file": (name, data)},
                data={"collection": collection},
                headers=admin,
                timeout=HTTP_GUARD_S,
            )
            assert response.status_code == 201, response.text
            ids[name] = response.json()["document"]["id"]
        for doc_id in ids.values():
            deadline = time.monotonic() + 60
            while (
                httpx.get(
                    f"{base_url}/v1/documents/{doc_id}", headers=admin, timeout=HTTP_GUARD_S
                ).json()["versions"][-1]["status"]
                != "ready"
            ):
                assert time.monotonic() < deadline
                time.sleep(0.02)

        client = OpenAI(base_url=f"{base_url}/v1", api_key=chat_key)
        assert [m.id for m in client.models.list()] == ["stream-rag"]
        messages: list[openai.types.chat.ChatCompletionMessageParam] = [
            {"role": "user", "content": "Within how many days can annual plans be refunded?"}
        ]
        chunks = list(
            client.chat.completions.create(model="stream-rag", messages=messages, stream=True)
        )
        extensions = [(c.model_extra or {}).get("stream_rag") or {} for c in chunks]
        sources = extensions[0]["sources"]
        assert {s["doc_id"] for s in sources} <= {ids["refunds.txt"], ids["shipping.txt"]}
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert "30 days" in text
        assert "90" not in text
        cited = {c["url"] for e in extensions for c in e.get("citations", [])}
        assert cited == {f"/v1/documents/{ids['refunds.txt']}/versions/1/content"}

        chat = {"Authorization": f"Bearer {chat_key}"}
        [url] = cited
        assert httpx.get(f"{base_url}{url}", headers=chat, timeout=HTTP_GUARD_S).content == REFUNDS
        for other in ("shipping.txt", "memo.txt"):  # not cited / another collection
            hidden = httpx.get(
                f"{base_url}/v1/documents/{ids[other]}/content", headers=chat, timeout=HTTP_GUARD_S
            )
            assert hidden.status_code == 404
        assert httpx.get(f"{base_url}{url}", timeout=HTTP_GUARD_S).status_code == 401

        whole = client.chat.completions.create(model="stream-rag", messages=messages)
        assert "30 days" in (whole.choices[0].message.content or "")
        with pytest.raises(openai.PermissionDeniedError):
            client.chat.completions.create(
                model="stream-rag", messages=messages, extra_body={"gate_threshold": 0.01}
            )
        with pytest.raises(openai.PermissionDeniedError):
            client.chat.completions.create(
                model="stream-rag", messages=messages, extra_body={"collection": "internal"}
            )
        stranger = OpenAI(base_url=f"{base_url}/v1", api_key="sr_wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            stranger.chat.completions.create(model="stream-rag", messages=messages)
