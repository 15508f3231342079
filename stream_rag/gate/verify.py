"""A remote second opinion on grey-zone sentences, for those who have a better model than the
local stages: an NLI / cross-encoder classifier behind Hugging Face TEI's `/predict`, or
(`STREAM_RAG_VERIFY_STYLE=llm`) an OpenAI-compatible chat model asked with a fixed prompt.

Each sentence gets `STREAM_RAG_VERIFY_TIMEOUT_MS`; on timeout, an HTTP error or a reply that
cannot be read, the local verdict stands and its detail says why.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import anyio
import httpx

from ..config import Settings
from .lexical import GateContext, Verdict

__all__ = ["LLM_PROMPT", "HttpVerifier", "build_verifier"]

LLM_PROMPT = (
    "You check whether a claim is supported by a source text. Answer with exactly one word: "
    "SUPPORTED if everything the claim states is stated or directly implied by the source, "
    "UNSUPPORTED otherwise (something is missing from the source, contradicts it, or adds "
    "detail it does not give)."
)


class UnreadableReply(ValueError):
    """The verifier answered, but not in a shape this client understands."""


class HttpVerifier:
    """One HTTP verifier; `verify` never raises for the verifier's failures."""

    def __init__(
        self,
        url: str,
        *,
        style: str = "tei",
        model: str | None = None,
        api_key: str | None = None,
        timeout_ms: float = 1500.0,
        label: str = "entailment",
    ) -> None:
        if style not in ("tei", "llm"):
            raise ValueError(f"unknown verifier style {style!r}")
        self.url = url.rstrip("/")
        self.style = style
        self.model = model
        self.timeout_s = timeout_ms / 1000
        self.label = label.casefold()
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # The budget is enforced per sentence below; the client's own timeout is a backstop.
        self._client = httpx.AsyncClient(headers=headers, timeout=self.timeout_s + 1.0)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def verify(self, sentence: str, verdict: Verdict, ctx: GateContext) -> Verdict:
        """The remote verdict on a grey-zone sentence, or the local one with the reason."""
        premise = "\n\n".join(ctx.block_text(n) for n in sorted(set(verdict.cited)))
        try:
            with anyio.fail_after(self.timeout_s):
                entailed, score = await self._ask(premise, sentence)
        except TimeoutError:
            return _stands(
                verdict, f"remote verifier timed out after {self.timeout_s * 1000:.0f} ms"
            )
        except (httpx.HTTPError, UnreadableReply) as exc:
            return _stands(verdict, f"remote verifier failed ({type(exc).__name__}: {exc})")
        scores = {**verdict.scores, "remote": round(score, 4)}
        if entailed:
            detail = f"remote verifier: entailed ({score:.2f})"
            return Verdict(True, "ok", verdict.cited, verdict.score, detail, True, "remote", scores)
        detail = f"remote verifier: not entailed ({score:.2f}); {verdict.detail}"
        return Verdict(
            False, "low_overlap", verdict.cited, verdict.score, detail, True, "remote", scores
        )

    async def _ask(self, premise: str, hypothesis: str) -> tuple[bool, float]:
        if self.style == "llm":
            return await self._ask_llm(premise, hypothesis)
        response = await self._client.post(
            f"{self.url}/predict", json={"inputs": [[premise, hypothesis]]}
        )
        response.raise_for_status()
        return self._read_tei(_json(response))

    def _read_tei(self, body: Any) -> tuple[bool, float]:
        # TEI answers a batch with one list of {label, score} per input, a single input with
        # the list itself.
        if isinstance(body, list) and body and isinstance(body[0], list):
            body = body[0]
        if not isinstance(body, list) or not body:
            raise UnreadableReply("expected a list of {label, score}")
        try:
            ranked = sorted(
                ((float(item["score"]), str(item["label"]).casefold()) for item in body),
                reverse=True,
            )
        except (KeyError, TypeError, ValueError):
            raise UnreadableReply("expected a list of {label, score}") from None
        mine = [s for s, label in ranked if label == self.label]
        if not mine:
            raise UnreadableReply(f"no {self.label!r} label in the reply")
        return ranked[0][1] == self.label, mine[0]

    async def _ask_llm(self, premise: str, hypothesis: str) -> tuple[bool, float]:
        request: dict[str, Any] = {
            "messages": [
                {"role": "system", "content": LLM_PROMPT},
                {"role": "user", "content": f"Source:\n{premise}\n\nClaim: {hypothesis}"},
            ],
            "temperature": 0,
            "max_tokens": 4,
            "stream": False,
        }
        if self.model:
            request["model"] = self.model
        response = await self._client.post(f"{self.url}/chat/completions", json=request)
        response.raise_for_status()
        try:
            content = str(_json(response)["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError):
            raise UnreadableReply("no choices[0].message.content") from None
        words = content.strip().strip(".*\"'").split()
        answer = words[0].upper().strip(".*\"',:") if words else ""
        if answer == "SUPPORTED":
            return True, 1.0
        if answer in ("UNSUPPORTED", "NOT"):
            return False, 0.0
        raise UnreadableReply(f"answer {content[:40]!r} is neither SUPPORTED nor UNSUPPORTED")


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise UnreadableReply("the body is not JSON") from None


def _stands(verdict: Verdict, why: str) -> Verdict:
    return replace(verdict, detail=f"{why}; the {verdict.stage} verdict stands: {verdict.detail}")


def build_verifier(settings: Settings) -> HttpVerifier | None:
    """The configured verifier; style `llm` without a URL asks the answering model's endpoint."""
    url, api_key, model = settings.verify_url, settings.verify_api_key, settings.verify_model
    if url is None and settings.verify_style == "llm" and settings.llm_base_url:
        url, api_key = settings.llm_base_url, api_key or settings.llm_api_key
        model = model or settings.llm_model
    if not url:
        return None
    return HttpVerifier(
        url,
        style=settings.verify_style,
        model=model,
        api_key=api_key,
        timeout_ms=settings.verify_timeout_ms,
        label=settings.verify_label,
    )
