"""One string, judged and shown: a unit the model wrote is normalised before the gate reads it,
and the client receives exactly the normalised string the gate judged (issue 27).

NFKC (fullwidth letters, mathematical digits and ligatures read as what they show); control
and format characters (soft hyphen, zero-width space, word joiner, BOM, tag characters, bidi
marks) taken out, since a reader does not see them but a word-matcher does ("n\u00adot" is
not "not" to a matcher; it is "not" on screen); markdown links written as their text (the
model's URL is no part of any source); emphasis stays (the widget renders it, the gate reads
through it). Refused outright, because taking the character out would change what the reader
was meant to see: bidi embeddings, overrides and isolates (`$\u202e08\u202c` shows as "$80"),
a word mixing look-alike scripts (Latin "not" spelt with a Cyrillic "\u043e"), a word wholly
in look-alike letters of another script or digits mixed with letters drawn like them ("1O").
Emphasis or a code span inside a word is taken out ("n**o**t" is shown and judged as "not").
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ..language.scripts import disguised_word, mixed_word

__all__ = ["BIDI_CONTROLS", "Normalised", "normalise_unit"]

# Embeddings, overrides and isolates reorder what is displayed; their removal would show the
# reader something else than the model laid out, so such a unit is refused.
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# ZWJ and ZWNJ are spelling in the scripts that use them (Persian, Indic) and in emoji.
_JOINERS = frozenset("\u200c\u200d")
_KEPT_CONTROLS = frozenset("\n\t")
_LINK = re.compile(r"(?<!!)\[([^\[\]\n]*[^\W\d][^\[\]\n]*)\]\((?:[^()\s]|\([^()\s]*\))*\)")
_HIDDEN = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2060-\u206f\ufeff\ufff9-\ufffb]"
    r"|[\U000e0000-\U000e007f]"
)


@dataclass(frozen=True, slots=True)
class Normalised:
    """The unit as judged and shown; `refused` says why it may not be shown at all."""

    text: str
    refused: str | None = None


def _joins_letters(text: str, i: int) -> bool:
    """Whether the joiner at `i` sits between two characters of a script that uses it (not
    Latin, Greek or Cyrillic letters, where it only hides a word from a matcher)."""
    before, after = text[i - 1 : i], text[i + 1 : i + 2]
    if not before or not after:
        return False
    for ch in (before, after):
        if ch.isascii() or unicodedata.name(ch, "").split(" ")[0] in ("LATIN", "GREEK", "CYRILLIC"):
            return False
    return True


def _strip_hidden(text: str) -> str:
    if _HIDDEN.search(text) is None:
        return text
    out = []
    for i, ch in enumerate(text):
        hidden = ch not in _KEPT_CONTROLS and _HIDDEN.fullmatch(ch) is not None
        if not hidden or (ch in _JOINERS and _joins_letters(text, i)):
            out.append(ch)
    return "".join(out)


def normalise_unit(raw: str) -> Normalised:
    """`raw` as the gate judges it and the client sees it, or why it is refused."""
    text = raw if raw.isascii() else unicodedata.normalize("NFKC", raw)
    if not text.isascii():
        bidi = next((ch for ch in text if ch in BIDI_CONTROLS), None)
        if bidi is not None:
            return Normalised(
                _strip_hidden(text),
                f"bidi control U+{ord(bidi):04X} reorders what the reader sees",
            )
    text = _strip_hidden(text)
    if not text.isascii() and (word := mixed_word(text)) is not None:
        return Normalised(text, f"the word {word!r} mixes look-alike scripts")
    if (word := disguised_word(text)) is not None:
        return Normalised(text, f"{word!r} is drawn like another word (look-alike letters)")
    if "](" in text:
        text = _LINK.sub(r"\1", text)
    if "*" in text or "`" in text:
        text = _join_words(text)
    return Normalised(text)


# Emphasis or a code span inside a word ("n**o**t", "can`n`ot", "**n**ot"): a renderer joins
# the letters back into the word the reader sees, which a word-matcher read as three pieces.
_IN_WORD = re.compile(r"(?<=[^\W_])(\*{1,3}|`+)([^\s*`]+?)\1|(\*{1,3}|`+)([^\s*`]+?)\3(?=[^\W_])")


def _join_words(text: str) -> str:
    while True:
        joined = _IN_WORD.sub(lambda m: m.group(2) or m.group(4), text)
        if joined == text:
            return text
        text = joined
