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
LOOK_ALIKE = frozenset({"LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC", "LISU"})


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
# Latin letters drawn as another Latin letter: small capitals ("ɴᴏᴛ" reads as NOT, and NFKC
# keeps them), a script g, an alpha, an iota, a dental click drawn as l.
_SMALL_CAPITALS = frozenset("ɢɪɴɶʀʁʏʙʛʜʟᴀᴁᴃᴄᴅᴆᴇᴊᴋᴌᴍᴎᴏᴐᴕᴘᴙᴚᴛᴜᴠᴡᴢᴣᵻᵾⱻꜰꜱꝶꞮꞯꟺꭆɑɡɩǀ")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
# A number whose digits come from more than one script ("3\u0660" is 30 to int(), "3." to the eye).
_NUMBER = re.compile(r"\d+")
# Digits with the Latin letters drawn like them ("1O" reads as 10, "l5" as 15).
_DIGIT_LOOKS = re.compile(r"(?<![^\W_])(?=[OolI]*\d)(?=\d*[OolI])[\dOolI]{2,}(?![^\W_])")


def disguised_word(text: str) -> str | None:
    """A word of a Latin text wholly in Cyrillic or Greek letters that pass for Latin ones
    ("NOT" in Greek capitals) or with a small capital ("ɴᴏᴛ"), digits mixed with letters drawn
    like digits ("1O" reads as 10) or with another script's digits: the reader sees another word."""
    if (digits := _DIGIT_LOOKS.search(text)) is not None:
        return digits.group()
    if text.isascii():
        return None
    numbers: list[str] = _NUMBER.findall(text)
    mixed = (n for n in numbers if not n.isascii() and len(scripts(n)) > 1)
    if (number := next(mixed, None)) is not None:
        return number
    if _LATIN_WORD.search(text) is None:
        return None
    words: list[str] = _WORD.findall(unicodedata.normalize("NFC", text))
    return next(
        (
            w
            for w in words
            if not w.isascii() and (set(w) <= _LATIN_LOOKS or not _SMALL_CAPITALS.isdisjoint(w))
        ),
        None,
    )
