"""The stage packages import only from stages below them (docs/decisions/, "Layers"), the
shared modules only from each other, and the services from neither the answer nor the HTTP
layer."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "stream_rag"
# Lowest first. The shared modules (SHARED) sit below them all; the services (embed, model,
# access) and the composition (services.py, cli/, loadtest/) are not ranked.
STAGES = ("ingest", "store", "index", "retrieve", "gate", "events", "answer", "http")
SHARED = (
    "text",
    "language",
    "types",
    "errors",
    "config",
    "config_checks",
    "sse",
    "request_context",
    "lifecycle",
    "prompt_format",
)


def _stage(module: str) -> str | None:
    top = module.split(".")[0]
    return top if top in STAGES else None


def _imports(path: Path) -> set[str]:
    """The stream_rag modules `path` imports (anywhere in it, TYPE_CHECKING blocks too)."""
    package = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1]
            found.add(".".join([*base, *([node.module] if node.module else [])]))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("stream_rag."):
            found.add(node.module or "")
    return {m.removeprefix("stream_rag.") for m in found if m.startswith("stream_rag")}


def test_stages_import_only_from_below() -> None:
    upward = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        source = _stage(name.removesuffix(".py").replace("/", "."))
        if source is None:
            continue
        for module in _imports(path):
            target = _stage(module)
            if target is not None and STAGES.index(target) > STAGES.index(source):
                upward.add((name, target))
    assert upward == set(), "an import from a higher stage (see docs/decisions/)"


def test_shared_modules_import_only_shared_ones() -> None:
    """The shared level sits below every stage and service: it imports only from itself."""
    found = set()
    for name in SHARED:
        module = PACKAGE / name
        for path in (
            sorted(module.rglob("*.py")) if module.is_dir() else [module.with_suffix(".py")]
        ):
            for imported in _imports(path):
                if imported.split(".")[0] not in SHARED:
                    found.add((path.relative_to(PACKAGE).as_posix(), imported))
    assert found == set()


def test_services_do_not_import_what_uses_them() -> None:
    """The chat models, embedders and access control serve the answer pipeline and the HTTP
    layer; they import neither (the prompt's layout is prompt_format.py, below both)."""
    found = set()
    for name in ("embed", "model", "access"):
        for path in sorted((PACKAGE / name).rglob("*.py")):
            for imported in _imports(path):
                if imported.split(".")[0] in ("events", "answer", "http"):
                    found.add((path.relative_to(PACKAGE).as_posix(), imported))
    assert found == set()
