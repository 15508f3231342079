"""Whether two words are listed as synonyms: WordNet 3.0's synsets (and an adjective with one
it is similar to), shipped as package data written by `python -m tools.thesaurus`.

A word in the place of the cited span's word stands for it only when it is the same word, an
inflection of it or a listed synonym; MiniLM's similarity of two words does not tell a synonym
("usual" for "typical") from a substitution ("work" for "school").
"""

from __future__ import annotations

import gzip
import threading
from functools import lru_cache
from importlib.resources import files

__all__ = ["groups", "lemmas", "synonymous", "warm_up"]


# Two threads asking at start would both read the table (0.4 s of CPU and its memory each).
_READING = threading.Lock()


def _groups() -> dict[str, tuple[int, ...]]:
    """Each word's groups, by line number of the table, read once."""
    with _READING:
        return _read()


@lru_cache(maxsize=1)
def _read() -> dict[str, tuple[int, ...]]:
    raw = files(__package__).joinpath("data", "thesaurus.txt.gz").read_bytes()
    found: dict[str, list[int]] = {}
    for n, line in enumerate(gzip.decompress(raw).decode().splitlines()):
        if line[:1] != "#":
            for word in line.split()[1:]:
                found.setdefault(word, []).append(n)
    return {word: tuple(ns) for word, ns in found.items()}  # a third less memory than lists


def warm_up() -> None:
    """Read the table (0.4 s of CPU, once) before the first sentence needs it."""
    _groups()


@lru_cache(maxsize=16384)
def lemmas(word: str) -> frozenset[str]:
    """`word` lowercased and its lemmas of every part of speech."""
    import lemminflect

    low = word.lower()
    out = {low}
    for lemmas in lemminflect.getAllLemmas(low).values():
        out.update(lemmas)
    return frozenset(out)


def synonymous(a: str, b: str) -> bool:
    """Whether `a` and `b` are one word, inflections of one, or listed in one synonym group."""
    left, right = lemmas(a), lemmas(b)
    if left & right or a.replace("-", "").lower() == b.replace("-", "").lower():
        return True  # one word, or one written with a hyphen ("e-mail", "email")
    groups = _groups()
    mine = {n for w in left for n in groups.get(w, ())}
    return any(n in mine for w in right for n in groups.get(w, ()))


@lru_cache(maxsize=16384)
def groups(word: str) -> frozenset[int]:
    """The synonym groups of `word` and of its lemmas."""
    table = _groups()
    return frozenset(n for w in lemmas(word) for n in table.get(w, ()))
