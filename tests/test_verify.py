"""The remote verifier against a real local HTTP server playing a TEI NLI classifier and an
OpenAI-compatible judge: verdicts, time budget, errors and unreadable replies."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import anyio
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from stream_rag.config import Settings
from stream_rag.errors import InvalidFieldError
from stream_rag.gate.judge import Stages
from stream_rag.gate.lexical import GateContext, Verdict
from stream_rag.gate.verify import LLM_PROMPT, HttpVerifier, build_verifier
from stream_rag.language.terms import stem
from stream_rag.text import tokenize

from .helpers import running_server

BLOCKS = [
    "The warranty covers manufacturing defects for two years from the date of purchase.",
    "Support is available by email on weekdays.",
]
# Fails the lexical stage on overlap alone: a grey-zone sentence.
GREY = "Manufacturing faults are covered by the guarantee for two years after you buy [1]."
# The verifier below entails a claim when most of its words are in the premise.
ENTAILED = "Manufacturing defects are covered, the guarantee lasts two years [1]."


def entailment(premise: str, hypothesis: str) -> float:
    words = {stem(t) for t in tokenize(hypothesis)}
    return len(words & {stem(t) for t in tokenize(premise)}) / max(1, len(words))


def verifier_app() -> Starlette:
    """Behaviour set per test through `app.state.behaviour`: tei, slow, error, garbage,
    not_json, no_label, llm, llm_garbage."""
    release = threading.Event()

    async def predict(request: Request) -> Response:
        behaviour = request.app.state.behaviour
        request.app.state.calls.append(await request.json())
        if behaviour == "slow":
            # Held until the module's tests are over: far past any time budget.
            await anyio.to_thread.run_sync(release.wait, abandon_on_cancel=True)
        if behaviour == "error":
            return JSONResponse({"error": "model crashed"}, status_code=500)
        if behaviour == "garbage":
            return JSONResponse({"unexpected": True})
        if behaviour == "not_json":
            return PlainTextResponse("<html>gateway</html>")
        premise, hypothesis = request.app.state.calls[-1]["inputs"][0]
        p = entailment(premise, hypothesis) ** 2
        label = "nli_yes" if behaviour == "no_label" else "entailment"
        scores = [
            {"label": label, "score": p},
            {"label": "neutral", "score": (1 - p) * 0.8},
            {"label": "contradiction", "score": (1 - p) * 0.2},
        ]
        return JSONResponse([sorted(scores, key=lambda s: -float(s["score"]))])

    async def chat(request: Request) -> Response:
        body = await request.json()
        request.app.state.calls.append(body)
        user = body["messages"][1]["content"]
        premise, claim = user.removeprefix("Source:\n").split("\n\nClaim: ")
        if request.app.state.behaviour == "llm_garbage":
            answer = "Well, it depends."
        else:
            answer = "SUPPORTED." if entailment(premise, claim) >= 0.65 else "UNSUPPORTED"
        return JSONResponse({"choices": [{"message": {"role": "assistant", "content": answer}}]})

    app = Starlette(
        routes=[
            Route("/predict", predict, methods=["POST"]),
            Route("/v1/chat/completions", chat, methods=["POST"]),
        ]
    )
    app.state.behaviour = "tei"
    app.state.calls = []
    app.state.release = release
    return app


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Starlette]]:
    app = verifier_app()
    with running_server(app) as url:
        try:
            yield url, app
        finally:
            app.state.release.set()


def judge(verifier: HttpVerifier, sentence: str) -> Verdict:
    async def run() -> Verdict:
        try:
            return await Stages(verifier=verifier).judge(GateContext(BLOCKS))(sentence)
        finally:
            await verifier.aclose()

    return anyio.run(run)


def test_entailed_grey_sentence_passes_on_the_remote_verdict(
    server: tuple[str, Starlette],
) -> None:
    url, app = server
    app.state.behaviour = "tei"
    verdict = judge(HttpVerifier(url), ENTAILED)
    assert (verdict.ok, verdict.reason, verdict.stage) == (True, "ok", "remote")
    assert verdict.scores["remote"] > 0.4
    premise, hypothesis = app.state.calls[-1]["inputs"][0]
    assert premise == BLOCKS[0]
    assert hypothesis == ENTAILED.removesuffix(" [1].") + "."


def test_not_entailed_grey_sentence_is_dropped_by_the_remote_verdict(
    server: tuple[str, Starlette],
) -> None:
    url, app = server
    app.state.behaviour = "tei"
    verdict = judge(HttpVerifier(url), GREY)
    assert (verdict.ok, verdict.reason, verdict.stage) == (False, "low_overlap", "remote")
    assert verdict.detail.startswith("remote verifier: not entailed")


def test_sentences_outside_the_grey_zone_never_reach_the_verifier(
    server: tuple[str, Starlette],
) -> None:
    url, app = server
    app.state.behaviour = "tei"
    before = len(app.state.calls)
    for sentence in (
        "Support is available by email on weekdays [2].",  # lexical pass
        "The warranty covers manufacturing defects for three years [1].",  # changed number
        "Support is available by email on weekdays [7].",  # unissued block
    ):
        assert judge(HttpVerifier(url), sentence).stage == "lexical"
    assert len(app.state.calls) == before


@pytest.mark.parametrize(
    ("behaviour", "why"),
    [
        ("slow", "remote verifier timed out after 200 ms"),
        ("error", "remote verifier failed (HTTPStatusError"),
        ("garbage", "remote verifier failed (UnreadableReply: expected a list"),
        ("not_json", "remote verifier failed (UnreadableReply: the body is not JSON"),
        ("no_label", "remote verifier failed (UnreadableReply: no 'entailment' label"),
    ],
)
def test_on_timeout_or_error_the_local_verdict_stands_and_says_why(
    server: tuple[str, Starlette], behaviour: str, why: str
) -> None:
    url, app = server
    app.state.behaviour = behaviour
    # Only the slow server is meant to time out: the others get a budget no busy machine
    # runs into, so their failure is the one reported.
    timeout_ms = 200 if behaviour == "slow" else 60_000
    verdict = judge(HttpVerifier(url, timeout_ms=timeout_ms), ENTAILED)
    assert (verdict.ok, verdict.reason, verdict.stage) == (False, "low_overlap", "lexical")
    assert verdict.detail.startswith(why)
    assert "the lexical verdict stands: overlap" in verdict.detail


def test_llm_style_asks_with_the_fixed_prompt(server: tuple[str, Starlette]) -> None:
    url, app = server
    app.state.behaviour = "llm"
    verdict = judge(HttpVerifier(f"{url}/v1", style="llm", model="judge"), ENTAILED)
    assert (verdict.ok, verdict.stage) == (True, "remote")
    request = app.state.calls[-1]
    assert request["model"] == "judge"
    assert request["messages"][0] == {"role": "system", "content": LLM_PROMPT}
    assert not judge(HttpVerifier(f"{url}/v1", style="llm"), GREY).ok
    app.state.behaviour = "llm_garbage"
    verdict = judge(HttpVerifier(f"{url}/v1", style="llm"), ENTAILED)
    assert (verdict.ok, verdict.stage) == (False, "lexical")
    assert "neither SUPPORTED nor UNSUPPORTED" in verdict.detail


def test_settings_build_the_verifier() -> None:
    assert build_verifier(Settings()) is None
    tei = build_verifier(Settings(verify_url="http://127.0.0.1:9/", verify_timeout_ms=300))
    assert tei is not None
    assert (tei.url, tei.style, tei.timeout_s) == ("http://127.0.0.1:9", "tei", 0.3)
    llm = build_verifier(
        Settings(verify_style="llm", llm_base_url="http://127.0.0.1:9/v1", llm_model="m")
    )
    assert llm is not None
    assert (llm.url, llm.style, llm.model) == ("http://127.0.0.1:9/v1", "llm", "m")
    anyio.run(tei.aclose)
    anyio.run(llm.aclose)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"STREAM_RAG_VERIFY_STYLE": "nli"}, "STREAM_RAG_VERIFY_STYLE must be 'tei' or 'llm'"),
        ({"STREAM_RAG_VERIFY_TIMEOUT_MS": "0"}, "STREAM_RAG_VERIFY_TIMEOUT_MS must be positive"),
        ({"STREAM_RAG_VERIFY_TIMEOUT_MS": "soon"}, "STREAM_RAG_VERIFY_TIMEOUT_MS"),
    ],
)
def test_bad_verifier_settings_are_refused(env: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidFieldError, match=message):
        Settings.from_env(env, env_file=None)
