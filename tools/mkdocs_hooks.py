"""MkDocs hook: a nav entry `folder/*.md` stands for every page in that folder not listed
elsewhere in the nav, ordered by title, so a page added there needs no edit of mkdocs.yml."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

NavItem = str | dict[str, Any]


def page_title(path: Path) -> str:
    """The page's first `# ` heading, as MkDocs itself titles a page; else its file name."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem


def listed_pages(nav: list[NavItem]) -> set[str]:
    found: set[str] = set()
    for item in nav:
        values = list(item.values()) if isinstance(item, dict) else [item]
        for value in values:
            if isinstance(value, list):
                found |= listed_pages(value)
            elif isinstance(value, str) and "*" not in value:
                found.add(value)
    return found


def expand(nav: list[NavItem], docs_dir: Path, listed: set[str]) -> list[NavItem]:
    out: list[NavItem] = []
    for item in nav:
        if isinstance(item, str) and "*" in item:
            pages = [p for p in docs_dir.glob(item) if p.is_file()]
            rels = [p.relative_to(docs_dir).as_posix() for p in pages]
            new = [(page_title(p), rel) for p, rel in zip(pages, rels, strict=True)]
            fresh = sorted(
                (n for n in new if n[1] not in listed), key=lambda n: (sort_key(n[0]), n[1])
            )
            out.extend(rel for _, rel in fresh)
        elif isinstance(item, dict):
            out.append(
                {
                    k: expand(v, docs_dir, listed) if isinstance(v, list) else v
                    for k, v in item.items()
                }
            )
        else:
            out.append(item)
    return out


def on_config(config: Any) -> Any:
    nav = config["nav"]
    if nav:
        docs_dir = Path(config["docs_dir"])
        config["nav"] = expand(nav, docs_dir, listed_pages(nav))
    return config


def sort_key(title: str) -> str:
    """Titles sort without a leading article or code mark."""
    return re.sub(r"^(the|a|an)\s+|[`/]", "", title.lower())


# --- The code layout page, written at build time ---------------------------------------

# The data's path first (STYLE.md), then any other package, then the shared modules.
STAGE_ORDER = (
    "ingest",
    "store",
    "index",
    "embed",
    "retrieve",
    "answer",
    "gate",
    "language",
    "model",
    "access",
    "http",
    "cli",
    "loadtest",
)


def first_line(path: Path) -> str:
    """A module docstring's first paragraph on one line, safe inside a table cell."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return " ".join(doc.split("\n\n", 1)[0].split()).replace("|", "\\|")


def layout_page(root: Path) -> str:
    """Every module of `stream_rag/` and its docstring's first paragraph, built with the site
    so it never goes stale (nothing to commit when a module changes)."""
    package = root / "stream_rag"
    stages = sorted(
        (p for p in package.iterdir() if (p / "__init__.py").is_file()),
        key=lambda p: (STAGE_ORDER.index(p.name) if p.name in STAGE_ORDER else 99, p.name),
    )
    lines = [
        "# Code layout",
        "",
        "Every module of `stream_rag/` with the first sentence of its docstring, one section per "
        "stage in the order of the data's path ([the layers](../concepts/layout.md)).",
        "",
    ]
    for stage in stages:
        lines += [f"## `{stage.name}/`", "", first_line(stage / "__init__.py"), ""]
        lines += ["| module | what it is |", "|---|---|"]
        for module in sorted(stage.rglob("*.py")):
            if module.name == "__init__.py" and module.parent == stage:
                continue
            name = module.relative_to(stage).as_posix()
            lines.append(f"| `{name}` | {first_line(module)} |")
        lines.append("")
    lines += ["## Shared modules", "", "| module | what it is |", "|---|---|"]
    for module in sorted(package.glob("*.py")):
        if module.name != "__init__.py":
            lines.append(f"| `{module.name}` | {first_line(module)} |")
    return "\n".join(lines).rstrip() + "\n"


LAYOUT_PAGE = "reference/layout.md"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri == LAYOUT_PAGE:
        return layout_page(Path(config["docs_dir"]).parent)
    return markdown
