"""Words that mix look-alike scripts: "pricing" spelt with a Cyrillic i (U+0456) reads as the
Latin word but is another string. Names in one language never mix Latin with Cyrillic or
Greek letters inside a word, so such a word is what a spoof needs (UTS #39's mixed-script test,
per word). Used for document names (http/names.py) and by the gate (gate/normalise.py)."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["LOOK_ALIKE", "mixed_word", "scripts"]

_WORD = re.compile(r"[^\W\d_]+")
# Scripts whose letters pass for each other's (a Japanese word mixing kanji and kana is fine).
LOOK_ALIKE = frozenset({"LATIN", "CYRILLIC", "GREEK"})


def scripts(word: str) -> set[str]:
    """The scripts of a word's letters, by their Unicode names (LATIN, CYRILLIC, ...)."""
    return {unicodedata.name(ch, "UNKNOWN").split(" ")[0] for ch in word}


def mixed_word(text: str) -> str | None:
    """The first word of `text` whose letters come from more than one look-alike script."""
    words: list[str] = _WORD.findall(unicodedata.normalize("NFC", text))
    return next((w for w in words if not w.isascii() and len(scripts(w) & LOOK_ALIKE) > 1), None)
