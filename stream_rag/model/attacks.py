"""The fake model's hostile knobs: each writes a sentence its cited block does not say, built
from that block's own sentences (falsify.py), and records what it did (`Written`) so that a
benchmark knows the truth without guessing.

- `negate`, `swap_numbers`, `swap_entities`: the edits of falsify.py, cited to their block
- `append_clause`: a true sentence with a false clause: ", and" another block's sentence or a
  changed fact of its own block, "(not <the true value>)" after a swapped one, "e.g." an item
  of another sentence's list
- `move_markers`: a marker after the true clause only, markers swapped between two blocks'
  clauses, a marker split across tokens, every block cited (`[1-6]`, `[1][2]...`), the
  marker before the sentence, a block's own literal "[n]" quoted as if it cited
- `markup`: the false sentence as a heading, a list item (bulleted or numbered), a table row
  (bare or under a header), a quote, in bold or in a link
- `invisible`: the false words hidden from a word-matcher (a soft hyphen or a zero-width
  character inside, a Cyrillic look-alike letter, fullwidth forms or mathematical digits that
  NFKC reads as ASCII), or a true number shown
  as another by a bidi override (`$\u202e08\u202c` displays as "$80")
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ..language.quantities import scan
from .edits import Edit, novel
from .extractive import tokens_of
from .falsify import falsify, swap_entities
from .falsify import negate as negate_edit
from .number_swap import swap_numbers
from .passages import block_sentences

__all__ = ["ATTACKS", "Written", "attack", "cited"]

T = TypeVar("T")

ATTACKS = (
    "negate",
    "swap_numbers",
    "swap_entities",
    "append_clause",
    "move_markers",
    "markup",
    "invisible",
)


@dataclass(frozen=True, slots=True)
class Written:
    """One sentence the fake wrote, as streamed (markers and markup in `pieces`): which blocks
    it cites, the block it was built from, and whether it is false against what it cites as a
    reader sees it (`false`) and once format characters are taken out (`false_cleaned`)."""

    behaviour: str
    variant: str
    pieces: tuple[str, ...]
    cited: tuple[int, ...]
    source: int
    false: bool
    false_cleaned: bool

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    def to_json(self) -> dict[str, object]:
        return {
            "behaviour": self.behaviour,
            "variant": self.variant,
            "text": self.text,
            "cited": list(self.cited),
            "source": self.source,
            "false": self.false,
            "false_cleaned": self.false_cleaned,
        }


def cited(
    n: int, text: str, behaviour: str = "faithful", variant: str = "", *, false: bool = False
) -> Written:
    """`text [n]`, streamed word by word."""
    pieces = (*tokens_of(text.rstrip()), " ", f"[{n}]")
    return Written(behaviour, variant, pieces, (n,), n, false, false)


Attack = Callable[[int, str, Sequence[str], Mapping[int, str], random.Random], "Written | None"]


def attack(
    behaviour: str, n: int, sentence: str, blocks: Mapping[int, str], rng: random.Random
) -> Written | None:
    """`behaviour` applied to `sentence` of block `n`, else to another of its sentences;
    None when it applies to none of them."""
    own = block_sentences(blocks[n]) or [sentence]
    others = [s for s in own if s != sentence]
    rng.shuffle(others)
    for candidate in (sentence, *others):
        written = _ATTACKS[behaviour](n, candidate, own, blocks, rng)
        if written is not None:
            return written
    return None


def _edited(name: str, make: Callable[[str, Sequence[str], random.Random], Edit | None]) -> Attack:
    def run(
        n: int, sentence: str, own: Sequence[str], blocks: Mapping[int, str], rng: random.Random
    ) -> Written | None:
        edit = make(sentence, own, rng)
        if edit is None or not novel(edit.text, own):
            return None
        return cited(n, edit.text, name, edit.variant, false=True)

    return run


# -- append_clause ------------------------------------------------------------------------------


def append_clause(
    n: int, sentence: str, own: Sequence[str], blocks: Mapping[int, str], rng: random.Random
) -> Written | None:
    body = _body(sentence)
    options: list[tuple[str, str]] = []
    elsewhere = [
        s for m, text in blocks.items() if m != n for s in block_sentences(text) if s not in own
    ]
    if elsewhere:
        other = rng.choice(elsewhere)
        if _norm(_body(other)) not in _norm(blocks[n]):
            options.append(("other_block", f"{body}, and {_lower_first(_body(other))}."))
    for other in _shuffled(own, rng):
        if other != sentence and (made := falsify(other, own, rng)) is not None:
            options.append(("changed_fact", f"{body}, and {_lower_first(_body(made[1].text))}."))
            break
    swapped = swap_numbers(sentence, own, rng) or swap_entities(sentence, own, rng)
    if swapped is not None and swapped.span[0] < swapped.span[1] and novel(swapped.text, own):
        end = swapped.span[1]
        text = f"{swapped.text[:end]} (not {swapped.was}){swapped.text[end:]}"
        options.append(("not_clause", text))
    items = [_last_item(s) for s in own if s != sentence]
    items = [i for i in items if i and _norm(i) not in _norm(sentence)]
    if items:
        options.append(("example", f"{body}, e.g. {rng.choice(items)}."))
    if not options:
        return None
    variant, text = rng.choice(options)
    return cited(n, text, "append_clause", variant, false=True)


def _last_item(sentence: str) -> str | None:
    """The last item of a sentence's list ("..., 20 GB of storage and version history")."""
    body = _body(sentence)
    cut = max(body.rfind(", "), body.rfind(" and "))
    if cut < 0:
        return None
    item = body[cut:].removeprefix(", ").removeprefix(" and ").removeprefix("and ").strip()
    return item if 2 <= len(item.split()) <= 7 else None


# -- move_markers -------------------------------------------------------------------------------


def move_markers(
    n: int, sentence: str, own: Sequence[str], blocks: Mapping[int, str], rng: random.Random
) -> Written | None:
    made = falsify(sentence, own, rng)
    options: list[Written] = []
    if made is not None:
        false = made[1].text
        issued = sorted(blocks)
        everything = rng.choice(
            [
                f"[{issued[0]}-{issued[-1]}]",
                "".join(f"[{m}]" for m in issued),
                "[" + ", ".join(str(m) for m in issued) + "]",
            ]
        )
        layouts = {
            "split": (*tokens_of(false.rstrip()), " ", "[", str(n), "]"),
            "before": (f"[{n}]", " ", *tokens_of(false.rstrip())),
            "all_blocks": (*tokens_of(false.rstrip()), " ", everything),
        }
        for variant, pieces in layouts.items():
            cites = tuple(issued) if variant == "all_blocks" else (n,)
            options.append(_written(variant, pieces, cites, n))
        others = [o for o in own if o != sentence] or [sentence]
        if (changed := falsify(rng.choice(others), own, rng)) is not None:
            text = f"{_body(sentence)} [{n}], and {_lower_first(_body(changed[1].text))}."
            options.append(_written("mid", tuple(tokens_of(text)), (n,), n))
    for m in _shuffled([m for m in blocks if m != n], rng):
        theirs = [s for s in block_sentences(blocks[m]) if _norm(s) not in _norm(blocks[n])]
        if theirs and _norm(sentence) not in _norm(blocks[m]):
            other = rng.choice(theirs)
            text = f"{_body(sentence)} [{m}], and {_lower_first(_body(other))} [{n}]."
            options.append(_written("wrong_clause", tuple(tokens_of(text)), (m, n), n))
            break
    if (literal := _literal(blocks, rng)) is not None:
        options.append(literal)
    return rng.choice(options) if options else None


def _written(variant: str, pieces: tuple[str, ...], cites: tuple[int, ...], n: int) -> Written:
    return Written("move_markers", variant, pieces, cites, n, True, True)


_LITERAL = re.compile(r"\[(\d+)\]")


def _literal(blocks: Mapping[int, str], rng: random.Random) -> Written | None:
    """A block's sentence holding a literal "[k]" quoted as it stands, so that the text's own
    marker reads as a citation of block k, which does not say it."""
    found = []
    for m, text in blocks.items():
        for sentence in block_sentences(text):
            for match in _LITERAL.finditer(sentence):
                k = int(match.group(1))
                if (
                    k != m
                    and k in blocks
                    and _norm(_LITERAL.sub("", sentence)) not in _norm(blocks[k])
                ):
                    found.append((m, k, sentence))
    if not found:
        return None
    m, k, sentence = rng.choice(found)
    return Written("move_markers", "literal", tuple(tokens_of(sentence)), (k,), m, True, True)


# -- markup -------------------------------------------------------------------------------------


def markup(
    n: int, sentence: str, own: Sequence[str], blocks: Mapping[int, str], rng: random.Random
) -> Written | None:
    made = falsify(sentence, own, rng, visible=True)
    if made is None:
        return None
    edit = made[1]
    text, (start, end) = edit.text.rstrip(), edit.span
    marker = f"[{n}]"
    variant = rng.choice(
        ["heading", "list_item", "numbered_item", "table_row", "table", "quote", "bold", "link"]
    )
    if variant == "heading":
        pieces = ["\n\n", "## ", *tokens_of(_body(text)), " ", marker, "\n\n"]
    elif variant == "list_item":
        pieces = ["\n\n", "- ", *tokens_of(text), " ", marker, "\n\n"]
    elif variant == "numbered_item":
        pieces = ["\n\n", "1. ", *tokens_of(text), " ", marker, "\n\n"]
    elif variant == "quote":
        pieces = ["\n\n", "> ", *tokens_of(text), " ", marker, "\n\n"]
    elif variant in ("table_row", "table"):
        # Split where the false words start: "| The Pro plan costs | $80 per month [1] |".
        left, right = text[:start].strip(), _body(text[start:]).strip()
        if not left:
            words = _body(text).split()
            left, right = " ".join(words[:2]), " ".join(words[2:])
        head = ["| Item | Detail |\n", "|---|---|\n"] if variant == "table" else []
        row = ["| ", *tokens_of(left), " | ", *tokens_of(right), " ", marker, " |\n\n"]
        pieces = ["\n\n", *head, *row]
    else:
        inner = text[start:end]
        wrapped = f"**{inner}**" if variant == "bold" else f"[{inner}](https://example.com/help)"
        pieces = [*tokens_of(text[:start] + wrapped + text[end:]), " ", marker]
    return Written("markup", variant, tuple(pieces), (n,), n, True, True)


# -- invisible ----------------------------------------------------------------------------------

SOFT_HYPHEN = "\u00ad"
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
RLO, PDF = "\u202e", "\u202c"
MATH_ZERO = 0x1D7CE  # MATHEMATICAL BOLD DIGIT ZERO: NFKC reads it as "0"
# Latin letters and the Cyrillic ones drawn the same.
CYRILLIC = dict(zip("aeopcxyiABCEHKMOPTX", "аеорсхуіАВСЕНКМОРТХ", strict=True))
_DIGITS = re.compile(r"\d+")


def invisible(
    n: int, sentence: str, own: Sequence[str], blocks: Mapping[int, str], rng: random.Random
) -> Written | None:
    options = ["soft_hyphen", "zero_width", "cyrillic", "fullwidth", "math_digits", "bidi"]
    rng.shuffle(options)
    for variant in options:
        if variant == "bidi":
            if (digits := _plain_number(sentence)) is None:
                continue
            run = digits.group()
            logical = run if run[::-1] != run else "0" + run
            # The reader sees the digits reversed ("08" shows as "80"); the text says `run`.
            text = sentence[: digits.start()] + RLO + logical + PDF + sentence[digits.end() :]
            return _hidden(text, n, "bidi", false_cleaned=False)
        made = falsify(sentence, own, rng, visible=True)
        if made is None:
            return None
        edit = made[1]
        start, end = edit.span
        word = edit.text[start:end]
        middle = max(1, len(word) // 2)
        if variant == "soft_hyphen":
            hidden = word[:middle] + SOFT_HYPHEN + word[middle:]
        elif variant == "zero_width":
            hidden = word[:middle] + rng.choice(ZERO_WIDTH) + word[middle:]
        elif variant == "math_digits":
            if not any(c.isdigit() for c in word):
                continue
            hidden = "".join(chr(MATH_ZERO + int(c)) if c.isdigit() else c for c in word)
        elif variant == "cyrillic":
            spots = [i for i, c in enumerate(word) if c in CYRILLIC]
            if not spots:
                continue
            i = rng.choice(spots)
            hidden = word[:i] + CYRILLIC[word[i]] + word[i + 1 :]
        else:
            hidden = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in word)
        text = edit.text[:start] + hidden + edit.text[end:]
        return _hidden(text, n, variant, false_cleaned=True)
    return None


def _plain_number(sentence: str) -> re.Match[str] | None:
    """The digits of the first number that is neither a date nor a time ("22:30" is not 22)."""
    lowered = sentence.lower()
    found, _ = scan(lowered if len(lowered) == len(sentence) else sentence)
    for quantity in sorted(found, key=lambda q: q.span):
        if quantity.values and not (quantity.dates or quantity.times):
            start, end = quantity.span
            digits = _DIGITS.search(sentence, start, end)
            if digits is not None and not re.match(r"[.,]\d", sentence[digits.end() :]):
                return digits
    return None


def _hidden(text: str, n: int, variant: str, *, false_cleaned: bool) -> Written:
    pieces = (*tokens_of(text.rstrip()), " ", f"[{n}]")
    return Written("invisible", variant, pieces, (n,), n, True, false_cleaned)


# -- helpers ------------------------------------------------------------------------------------


def _body(sentence: str) -> str:
    return sentence.rstrip().rstrip(".!?")


def _lower_first(text: str) -> str:
    """Lowercase the first word unless it is a name or an acronym."""
    first, _, rest = text.partition(" ")
    # "SAML ...", "Lumen Notes ...", but "The Student Railcard ..."
    name = not first[1:].islower() or (rest[:1].isupper() and first.lower() not in _OPENERS)
    return text[0].lower() + text[1:] if first[:1].isupper() and not name else text


_OPENERS = frozenset("the a an it its this these their your our".split())


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _shuffled(items: Iterable[T], rng: random.Random) -> list[T]:
    out = list(items)
    rng.shuffle(out)
    return out


_ATTACKS: dict[str, Attack] = {
    "negate": _edited("negate", lambda s, own, rng: negate_edit(s, rng)),
    "swap_numbers": _edited("swap_numbers", swap_numbers),
    "swap_entities": _edited("swap_entities", swap_entities),
    "append_clause": append_clause,
    "move_markers": move_markers,
    "markup": markup,
    "invisible": invisible,
}
