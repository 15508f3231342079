"""Words that mix look-alike scripts: "pricing" spelt with a Cyrillic i (U+0456) reads as the
Latin word but is another string. Names in one language never mix Latin with Cyrillic or
Greek letters inside a word, so such a word is what a spoof needs (UTS #39's mixed-script test,
per word). Used for document names (http/names.py) and by the gate (gate/normalise.py)."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["LOOK_ALIKE", "disguised_word", "mixed_word", "scripts"]

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


# Cyrillic and Greek letters drawn as a Latin letter (UTS #39's confusables, the common ones).
_LATIN_LOOKS = frozenset(
    "аеорсухіѕјһԁԛԝАВЕНІЈКМОРЅТХҮԌ"  # Cyrillic
    "αοριυνκχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ"  # Greek
)
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
# Digits with the Latin letters drawn like them ("1O" reads as 10, "l5" as 15).
_DIGIT_LOOKS = re.compile(r"(?<![^\W_])(?=[OolI]*\d)(?=\d*[OolI])[\dOolI]{2,}(?![^\W_])")


def disguised_word(text: str) -> str | None:
    """A word of a Latin text written wholly in Cyrillic or Greek letters that pass for Latin
    ones ("NOT" spelt in Greek capitals), or digits mixed with letters drawn like
    digits ("1O" reads as 10): no word mixes scripts, yet the reader sees another word."""
    if (digits := _DIGIT_LOOKS.search(text)) is not None:
        return digits.group()
    if text.isascii() or _LATIN_WORD.search(text) is None:
        return None
    words: list[str] = _WORD.findall(unicodedata.normalize("NFC", text))
    return next((w for w in words if not w.isascii() and set(w) <= _LATIN_LOOKS), None)
