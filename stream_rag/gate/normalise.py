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
No character at all (a lone surrogate, which no UTF-8 stream can carry, a noncharacter, a
private-use code point a font draws as it likes) and marks drawn over a word (an overlay, an
enclosing mark, a mark no letter of the word composes with) refuse the unit too; the surrogate
is taken out of the refused text, so the refusal itself can still be written to the client.
U+FFFD is the exception where a cited block holds it at the same place: PDF extraction leaves
it for a glyph it could not map, and a quote of that block shows what the block shows.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from ..language.scripts import disguised_word, mixed_word
from .citations import extract

__all__ = ["BIDI_CONTROLS", "Normalised", "Readable", "normalise_unit", "readable"]

# Embeddings, overrides and isolates reorder what is displayed; their removal would show the
# reader something else than the model laid out, so such a unit is refused.
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# ZWJ and ZWNJ are spelling in the scripts that use them (Persian, Indic) and in emoji.
_JOINERS = frozenset("\u200c\u200d")
_KEPT_CONTROLS = frozenset("\n\t")
_LINK = re.compile(r"(?<!!)\[([^\[\]\n]*[^\W\d][^\[\]\n]*)\]\((?:[^()\s]|\([^()\s]*\))*\)")
# Unicode's default-ignorable code points (and C0/C1 controls): drawn as nothing.
_HIDDEN = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    r"\u200b-\u200f\u2060-\u206f\u3164\ufeff\uffa0\ufff0-\ufffb\U0001bca0-\U0001bca3"
    r"\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
# Variation selectors pick an emoji's or a symbol's glyph; after a letter or a digit they
# only hide the word from a matcher ("3\ufe000" reads as 30). A keycap ("1\ufe0f\u20e3") stays.
_SELECTOR = re.compile(r"(?<=[^\W_])[\ufe00-\ufe0f](?!\u20e3)")
# No character a reader can read: surrogates (unencodable), the replacement character that
# stands for one (`readable`), noncharacters, private use.
_NO_CHARACTER = re.compile(
    r"[\ufffd\ud800-\udfff\ufdd0-\ufdef\ue000-\uf8ff\U000f0000-\U0010ffff]"
    r"|[\ufffe\uffff\U0001fffe\U0001ffff\U0002fffe\U0002ffff\U0003fffe\U0003ffff"
    r"\U000efffe\U000effff]"
)


_SURROGATE = re.compile(r"[\ud800-\udfff]")
_REPLACEMENT = "\ufffd"


def readable(piece: str) -> str:
    """A model's `piece` that UTF-8 can carry: a surrogate pair joined into its character, a
    lone surrogate (JSON's "\\ud800" decodes to one) written as U+FFFD, which refuses its unit."""
    if _SURROGATE.search(piece) is None:
        return piece
    return piece.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class Readable:
    """`readable` over a model's stream, whose pieces are JSON strings of their own: a pair's
    high surrogate ending one piece waits for the low one opening the next."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        piece, self._held = self._held + piece, ""
        if "\ud800" <= piece[-1:] <= "\udbff":
            piece, self._held = piece[:-1], piece[-1]
        return readable(piece)

    def close(self) -> str:
        """What is held back at the stream's end (a lone high surrogate, as U+FFFD)."""
        held, self._held = self._held, ""
        return readable(held)


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


def normalise_unit(raw: str, blocks: Sequence[str] = ()) -> Normalised:
    """`raw` as the gate judges it and the client sees it, or why it is refused; `blocks[n - 1]`
    is block n's text, where a U+FFFD the unit holds must stand (`_replacements_placed`)."""
    replaced = False
    if raw.isascii():
        text = raw
    else:
        for bad in _NO_CHARACTER.finditer(raw):
            if bad.group() != _REPLACEMENT:
                kept = _strip_hidden(_NO_CHARACTER.sub("", raw))
                return Normalised(
                    kept, f"U+{ord(bad.group()):04X} is no character a reader can read"
                )
            replaced = True
        text = _SELECTOR.sub("", unicodedata.normalize("NFKC", raw))
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
    if not text.isascii() and (marked := _drawn_over(text)) is not None:
        return Normalised(text, f"{marked!r} has marks drawn over it")
    if (word := disguised_word(text)) is not None:
        return Normalised(text, f"{word!r} is drawn like another word (look-alike letters)")
    if "](" in text:
        text = _LINK.sub(r"\1", text)
    if "*" in text or "`" in text:
        text = _join_words(text)
    if replaced and not _replacements_placed(text, blocks):
        return Normalised(
            text, "U+FFFD is no character a reader can read (no cited block has it there)"
        )
    return Normalised(text)


def _replacements_placed(text: str, blocks: Sequence[str]) -> bool:
    """Whether each U+FFFD of `text` stands where a block it cites has one: the word holding it
    and the words either side, as written, are in that block's text."""
    plain, citations = extract(text)
    cited = [blocks[c.n - 1] for c in citations if 1 <= c.n <= len(blocks)]
    sources = [unicodedata.normalize("NFKC", block).split() for block in cited]
    words = plain.split()
    for i, word in enumerate(words):
        if _REPLACEMENT in word:
            around = words[max(0, i - 1) : i + 2]
            if not any(_holds(source, around) for source in sources):
                return False
    return True


def _holds(words: list[str], run: list[str]) -> bool:
    """Whether `run` stands in `words` as whole words, one after another (a word's end or
    start is no word: "5 \ufffd pe" is not in "5 \ufffd per")."""
    n = len(run)
    return any(words[k : k + n] == run for k in range(len(words) - n + 1))


# A combining mark left after NFKC on an ASCII letter or digit (no precomposed letter has it:
# "n\u0331ot" reads as "not", matched as "n" and "ot"), an overlay or enclosing mark anywhere
# ("n\u0336o\u0336t" strikes "not" through), or two marks left on one letter after NFKC.
_OVER_WORDS = ("LATIN", "GREEK", "CYRILLIC", "DIGIT")


def _mark(ch: str) -> bool:
    return unicodedata.combining(ch) > 0 or unicodedata.category(ch) == "Me"


def _drawn_over(text: str) -> str | None:
    """The word of `text` carrying such marks, if any."""
    # The first mark of the run `ch` is in, kept as the loop goes: a unit of thousands of
    # marks is read in one pass (walking back over the run for each mark took seconds).
    base = 0
    for i, ch in enumerate(text):
        if not _mark(ch):
            base = i + 1
            continue
        before = text[base - 1] if base else ""
        if before == "\ufe0f" and ch == "\u20e3" and text[base - 2 : base - 1].isdigit():
            continue  # a keycap: "1\ufe0f\u20e3"
        lettered = bool(before) and unicodedata.name(before, "").split(" ")[0] in _OVER_WORDS
        overlay = unicodedata.combining(ch) == 1 or unicodedata.category(ch) == "Me"
        if (before.isascii() and before.isalnum()) or (lettered and (overlay or i > base)):
            start, end = base, i + 1
            while start > 0 and not text[start - 1].isspace():
                start -= 1
            while end < len(text) and not text[end].isspace():
                end += 1
            return text[start:end]
    return None


# Emphasis or a code span inside a word ("n**o**t", "can`n`ot", "**n**ot"): a renderer joins
# the letters back into the word the reader sees, which a word-matcher read as three pieces.
_IN_WORD = re.compile(r"(?<=[^\W_])(\*{1,3}|`+)([^\s*`]+?)\1|(\*{1,3}|`+)([^\s*`]+?)\3(?=[^\W_])")


def _join_words(text: str) -> str:
    while True:
        joined = _IN_WORD.sub(lambda m: m.group(2) or m.group(4), text)
        if joined == text:
            return text
        text = joined
