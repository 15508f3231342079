"""An "only" dropped or moved: a sentence that leaves out the "only" of the statement it restates
("Members can book lanes online." of "Only members can book ...") or puts it on another word
("Members can only book ...") says more, or another thing, than the statement. English closed
class: "only", "solely", "exclusively"; an opening "Only" qualifies the subject, another "only"
any word after it or the one before it when that one is no auxiliary ("members only").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from .reading import Reading, reading

__all__ = ["exclusive"]

_ONLY = frozenset({"only", "solely", "exclusively"})
# What a restatement may write for "only" without the word itself.
_ALIKE = _ONLY | {"just", "alone", "except", "but", "unless", "nobody", "none", "no"}
_TOKEN = re.compile(r"[a-z0-9][a-z0-9'’-]*")
_FUNCTION = frozenset(
    "a an the this that these those your our their its his her my it they we you he she i "
    "is are was were be been being am do does did can could may might must shall should will "
    "would has have had to of for in on at by from with within into as and or not if when "
    "after before than then there here".split()
)


_NUMERALS = {
    w: n for n, w in enumerate("one two three four five six seven eight nine ten".split(), 1)
}
# "can only be shorn every three years" is said by "have to be shorn every three years".
_NEEDED = re.compile(r"\b(?:must|ha(?:s|ve|d) to|needs? to|required)\b")


def _key(token: str) -> str:
    """`token` as it is compared: a number in words as digits, a plural as its singular."""
    if token in _NUMERALS:
        return str(_NUMERALS[token])
    return token[:-1] if token.endswith("s") and len(token) > 3 else token


_BOTH = ("not", "if")  # "not only X but also Y" affirms both


def _places(tokens: Sequence[str]) -> list[int]:
    """Where `tokens` write an "only" that qualifies a word."""
    return [i for i, t in enumerate(tokens) if t in _ONLY and not (i and tokens[i - 1] in _BOTH)]


def _keys(tokens: Sequence[str]) -> list[str | None]:
    """Each token's key, None for a function word."""
    return [None if t in _FUNCTION else _key(t) for t in tokens]


# What an "only" may qualify: the subject after an opening "Only"; elsewhere any word after it
# ("is only open to adults") or the one before it when that one is no function word ("adults
# only", "available only for"). Read from each token list's end once: the words after each
# "only" taken one by one were quadratic in a run of them (a sentence of 8k "only" took 5 s).


def _said(tokens: Sequence[str]) -> set[str] | None:
    """Every word an "only" of `tokens` may qualify, or None if `tokens` write no "only"."""
    places = _places(tokens)
    if not places:
        return None
    keys = _keys(tokens)
    out = {keys[i - 1] for i in places if i}
    if places[0] == 0:
        out.add(next((k for k in keys[1:] if k is not None), None))
    later = [i for i in places if i]
    if later:
        out.update(keys[later[0] + 1 :])  # the words after each later "only" are among these
    return {k for k in out if k is not None}


def _moved(tokens: Sequence[str], said: set[str]) -> str | None:
    """The least word of the first "only" of `tokens` that qualifies words, none of `said`."""
    places = _places(tokens)
    if not places:
        return None
    keys = _keys(tokens)
    # From each place on: the first word, whether a word of `said` is among them, the least.
    first: list[str | None] = [None] * (len(keys) + 1)
    hit = [False] * (len(keys) + 1)
    least: list[str | None] = [None] * (len(keys) + 1)
    for k in range(len(keys) - 1, -1, -1):
        key = keys[k]
        first[k] = key if key is not None else first[k + 1]
        hit[k] = hit[k + 1] or (key is not None and key in said)
        low = least[k + 1]
        least[k] = key if key is not None and (low is None or key < low) else low
    for i in places:
        before = keys[i - 1] if i else None
        after = least[i + 1] if i else first[1]
        taken = (hit[i + 1] if i else first[1] in said) or before in said
        words = [w for w in (before, after) if w is not None]
        if words and not taken:
            return min(words)
    return None


def exclusive(sentence: str, evidence: Iterable[str]) -> str:
    """Why `sentence` drops or moves an "only" of the statement of its cited `evidence` it
    restates ("" if it does not)."""
    blocks = [reading(text) for text in evidence]
    if not any(only in block.flat for block in blocks for only in _ONLY):
        return ""
    tokens = _TOKEN.findall(sentence.lower())
    mine = set(tokens) - _FUNCTION
    statements = [pair for block in blocks for pair in _statements(block)]
    best = max(statements, key=lambda pair: len(mine & pair[1]), default=("", frozenset()))[0]
    said = _said(_TOKEN.findall(best))
    if said is None:
        return ""
    quoted = repr(best[:60])
    if not set(tokens) & _ALIKE and not _NEEDED.search(sentence.lower()):
        return f"drops the 'only' of {quoted}"
    moved = _moved(tokens, said)
    if moved is not None:
        # A statement whose "only" qualifies no word read ("... to this only") vouches for
        # none it is put on.
        where = repr(min(said)) if said else "no word of its own"
        return f"puts 'only' on {moved!r}; {quoted} puts it on {where}"
    return ""


@lru_cache(maxsize=256)
def _statements(block: Reading) -> tuple[tuple[str, frozenset[str]], ...]:
    """The statements of `block` that have text, each with its tokens."""
    return tuple((s, frozenset(_TOKEN.findall(s))) for s in block.statements if s)
