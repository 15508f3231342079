"""Look-alike names: a document named "pricing.md" spelt with a Cyrillic i (U+0456) reads as
the real one in a listing or a citation. A word that mixes scripts (Latin with Cyrillic or
Greek letters) is what such a name needs and what names in one language never have, so its
display name gets a visible marker, or the upload is refused with
`STREAM_RAG_REFUSE_CONFUSABLE_NAMES` (UTS #39's mixed-script test, per word)."""

from __future__ import annotations

import re
import unicodedata

from ..errors import InvalidFieldError

MARKER = "⚠ mixed scripts: "
_WORD = re.compile(r"[^\W\d_]+")
# Scripts whose letters pass for each other's (a Japanese word mixing kanji and kana is fine).
_LOOK_ALIKE = frozenset({"LATIN", "CYRILLIC", "GREEK"})


def scripts(word: str) -> set[str]:
    """The scripts of a word's letters, by their Unicode names (LATIN, CYRILLIC, ...)."""
    return {unicodedata.name(ch, "UNKNOWN").split(" ")[0] for ch in word}


def mixed_word(name: str) -> str | None:
    """The first word of `name` whose letters come from more than one script."""
    words: list[str] = _WORD.findall(unicodedata.normalize("NFC", name))
    return next((word for word in words if len(scripts(word) & _LOOK_ALIKE) > 1), None)


def display_name(name: str, *, refuse: bool) -> str:
    """`name` as listings and citations show it: marked when a word mixes scripts (or
    refused, with `refuse`)."""
    word = mixed_word(name)
    if word is None or name.startswith(MARKER):
        return name
    if refuse:
        raise InvalidFieldError(
            f"the name {name!r} mixes scripts in {word!r} (letters that look alike from "
            "different alphabets); rename the file (STREAM_RAG_REFUSE_CONFUSABLE_NAMES)"
        )
    return MARKER + name
