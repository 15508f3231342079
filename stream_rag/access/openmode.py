"""Open mode (no key configured): every request acts as admin, but only while nothing says a
request can come from elsewhere. A public-address setting, a proxy's header or a Host that is
not this machine's turns it read-only for good: answers as a `chat` key sees them, nothing
else (docs/decisions/open-mode-read-only.md)."""

from __future__ import annotations

import ipaddress
import logging

from starlette.datastructures import Headers

from ..config import Settings
from .principals import Principal, is_loopback

log = logging.getLogger("stream_rag")

# Headers a reverse proxy adds (RFC 7239, the de facto X-Forwarded-*, nginx's X-Real-IP,
# RFC 9110's Via): a request carrying one was relayed.
_PROXY_HEADERS = ("forwarded", "x-real-ip", "via", "x-forwarded-")

READ_ONLY_MESSAGE = (
    "no API key is configured and {why}, so open mode is off: without a key only answers "
    "(as a chat key sees them) are served. Create an admin key on the server with "
    "`stream-rag keys create --scope admin --name ops` and send it as "
    "'Authorization: Bearer <key>' (STREAM_RAG_ALLOW_ANONYMOUS=1 turns open mode back on "
    "if every client is trusted)."
)


def settings_refusal(settings: Settings) -> str | None:
    """Why the settings alone say requests may come from elsewhere; None if they do not."""
    if settings.allow_anonymous:
        return None
    if settings.public_url:
        return "STREAM_RAG_PUBLIC_URL is set"
    if settings.allowed_hosts:
        return "STREAM_RAG_ALLOWED_HOSTS is set"
    return None


def relayed(headers: Headers) -> str | None:
    """Why this request looks relayed or addressed from elsewhere; None if it does not."""
    for name in headers:
        if name in _PROXY_HEADERS or name.startswith("x-forwarded-"):
            return f"a request came through a proxy (it carried {name!r})"
    host = _host_name(headers.get("host", ""))
    if host and not _local_name(host):
        return f"a request named the host {host[:100]!r}"
    return None


def _host_name(header: str) -> str:
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rpartition(":")[0] if header.count(":") == 1 else header


def _local_name(host: str) -> bool:
    """Loopback names and addresses, and single-label names (`testserver`, the machine's own
    name: public DNS serves none; a proxy passes the public, dotted name)."""
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost") or is_loopback(name):
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return "." not in name
    return False


class OpenMode:
    """The keyless server's state: open (admin for all) until refused, then read-only."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.refused: str | None = settings_refusal(settings)

    def principal(self, headers: Headers, client: str) -> Principal:
        if self.refused is None and not self.settings.allow_anonymous:
            why = relayed(headers)
            if why is not None:
                self.refused = why  # for good: the proxy's next request may carry no sign
                log.warning("OPEN MODE TURNED OFF: %s", READ_ONLY_MESSAGE.format(why=why))
        if self.refused is None:
            return Principal.open(client)
        return Principal(f"addr:{client}", frozenset({"chat"}), None, anonymous=True)

    def refusal(self) -> str:
        return READ_ONLY_MESSAGE.format(why=self.refused or "open mode is off")

    def log_start(self) -> None:
        if self.refused is not None:
            log.warning("OPEN MODE REFUSED AT START: %s", self.refusal())
        elif not is_loopback(self.settings.host):
            log.warning("no API key and STREAM_RAG_ALLOW_ANONYMOUS: anyone may do anything")
