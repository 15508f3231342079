"""Connection and answer-slot budgets a stranger cannot exhaust (issue 29): per-address caps
on open and idle connections, a reserved share for health checks and admin keys, answer
slots taken only once the body is in, and per-visitor slots on a shared chat key. Real
sockets against a real server; addresses 127.0.0.2... stand for other machines."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest

from stream_rag.access.keys import KeyStore
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.http.serving import server_config
from stream_rag.model.fake import FakeConfig, create_fake_llm

from .helpers import HANG_GUARD_S, HTTP_GUARD_S, free_port, running_server, serving_thread


@contextmanager
def serving(settings: Settings, minilm: MiniLMEmbedder) -> Iterator[int]:
    port = free_port()
    config = server_config(
        create_app(settings, embedder=minilm), settings, host="127.0.0.1", port=port
    )
    with serving_thread(config):
        yield port


def connect(port: int, source: str) -> socket.socket:
    sock = socket.socket()
    sock.settimeout(HANG_GUARD_S)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def exchange(sock: socket.socket, path: str, key: str | None = None, close: bool = True) -> bytes:
    """One GET on `sock`; the response head and what body came with it."""
    auth = f"Authorization: Bearer {key}\r\n" if key else ""
    connection = "Connection: close\r\n" if close else ""
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}{connection}\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def status(response: bytes) -> int:
    return int(response.split(b" ", 2)[1])


def held(port: int, source: str, n: int, stack: ExitStack) -> list[socket.socket]:
    return [stack.enter_context(connect(port, source)) for _ in range(n)]


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, str]:
    store = KeyStore(tmp_path / "data")
    return {
        "admin": store.create(name="ops", scopes=["admin"])[1],
        "read": store.create(name="r", scopes=["read"])[1],
    }


def test_one_address_cannot_hold_every_connection(
    tmp_path: Path, minilm: MiniLMEmbedder, keys: dict[str, str]
) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        max_connections=20,
        max_connections_per_address=8,
        header_timeout_s=120,
    )
    with serving(settings, minilm) as port, ExitStack() as stack:
        held(port, "127.0.0.2", 8, stack)  # idle: no request sent
        with connect(port, "127.0.0.2") as ninth:
            # Refused as it connects, in one write: the response is in before the request.
            refused = exchange(ninth, "/healthz")
            assert status(refused) == 503
            assert b"MAX_CONNECTIONS_PER_ADDRESS" in refused
        with connect(port, "127.0.0.1") as other:
            assert status(exchange(other, "/healthz")) == 200
        with connect(port, "127.0.0.3") as other:
            assert status(exchange(other, "/v1/documents", keys["read"])) == 200


@pytest.mark.parametrize("addresses", [2, 3])  # 16 held: in the reserve; 24: past it
def test_a_reserve_answers_health_and_admin_while_a_flood_is_held(
    tmp_path: Path, minilm: MiniLMEmbedder, keys: dict[str, str], addresses: int
) -> None:
    """Past MAX_CONNECTIONS only health and admin are served; past the reserve too, a new
    connection closes the oldest waiting one of the address holding the most."""
    settings = Settings(
        data_dir=tmp_path / "data",
        max_connections=16,
        max_connections_per_address=8,
        reserved_connections=4,
        header_timeout_s=120,
    )
    with serving(settings, minilm) as port, ExitStack() as stack:
        for i in range(addresses):
            held(port, f"127.0.0.{10 + i}", 8, stack)
        for path, key, expected in (
            ("/healthz", None, 200),
            ("/readyz", None, 200),
            ("/v1/documents", keys["admin"], 200),
            ("/v1/documents", keys["read"], 503),
        ):
            with connect(port, "127.0.0.4") as late:
                assert status(exchange(late, path, key)) == expected, (path, expected)


def test_idle_keep_alive_connections_per_address_are_capped(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path / "data", max_idle_per_address=2)
    with serving(settings, minilm) as port, ExitStack() as stack:
        first, second, third = held(port, "127.0.0.5", 3, stack)
        for sock in (first, second):
            assert b"connection: close" not in exchange(sock, "/healthz", close=False).lower()
        # Two already wait for their next request: this one's response closes it.
        assert b"connection: close" in exchange(third, "/healthz", close=False).lower()


def test_an_answer_slot_is_taken_only_once_the_body_is_in(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path / "data", body_timeout_s=120)
    _, chat = KeyStore(settings.data_dir).create(name="widget", scopes=["chat"], max_streams=1)
    with serving(settings, minilm) as port, connect(port, "127.0.0.2") as trickle:
        # A body sent a byte at a time: today it held the key's only slot until its deadline.
        trickle.sendall(
            b"POST /v1/answer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Authorization: Bearer " + chat.encode() + b"\r\nContent-Length: 200\r\n\r\n{"
        )
        answered = httpx.post(
            f"http://127.0.0.1:{port}/v1/answer",
            json={"question": "Which plans can be refunded?"},
            headers={"Authorization": f"Bearer {chat}"},
            timeout=HTTP_GUARD_S,
        )
        assert answered.status_code == 200, answered.text


def test_each_visitor_of_a_shared_chat_key_has_its_own_slots(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    with running_server(create_fake_llm(FakeConfig(stall_after=2, stall_s=30))) as llm:
        settings = Settings(
            data_dir=tmp_path / "data",
            llm_base_url=f"{llm}/v1",
            llm_stall_s=60,
            visitor_max_streams=1,
        )
        store = KeyStore(settings.data_dir)
        admin = {"Authorization": "Bearer " + store.create(name="a", scopes=["admin"])[1]}
        chat = {"Authorization": "Bearer " + store.create(name="w", scopes=["chat"])[1]}
        with serving(settings, minilm) as port:
            base = f"http://127.0.0.1:{port}"
            text = b"Annual plans can be refunded within 30 days of purchase."
            doc = httpx.post(
                f"{base}/v1/documents",
                files={"file": ("a.txt", text)},
                headers=admin,
                timeout=HTTP_GUARD_S,
            ).json()["document"]["id"]
            deadline = time.monotonic() + HANG_GUARD_S
            while httpx.get(
                f"{base}/v1/documents/{doc}", headers=admin, timeout=HTTP_GUARD_S
            ).json()["versions"][0]["status"] not in ("ready", "failed"):
                assert time.monotonic() < deadline
                time.sleep(0.02)

            def visitor(address: str) -> httpx.Client:
                transport = httpx.HTTPTransport(local_address=address)
                return httpx.Client(base_url=base, transport=transport, timeout=HTTP_GUARD_S)

            body = {"question": "Which plans can be refunded?"}
            probe = {"q": "x" * 5000}  # over the length limit: 400 past the guard, no model
            with (
                visitor("127.0.0.2") as one,
                visitor("127.0.0.3") as two,
                one.stream("POST", "/v1/chat", json=body, headers=chat) as first,
            ):
                lines = first.iter_lines()
                assert next(x for x in lines if x.startswith("event:")) == "event: sources"
                again = one.get("/v1/chat", params=probe, headers=chat)
                assert again.status_code == 429
                assert "each visitor" in again.json()["error"]["message"]
                assert two.get("/v1/chat", params=probe, headers=chat).status_code == 400
