"""What the code may take from its dependencies: their public names only, within bounds that
the lock (constraints.txt) satisfies. sse-starlette 3.7 removed two private functions the
server imported and the suite went red on the day it was installed; these tests fail on that
kind of import before any release does."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
FIRST_PARTY = {"stream_rag", "tests", "loadtests", "tools"}
SOURCES = sorted(p for folder in FIRST_PARTY for p in (ROOT / folder).rglob("*.py"))


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def private_imports(source: str) -> list[str]:
    """Each import of a third-party module path or name that starts with an underscore."""
    found = []
    for node in ast.walk(ast.parse(source)):
        modules: list[tuple[str, str | None]]
        if isinstance(node, ast.Import):
            modules = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [(node.module, alias.name) for alias in node.names]
        else:
            continue
        for module, name in modules:
            top = module.split(".")[0]
            if top in FIRST_PARTY or top in sys.stdlib_module_names:
                continue
            parts = module.split(".") + ([name] if name else [])
            if any(_private(part) for part in parts):
                found.append(f"{module}{'.' + name if name else ''} (line {node.lineno})")
    return found


def test_the_checker_finds_what_broke_the_suite() -> None:
    assert private_imports(
        "from sse_starlette.sse import _ensure_watcher_started_on_this_loop\n"
        "import openai._constants\n"
        "from uvicorn._types import Scope\n"
        "from stream_rag.gate.signals import _content\n"
        "from os import _exit\n"
        "from starlette.types import Scope\n"
    ) == [
        "sse_starlette.sse._ensure_watcher_started_on_this_loop (line 1)",
        "openai._constants (line 2)",
        "uvicorn._types.Scope (line 3)",
    ]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_import_from_a_dependency(path: Path) -> None:
    assert private_imports(path.read_text(encoding="utf-8")) == []


def private_names_taken(source: str) -> list[str]:
    """Each private name imported from a module of ours (absolute or relative)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        module = "." * node.level + (node.module or "")
        if node.level == 0 and module.split(".")[0] not in FIRST_PARTY:
            continue
        found += [f"{module}.{a.name} (line {node.lineno})" for a in node.names if _private(a.name)]
    return found


def test_the_checker_finds_a_private_name_of_ours() -> None:
    assert private_names_taken(
        "from stream_rag.gate.signals import _content, features\n"
        "from .support import _referring\n"
        "from os import _exit\n"
        "from stream_rag.gate import signals\n"
    ) == ["stream_rag.gate.signals._content (line 1)", ".support._referring (line 2)"]


# Tests may read a module's private parts; the package, benchmarks and tools share only what a
# module makes public, so a private name can change without breaking another module.
@pytest.mark.parametrize(
    "path",
    [p for p in SOURCES if p.relative_to(ROOT).parts[0] != "tests"],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_no_private_name_of_another_module_of_ours(path: Path) -> None:
    assert private_names_taken(path.read_text(encoding="utf-8")) == []


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    listed = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        listed += extra
    return [Requirement(line) for line in listed]


def _locked() -> dict[str, Version]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[_normal(name)] = Version(version.strip())
    return pins


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_dependency_has_a_lower_and_an_upper_bound() -> None:
    for requirement in _requirements():
        operators = {spec.operator for spec in requirement.specifier}
        assert ">=" in operators, f"{requirement} has no lower bound"
        assert "<" in operators or "<=" in operators, f"{requirement} has no upper bound"


def test_the_lock_pins_every_dependency_within_its_bounds() -> None:
    pins = _locked()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    # The load extra (locust, matplotlib) is for benchmarks, not locked with the rest.
    unlocked = {_normal(Requirement(r).name) for r in project["optional-dependencies"]["load"]}
    for requirement in _requirements():
        name = _normal(requirement.name)
        if name in unlocked:
            continue
        assert name in pins, f"constraints.txt does not pin {requirement.name}"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"constraints.txt pins {name}=={pins[name]}, outside {requirement.specifier}"
        )
