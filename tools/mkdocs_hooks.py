"""MkDocs hook: a nav entry `folder/*.md` stands for every page in that folder not listed
elsewhere in the nav, ordered by title, so a page added there needs no edit of mkdocs.yml."""

from __future__ import annotations

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
