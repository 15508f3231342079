"""The user documentation (docs/, less the decision records, which are history) names only
settings that exist and benchmark scripts that exist, so a renamed setting or a deleted script
shows here rather than in a reader's failed command."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

from stream_rag.config import ENV_PREFIX, Settings

ROOT = Path(__file__).resolve().parent.parent
# Read by the command line's --url clients and the Locust users, not by the server.
# Read by the CLI client (API_KEY) and by the test suite (tests/postgres.py), not settings.
CLIENT_VARIABLES = {f"{ENV_PREFIX}API_KEY", f"{ENV_PREFIX}TEST_POSTGRES_URL"}


def user_pages() -> list[Path]:
    pages = [p for p in (ROOT / "docs").rglob("*.md") if "decisions" not in p.parts]
    return [*pages, ROOT / "README.md"]


def test_every_variable_the_docs_name_is_a_setting() -> None:
    settings = {f"{ENV_PREFIX}{f.name.upper()}" for f in fields(Settings)} | CLIENT_VARIABLES
    unknown = set()
    for page in user_pages():
        # `STREAM_RAG_EXTRACT_*` stands for a family of settings.
        for name, wildcard in re.findall(
            rf"({ENV_PREFIX}[A-Z0-9_]*[A-Z0-9])(_\*)?", page.read_text()
        ):
            known = (
                any(s.startswith(name + "_") for s in settings) if wildcard else name in settings
            )
            if not known:
                unknown.add(f"{page.relative_to(ROOT)}: {name}{wildcard}")
    assert unknown == set()


def test_every_loadtests_script_the_docs_name_exists() -> None:
    missing = set()
    for page in user_pages():
        text = page.read_text()
        named = re.findall(r"loadtests[./]([a-z_]+)(?:\.py)?\b", text)
        for module in named:
            if not (ROOT / "loadtests" / f"{module}.py").is_file() and module != "answers":
                missing.add(f"{page.relative_to(ROOT)}: loadtests/{module}")
    assert missing == set()


def test_the_readmes_links_into_the_repository_resolve() -> None:
    readme = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(((?!https?:)[^)#]+)(?:#[^)]*)?\)", readme)
    assert targets, "the README links into docs/"
    assert [t for t in targets if not (ROOT / t).exists()] == []
