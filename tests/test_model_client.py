"""The chat model's request is the one `chat.completions.create` sends (model/client.py),
against a real server on 127.0.0.1 that records what arrives."""

from __future__ import annotations

import json
from contextlib import aclosing
from pathlib import Path
from typing import cast

import anyio
import anyio.abc
import pytest
from openai import AsyncOpenAI, Timeout
from openai.types.chat import ChatCompletionMessageParam

from stream_rag.model.client import http_client_class, openai_client
from stream_rag.model.llm import ModelError, OpenAIChatModel
from stream_rag.types import Message
from tests.helpers import TcpModelServer, content_length

REPLY = (Path(__file__).parent / "fixtures" / "model_streams" / "openai.sse").read_bytes()
MESSAGES = [Message("system", "Answer from the blocks."), Message("user", "What do refunds cost?")]
# The SDK's description of itself, for OpenAI's servers: not sent to a plain-HTTP server.
PLATFORM = {
    "x-stainless-lang",
    "x-stainless-package-version",
    "x-stainless-os",
    "x-stainless-arch",
    "x-stainless-runtime",
    "x-stainless-runtime-version",
}


class RecordingServer(TcpModelServer):
    """Answers every request on a connection with `status` and `body`; keeps each request's
    method, path, headers (names lowered, in order) and body."""

    def __init__(self, status: bytes = b"200 OK", body: bytes = REPLY) -> None:
        self.response = (
            b"HTTP/1.1 " + status + b"\r\ncontent-type: text/event-stream\r\n"
            b"content-length: %d\r\n\r\n" % len(body) + body
        )
        self.requests: list[tuple[bytes, list[tuple[bytes, bytes]], bytes]] = []

    async def serve(self, stream: anyio.abc.SocketStream) -> None:
        async with stream:
            data = b""
            while True:
                while b"\r\n\r\n" not in data:
                    try:
                        data += await stream.receive()
                    except anyio.EndOfStream:
                        return
                head, _, data = data.partition(b"\r\n\r\n")
                while len(data) < content_length(head):
                    data += await stream.receive()
                size = content_length(head)
                body, data = data[:size], data[size:]
                line, *fields = head.split(b"\r\n")
                headers = [
                    (n.strip().lower(), v.strip())
                    for n, _, v in (f.partition(b":") for f in fields)
                ]
                self.requests.append((line, headers, body))
                await stream.send(self.response)


async def answer(model: OpenAIChatModel) -> str:
    async with aclosing(model.stream(MESSAGES)) as pieces:
        return "".join([piece async for piece in pieces])


async def sdk_request(base_url: str) -> None:
    """What the stock client sends for the same answer through `create`."""
    client = AsyncOpenAI(
        base_url=base_url, api_key="k", timeout=Timeout(60.0, read=20.0), max_retries=0
    )
    try:
        async with client.chat.completions.with_streaming_response.create(
            model="m",
            messages=cast("list[ChatCompletionMessageParam]", [m.to_json() for m in MESSAGES]),
            max_tokens=512,
            temperature=0.0,
            stream=True,
            stream_options={"include_usage": True},
        ) as response:
            await response.read()
    finally:
        await client.close()


@pytest.mark.anyio
async def test_the_request_is_the_one_create_sends_without_the_platform_headers() -> None:
    server = RecordingServer()
    async with server as base_url:
        model = OpenAIChatModel(base_url, "m", api_key="k")
        try:
            first = await answer(model)
            second = await answer(model)  # the memoised URL and headers, a second time
        finally:
            await model.aclose()
        await sdk_request(base_url)
    assert first == second
    assert first.startswith("Refunds are available")
    (line, headers, body), again, (sdk_line, sdk_headers, sdk_body) = server.requests
    assert again == (line, headers, body)
    assert line == sdk_line == b"POST /v1/chat/completions HTTP/1.1"
    assert json.loads(body) == json.loads(sdk_body)  # the same JSON (keys in another order)
    assert json.loads(body)["messages"][1] == {"role": "user", "content": "What do refunds cost?"}
    names = [name.decode() for name, _ in sdk_headers]
    assert set(names) >= PLATFORM
    kept = [(n, v) for n, v in sdk_headers if n.decode() not in PLATFORM]
    assert headers == kept
    assert (b"authorization", b"Bearer k") in headers
    assert (
        b"user-agent",
        b"AsyncOpenAI/Python " + dict(sdk_headers)[b"x-stainless-package-version"],
    ) in headers


@pytest.mark.anyio
async def test_an_https_model_gets_the_platform_headers() -> None:
    client = openai_client("https://models.example/v1", "k", Timeout(5.0))
    try:
        headers = client.platform_headers()
    finally:
        await client.close()
    assert {name.lower() for name in headers} >= PLATFORM


@pytest.mark.anyio
async def test_an_error_reply_is_still_the_clients_to_map() -> None:
    server = RecordingServer(b"400 Bad Request", b'{"error": {"message": "no such model"}}')
    async with server as base_url:
        model = OpenAIChatModel(base_url, "m")
        model.include_usage = False
        try:
            with pytest.raises(ModelError, match=r"BadRequestError.*no such model"):
                await answer(model)
        finally:
            await model.aclose()
    assert len(server.requests) == 1


@pytest.mark.anyio
async def test_the_memoised_merges_follow_a_new_base_url_and_new_client_headers() -> None:
    client = http_client_class()(base_url="http://a.example/v1/")
    try:
        first = client.build_request("POST", "chat/completions", headers=[("x-a", "1")])
        client.base_url = "http://b.example/v2/"
        client.headers["x-client"] = "2"
        second = client.build_request("POST", "chat/completions", headers=[("x-a", "1")])
        second.headers["x-later"] = "3"  # a request's headers are its own
        third = client.build_request("POST", "chat/completions", headers=[("x-a", "1")])
    finally:
        await client.aclose()
    assert str(first.url) == "http://a.example/v1/chat/completions"
    assert str(second.url) == "http://b.example/v2/chat/completions"
    assert "x-client" not in first.headers
    assert second.headers["x-client"] == "2"
    assert "x-later" not in third.headers
