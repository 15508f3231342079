"""The synonym table (language/thesaurus.py) and the tool that writes it from a WordNet
database (tools/thesaurus.py), on a database of a few synsets written here."""

from __future__ import annotations

import gzip
import threading
from pathlib import Path

import pytest

from stream_rag.language.thesaurus import synonymous
from tools import thesaurus


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("big", "large"),  # one synset
        ("sizeable", "large"),  # a satellite similar to its head
        ("clients", "customers"),  # inflections of one synset's words
        ("machine", "device"),  # a noun and its hypernym
        ("charity", "charitable"),  # a derivation
        ("e-mail", "email"),  # written with a hyphen
        ("typical", "Typical"),
    ],
)
def test_listed_words_stand_for_each_other(a: str, b: str) -> None:
    assert synonymous(a, b)
    assert synonymous(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("work", "school"),
        ("monthly", "annual"),
        ("next", "current"),
        ("system", "device"),  # two hyponyms of one hypernym
        ("large", "unlimited"),
        ("digital", "printed"),
    ],
)
def test_substitutes_are_not_synonyms(a: str, b: str) -> None:
    assert not synonymous(a, b)


def synset(offset: str, kind: str, words: list[str], pointers: list[str]) -> str:
    listed = " ".join(f"{w} 0" for w in words)
    return (
        f"{offset} 00 {kind} {len(words):02x} {listed} {len(pointers):03d} "
        f"{' '.join(pointers)} | a gloss\n"
    )


def test_the_tool_writes_each_kind_of_group(tmp_path: Path) -> None:
    db = tmp_path / "wordnet"
    db.mkdir()
    (db / "LICENSE").write_text("WordNet licence\n")
    (db / "data.noun").write_text(
        "  1 a licence line\n"
        + synset("00000001", "n", ["device"], [])
        + synset("00000002", "n", ["machine", "Apparatus"], ["@ 00000001 n 0000"])
        + synset("00000003", "n", ["charity"], ["+ 00000011 a 0101"])
    )
    (db / "data.adj").write_text(
        synset("00000010", "a", ["large", "big"], [])
        + synset("00000011", "a", ["charitable"], [])
        + synset("00000012", "s", ["sizeable"], ["& 00000010 a 0000"])
    )
    (db / "data.verb").write_text(synset("00000020", "v", ["begin", "start"], []))
    (db / "data.adv").write_text("")
    lines = thesaurus.groups(db)
    assert lines == sorted(
        [
            "a large big",
            "v begin start",
            "h machine device",  # the name "Apparatus" left out
            "s sizeable large big",
            "d charitable charity",
        ]
    )
    out = tmp_path / "out"
    assert thesaurus.main([str(db), "--out", str(out)]) == 0
    first = (out / "thesaurus.txt.gz").read_bytes()
    text = gzip.decompress(first).decode()
    assert [line for line in text.splitlines() if not line.startswith("#")] == lines
    assert (out / "WORDNET_LICENSE").read_text() == "WordNet licence\n"
    assert thesaurus.main([str(db), "--out", str(out)]) == 0
    assert (out / "thesaurus.txt.gz").read_bytes() == first  # the same bytes each time


def test_the_table_is_read_once_by_threads_asking_together() -> None:
    """Threads that need the table at start wait for one reading of it (each read its own)."""
    from stream_rag.language import thesaurus as table

    table._read.cache_clear()
    start = threading.Barrier(4)
    seen: list[int] = []

    def ask() -> None:
        start.wait()
        seen.append(id(table._groups()))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 4
    assert len(set(seen)) == 1
    assert table._read.cache_info().misses == 1
