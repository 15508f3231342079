"""The generated reference pages (docs/reference/) match the code, and the docs' nav hook
lists every page of a folder, so a page added there never breaks `mkdocs build --strict`."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from stream_rag.cli.commands import build_parser
from stream_rag.config import Settings
from stream_rag.http.openapi import document
from tools.mkdocs_hooks import NavItem, expand, layout_page, listed_pages
from tools.reference import (
    cli_page,
    help_text,
    http_page,
    settings_page,
    stale_pages,
    subcommands,
)


def test_the_committed_reference_pages_are_current() -> None:
    assert stale_pages() == [], "run `python -m tools.reference` and commit docs/reference/"


def test_every_setting_is_on_the_settings_page() -> None:
    page = settings_page()
    missing = [f.name for f in fields(Settings) if f"`STREAM_RAG_{f.name.upper()}`" not in page]
    assert missing == []


def test_every_route_is_on_the_http_page() -> None:
    page = http_page()
    for path, item in document()["paths"].items():
        for method in item:
            assert f"### `{method.upper()} {path}`" in page


def test_every_command_and_subcommand_has_its_help() -> None:
    parser = build_parser()
    page = cli_page()
    top = subcommands(help_text(parser, []))
    assert {"serve", "ingest", "keys", "eval"} <= set(top)
    for name in top:
        assert f"`stream-rag {name}`" in page
    assert set(subcommands(help_text(parser, ["keys"]))) == {"create", "list", "revoke"}
    assert "### `stream-rag keys create`" in page
    assert subcommands(help_text(parser, ["serve"])) == []


def test_a_glob_in_the_nav_lists_the_folder_pages_not_named_elsewhere(tmp_path: Path) -> None:
    guides = tmp_path / "guides"
    guides.mkdir()
    (guides / "model.md").write_text("# Plug in a model\n")
    (guides / "zeta.md").write_text("# The alpha guide\n")
    (guides / "beta.md").write_text("intro without a heading\n")
    nav: list[NavItem] = [{"Home": "index.md"}, {"Guides": ["guides/model.md", "guides/*.md"]}]
    expanded = expand(nav, tmp_path, listed_pages(nav))
    # Ordered by title (an article skipped), the page without a heading by its file name.
    assert expanded == [
        {"Home": "index.md"},
        {"Guides": ["guides/model.md", "guides/zeta.md", "guides/beta.md"]},
    ]


def test_the_layout_page_lists_every_module() -> None:
    root = Path(__file__).resolve().parent.parent
    page = layout_page(root)
    for module in (root / "stream_rag").rglob("*.py"):
        if module.name == "__init__.py":
            continue
        assert f"| `{module.name}` |" in page or f"/{module.name}` |" in page, module
