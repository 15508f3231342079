"""Comparisons no cited block makes: a sentence with a comparative or a superlative ("earlier",
"faster", "more often") that none of its cited blocks writes, standing alone at the end of a
clause or before "than", claims an ordering they do not state ("Refunds arrive within 7 days
earlier."), however close its other words are. A comparative before the word it qualifies
("the younger sister", "a larger payment") or a verb ("later moved") is left to the overlap:
real answers write those of what their sources say in other words.

English closed classes and the inflection tables of lemminflect (a comparative or superlative
form of an adjective or adverb), never a knowledge base's words. A bound on a number ("more
than 30", "60 minutes or more", "at least") is the binding checks' (gate/binding.py).

An order turned round (`turned`): a word of order between the same words where the statement
the sentence restates writes its opposite ("7 days behind" of "7 days ahead", "after Ashgrove"
of "before Ashgrove"), unless the two sides trade places too ("B costs less than A" of "A
costs more than B", which also vouches for a comparative no block writes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from difflib import SequenceMatcher
from functools import lru_cache

from ..language.terms import NEGATION_CUE
from ..text import STOP_WORDS
from .reading import reading

__all__ = ["compared", "conversed", "orders", "turned"]

_WORD = re.compile(r"[^\W\d_]+")
_ALWAYS = frozenset("more less fewer most least".split())
# Forms lemminflect lists as comparatives that compare nothing in use ("further details",
# "the upper deck", "the latter") or are a word of their own.
_NOT_COMPARING = frozenset(
    "further farther rather other latter former upper inner outer utter elder eldest "
    "lesser never ever either whether over under after number stranger gamer tanner wanner "
    "slacker".split()
)
# Words of one sense: either vouches for the other.
_SAME = tuple(
    frozenset(group.split())
    for group in ("earlier sooner", "faster quicker", "more greater", "less fewer", "cheaper lower")
)
# Where a comparison stands alone: the clause ends after it (an adverb between, "more often"),
# or "than" follows it.
_ALONE = re.compile(r"(?:\s+(?P<adverb>often|[^\W\d_]+ly))?\s*(?:[.,;:!?)]|$)|\s+than\b")
# An inflected comparative before the word it qualifies compares as well when "than" follows
# ("holds older cars than ..."); "more"/"less" there may make another word's comparative ("less
# expensive than"), so they are left to the comparatives alone.
_QUALIFIED = re.compile(r"(?:\s+[^\W\d_]+){1,2}\s+than\b")
_BOUND_AFTER = re.compile(r"\s+than\s+(?:[$€£]?\d|one|two|three|four|five|ten|a |an )", re.I)
_BOUND_BEFORE = re.compile(r"(?:\d[^.;,!?]{0,24}\bor|\bat|\bat the|\bno)\s+$", re.I)
# "12 euros more a night", "12 more euros": an amount said to be over or under another, an
# ordering no block states; "more" is a stop word, so the overlap never sees it.
_AFTER_AMOUNT = re.compile(r"\d%?\s*(?:(?!(?:and|or|to|no)\b)[^\W\d_]+\s+)?$")
_AMOUNTED = frozenset({"more", "less", "fewer"})
# Axes of order, each two poles: a word of one pole in the place of the other's says the
# other order. English closed class.
_AXES = (
    (
        "before ahead prior earlier sooner beforehand advance earliest soonest",
        "after behind afterwards later latest",
    ),
    ("first", "last"),
    ("next", "previous preceding"),
    (
        "more greater higher larger bigger most highest largest biggest greatest",
        "less fewer lower smaller least lowest smallest fewest",
    ),
    ("longer longest", "shorter shortest"),
    ("older oldest elder eldest", "newer newest younger youngest"),
    ("faster fastest quicker quickest", "slower slowest"),
    ("heavier heaviest", "lighter lightest"),
    ("cheaper cheapest", "dearer dearest pricier priciest"),
    ("better best", "worse worst"),
    ("above over", "below under"),
)
_POLE = {
    w: (axis, pole)
    for axis, poles in enumerate(_AXES)
    for pole, ws in enumerate(poles)
    for w in ws.split()
}
_TOKEN = re.compile(r"[^\W_]+")
# Words of order in time and words of position or rank, each with its direction (0: earlier,
# ahead, above; 1: later, behind, below). One sense may say the other's order ("listed above"
# of "listed before", "ranked higher" of "ranked ahead"), so a word of one sense in the place
# of the other's is turned only when the directions differ ("sails below" of "sails before").
# English closed class.
_TIMED = {
    **dict.fromkeys("before ahead prior earlier sooner earliest soonest first previous".split(), 0),
    **dict.fromkeys("preceding older oldest".split(), 0),
    **dict.fromkeys("after behind later latest last next newer newest".split(), 1),
}
_PLACED = {
    **dict.fromkeys("above over higher highest".split(), 0),
    **dict.fromkeys("below under lower lowest".split(), 1),
}
# Words that say one order from its other side ("B costs less than A" of "A costs more than
# B"): one sense turned, not any two poles of an axis ("B is the fewest" or "B is lower" of "A
# costs more than B" compares another thing). English closed class.
_CONVERSES = frozenset(
    frozenset(pair.split())
    for pair in (
        "more less|more fewer|most least|most fewest|greater less|greater smaller"
        "|greatest least|greatest smallest|higher lower|highest lowest|larger smaller"
        "|largest smallest|bigger smaller|biggest smallest|before after|ahead behind"
        "|earlier later|sooner later|earliest latest|soonest latest|first last|next previous"
        "|next preceding|longer shorter|longest shortest|older newer|older younger"
        "|elder younger|oldest newest|oldest youngest|eldest youngest|faster slower"
        "|quicker slower|fastest slowest|quickest slowest|heavier lighter|heaviest lightest"
        "|cheaper dearer|cheaper pricier|cheapest dearest|cheapest priciest|better worse"
        "|best worst|above below|over under"
    ).split("|")
)


@lru_cache(maxsize=8192)
def _comparative(word: str) -> bool:
    """Whether `word` is a comparative or superlative form of an adjective or adverb."""
    if word in _ALWAYS:
        return True
    if word in _NOT_COMPARING or len(word) < 4 or not word.endswith(("er", "est")):
        return False
    import lemminflect

    for pos, lemmas in lemminflect.getAllLemmas(word).items():
        if pos not in ("ADJ", "ADV"):
            continue
        for lemma in lemmas:
            if lemma == word:
                continue
            for tag in ("JJR", "JJS", "RBR", "RBS"):
                if word in lemminflect.getInflection(lemma, tag=tag):
                    return True
    return False


def compared(sentence: str, evidence: Iterable[str]) -> str:
    """Why `sentence` compares where no text of `evidence` does ("" if it does not)."""
    folded = sentence.casefold()
    found = [m for m in _WORD.finditer(folded) if _comparative(m.group())]
    if not found:
        return ""
    evidence = list(evidence)
    used = frozenset().union(*(reading(text).folded_words for text in evidence))
    for match in found:
        word = match.group()
        alone = _ALONE.match(folded, match.end())
        if alone is None and word not in _ALWAYS:
            alone = _QUALIFIED.match(folded, match.end())
        amount = word in _AMOUNTED and _AFTER_AMOUNT.search(
            folded[max(0, match.start() - 40) : match.start()]
        )
        if alone is None and not amount:
            continue
        adverb = alone.groupdict().get("adverb") if alone is not None else None
        if adverb is not None:
            # "more often": the block's "or more" does not vouch for it, its phrase does
            if any(re.search(rf"\b{word}\s+{adverb}\b", text.casefold()) for text in evidence):
                continue
        elif word in used or any(word in group and group & used for group in _SAME):
            continue
        mine = _TOKEN.findall(folded)
        at = len(_TOKEN.findall(folded[: match.start()]))
        if _converse(mine, at, _restated(mine, evidence)):
            continue  # "B costs less than A" of "A costs more than B"
        if _BOUND_AFTER.match(folded, match.end()) or _BOUND_BEFORE.search(folded[: match.start()]):
            continue  # a bound on a number, held by the binding checks
        return f"says {word!r}, a comparison no cited block makes"
    return ""


def turned(sentence: str, evidence: Iterable[str]) -> str:
    """Why `sentence` writes a word of order where the statement of `evidence` it restates
    writes the opposite, between the same words ("" if it does not)."""
    mine = _TOKEN.findall(sentence.casefold())
    # A comparative of no axis ("deeper") orders two sides only before "than".
    if not any(w in _POLE for w in mine) and not ("than" in mine and any(map(_comparative, mine))):
        return ""
    theirs = _restated(mine, evidence)
    if (traded := _sides(mine, theirs, same=True)) is not None:
        return f"says {traded!r} of each side where the statement it restates says it the other way"
    matcher = SequenceMatcher(None, mine, theirs, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace" or i2 - i1 > 3 or j2 - j1 > 3:
            continue
        for i in range(i1, i2):
            axis, pole = _POLE.get(mine[i], (-1, -1))
            other = [j for j in range(j1, j2) if _POLE.get(theirs[j]) == (axis, 1 - pole)]
            if axis < 0 or not other or any(_POLE.get(w) == (axis, pole) for w in theirs[j1:j2]):
                continue
            if _converse(mine, i, theirs):
                continue
            return f"says {mine[i]!r} where the statement it restates says {theirs[other[0]]!r}"
        for i in range(i1, i2):
            crossed = [j for j in range(j1, j2) if _crossed(mine[i], theirs[j])]
            kept = any(_direction(w) == _direction(mine[i]) for w in theirs[j1:j2])
            if crossed and not kept and not _converse(mine, i, theirs):
                said = theirs[crossed[0]]
                return f"says {mine[i]!r} where the statement it restates says {said!r}"
    return ""


def _direction(word: str) -> int | None:
    return _TIMED.get(word, _PLACED.get(word))


def _crossed(a: str, b: str) -> bool:
    """Whether `a` and `b` are words of order of the two senses, time and place, that point
    the other way ("below" and "before")."""
    senses = (a in _TIMED) + (b in _TIMED), (a in _PLACED) + (b in _PLACED)
    return senses == (1, 1) and _direction(a) != _direction(b)


def _restated(mine: Sequence[str], texts: Iterable[str]) -> list[str]:
    """The tokens of the statement of `texts` sharing most words with `mine`."""
    words = set(mine)
    pieces = [piece for text in texts for piece in reading(text).worded()]
    best = max(pieces, key=lambda piece: len(words & piece[1]), default=("", frozenset()))
    return _TOKEN.findall(best[0])


def _converse(mine: Sequence[str], i: int, theirs: Sequence[str]) -> bool:
    """Whether `mine`, ordering by its word i, says what `theirs` says with the opposite word
    and the two sides traded: each side's own words are on the other side there."""
    axis, pole = _POLE.get(mine[i], (-1, -1))
    ls, rs = _content(mine[:i]), _content(mine[i + 1 :])
    for j, word in enumerate(theirs):
        turned_round = frozenset((mine[i], word)) in _CONVERSES
        opposed = axis >= 0 and _POLE.get(word) == (axis, 1 - pole) and turned_round
        if opposed or _crossed(mine[i], word):
            lt, rt = _content(theirs[:j]), _content(theirs[j + 1 :])
            if (ls - rs) & (rt - lt) and (rs - ls) & (lt - rt):
                return True
    return False


def _content(words: Sequence[str]) -> set[str]:
    return {w for w in words if w not in STOP_WORDS and w not in _POLE}


def orders(text: str) -> bool:
    """Whether `text` writes a word of order (one `conversed` may turn)."""
    return any(w in _POLE for w in _TOKEN.findall(text.casefold()))


def conversed(clause: str, statement: str) -> bool:
    """Whether `clause` says all `statement` says from its other side and nothing more: one
    word of order each, turned to its converse ("less" of "more", "behind" of "ahead"), the
    words before it in the clause (less those both sides share) the words after it in the
    statement and the other way round, the same words in all, no negation on either side
    ("The Standard room costs 30 euros less than the Deluxe room" of "The Deluxe room costs
    30 euros more than the Standard room")."""
    mine, theirs = _TOKEN.findall(clause.casefold()), _TOKEN.findall(statement.casefold())
    return _sides(mine, theirs, same=False) is not None


def _sides(mine: Sequence[str], theirs: Sequence[str], same: bool) -> str | None:
    """The word of order when `mine` and `theirs` each write one (the same word if `same`,
    else converses) with the same words in all and each side's own words on the other side
    there ("The south hall is larger than the north hall" of "The north hall is larger than
    the south hall"); else None."""
    at_mine = [i for i, w in enumerate(mine) if w in _POLE or (same and _comparative(w))]
    at_theirs = [j for j, w in enumerate(theirs) if w in _POLE or (same and _comparative(w))]
    if len(at_mine) != 1 or len(at_theirs) != 1:
        return None
    if any(NEGATION_CUE.search(" ".join(words)) for words in (mine, theirs)):
        return None  # "not" turns an order as a converse does
    i, j = at_mine[0], at_theirs[0]
    if (mine[i] == theirs[j]) != same:
        return None
    if not same and frozenset((mine[i], theirs[j])) not in _CONVERSES:
        return None
    ls, rs = _content(mine[:i]), _content(mine[i + 1 :])
    lt, rt = _content(theirs[:j]), _content(theirs[j + 1 :])
    if ls | rs != lt | rt:
        return None
    shared = (ls & lt) | (rs & rt)
    own = (ls - shared, rs - shared)
    return mine[i] if all(own) and own == (rt - shared, lt - shared) else None
