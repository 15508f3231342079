"""The red team's subject swap: the subject of one sentence of a block put at the head of
another sentence of the same block ("Visitors park for free" where residents do and visitors
pay), a common noun, so no name rule sees it; control: the sentence with its subject's
article changed ("The members" for "Members"), which says the same.
"""

from __future__ import annotations

import re

from ..language.wordclass import noun_not_verb_or_adjective
from .redteam import Option, Scene

__all__ = ["subject_swap"]

_HEAD = re.compile(r"^((?:(?:The|A|An|All|Each|Every|Our|Your)\s+)?)([A-Za-z][a-z]+)(?=\s)")


_PRONOUNS = frozenset("it its they them this that these those he she we you i one".split())


def _subject(sentence: str, block: str) -> tuple[str, str] | None:
    """The determiner and the common noun a sentence opens with ("The ", "warehouse"); not a
    pronoun (which a swap would only name) nor a name (capitalised mid-sentence in the block,
    or after the determiner)."""
    match = _HEAD.match(sentence)
    if match is None:
        return None
    article, noun = match.group(1), match.group(2)
    if (
        noun.lower() in _PRONOUNS
        or not noun_not_verb_or_adjective(noun.lower())
        or (article and noun[0].isupper())
    ):
        return None
    if re.search(rf"(?<=[a-z,] ){re.escape(noun.capitalize())}\b", block):
        return None
    return article, noun


def subject_swap(scene: Scene) -> list[Option]:
    s = scene.sentence
    out: list[Option] = []
    block = " ".join(scene.own)
    mine = _subject(s, block)
    if mine is None:
        return out
    article, noun = mine
    for other in scene.own:
        theirs = _subject(other, block)
        if theirs is None or theirs[1].lower() == noun.lower():
            continue
        if re.search(rf"\b{re.escape(theirs[1].lower())}\b", s.lower()):
            continue  # already in the sentence: no swap of subjects
        new = theirs[1].lower() if article else theirs[1].capitalize()
        text = article + new + s[len(article) + len(noun) :]
        out.append(Option("subject", text, True))
    if not article and noun.endswith("s"):
        out.append(Option("control_article", "The " + noun.lower() + s[len(noun) :], False))
    return out
