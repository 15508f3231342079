"""`stream-rag ask` says which part of a question no source covers, as the widget does under
the answer (`done`'s and `/v1/answer`'s `uncovered`): it printed the covered part alone, and
the reader took the silence for "no gym". Through a running server, streamed and not."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_rag.cli.commands import main
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app

from .helpers import running_server
from .test_chat_http import upload
from .test_entry_evidence import FAQ, RULES

GAP = "The sources do not cover: is there a gym?"


@pytest.mark.parametrize("flags", [[], ["--no-stream"]])
def test_ask_names_the_part_no_source_covers(
    tmp_path: Path,
    minilm: MiniLMEmbedder,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
) -> None:
    unused = ["--data-dir", str(tmp_path / "unused")]
    with running_server(create_app(Settings(data_dir=tmp_path / "data"), embedder=minilm)) as url:
        upload(url, "faq.md", FAQ)
        upload(url, "house-rules.txt", RULES)
        capsys.readouterr()
        argv = [*unused, "ask", "When are you open and is there a gym?", "--url", url, *flags]
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "7:00 to 22:00" in out
        assert GAP in out
        # Before the sources, with the answer it qualifies.
        assert out.index(GAP) < out.index("Sources:")

        argv = [*unused, "ask", "When are you open and can I bring my dog?", "--url", url]
        assert main([*argv, *flags]) == 0
        assert "do not cover" not in capsys.readouterr().out
