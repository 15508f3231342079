"""An answer that fails mid-stream reaches an OpenAI client as OpenAI's own streams report it:
an `error` object, which the official client raises, against real servers."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.model.fake import FakeConfig, create_fake_llm

from .test_chat_http import QUESTION, app_with_model


def test_a_model_failure_mid_stream_raises_in_the_official_client(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    fake = create_fake_llm(FakeConfig(error_after=3))
    with app_with_model(tmp_path, minilm, fake) as base_url:
        client = openai.OpenAI(base_url=f"{base_url}/v1", api_key="none", max_retries=0)
        messages: list[openai.types.chat.ChatCompletionMessageParam] = [
            {"role": "user", "content": QUESTION}
        ]
        stream = client.chat.completions.create(model="stream-rag", messages=messages, stream=True)
        seen: list[openai.types.chat.ChatCompletionChunk] = []
        with pytest.raises(openai.APIError, match="the model") as raised:
            seen.extend(stream)
    # The chunks before the failure arrived (the first carries the sources); the error's body
    # is the extension's.
    assert (seen[0].model_extra or {})["stream_rag"]["sources"]
    assert isinstance(raised.value.body, dict)
    assert raised.value.body["code"] == "upstream_error"
