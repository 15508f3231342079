"""Look-alike names: a document named "pricing.md" spelt with a Cyrillic i (U+0456) reads as
the real one in a listing or a citation. A word that mixes scripts (Latin with Cyrillic or
Greek letters) is what such a name needs and what names in one language never have, so its
display name gets a visible marker, or the upload is refused with
`STREAM_RAG_REFUSE_CONFUSABLE_NAMES` (UTS #39's mixed-script test, per word)."""

from __future__ import annotations

from ..errors import InvalidFieldError
from ..language.scripts import mixed_word, scripts

__all__ = ["MARKER", "display_name", "mixed_word", "scripts"]

MARKER = "⚠ mixed scripts: "


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
