"""The app loads what the claim checks read on first use (lemminflect's dictionaries, WordNet's
table: seconds of CPU) before it serves, not in the first answers' worker threads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# A fresh interpreter: in the test session another test has loaded them already.
SCRIPT = """
import sys
from pathlib import Path

import lemminflect
from starlette.testclient import TestClient

from stream_rag.config import Settings
from stream_rag.http.app import create_app

with TestClient(create_app(Settings(data_dir=Path(sys.argv[1])))):
    lemmas = hasattr(lemminflect.Lemmatizer(), "lemma_dict")
    inflections = hasattr(lemminflect.Inflections(), "infl_dict")
print(lemmas, inflections)
"""


def test_the_claim_checks_dictionaries_load_at_start_up(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["True", "True"], run.stderr[-2000:]
