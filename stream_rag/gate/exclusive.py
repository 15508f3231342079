"""An "only" dropped or moved: a sentence that leaves out the "only" of the statement it restates
("Members can book lanes online." of "Only members can book ...") or puts it on another word
("Members can only book ...") says more, or another thing, than the statement. English closed
class: "only", "solely", "exclusively"; an opening "Only" qualifies the subject, another "only"
any word after it or the one before it when that one is no auxiliary ("members only").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
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


def _attached(tokens: list[str]) -> list[set[str]]:
    """For each "only" in `tokens`, the content words it may qualify: the subject after an
    opening "Only"; elsewhere any word after it ("is only open to adults") or the one before
    it ("adults only", "available only for")."""
    out = []
    for i, token in enumerate(tokens):
        if token not in _ONLY or (i and tokens[i - 1] in ("not", "if")):
            continue  # "not only X but also Y" affirms both
        after = [_key(t) for t in tokens[i + 1 :] if t not in _FUNCTION]
        words = set(after[:1] if i == 0 else after)
        if i and tokens[i - 1] not in _FUNCTION:
            words.add(_key(tokens[i - 1]))
        out.append(words)
    return out


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
    theirs = _attached(_TOKEN.findall(best))
    if not theirs:
        return ""
    quoted = repr(best[:60])
    if not set(tokens) & _ALIKE and not _NEEDED.search(sentence.lower()):
        return f"drops the 'only' of {quoted}"
    said = set().union(*theirs)
    for words in _attached(tokens):
        if words and not words & said:
            # A statement whose "only" qualifies no word read ("... to this only") vouches for
            # none it is put on.
            where = repr(min(said)) if said else "no word of its own"
            return f"puts 'only' on {min(words)!r}; {quoted} puts it on {where}"
    return ""


@lru_cache(maxsize=256)
def _statements(block: Reading) -> tuple[tuple[str, frozenset[str]], ...]:
    """The statements of `block` that have text, each with its tokens."""
    return tuple((s, frozenset(_TOKEN.findall(s))) for s in block.statements if s)
