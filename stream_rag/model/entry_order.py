"""Which sentence of one FAQ entry leads: the one holding what the question asks beyond the
entry's own question, and a yes/no entry's opening for a yes/no question.

"Can I put stones in the garden waste bin?" under "What goes in the garden waste bin?" asks
about stones: the entry's sentence naming them leads, not the one repeating the bin's name.
The entry's scores are dealt out anew, not changed, so which entry wins stays as it was
(docs/decisions/faq-sentence-within-entry.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import replace
from typing import TYPE_CHECKING

from ..language.question import Question, answer_kind
from ..language.terms import stem

if TYPE_CHECKING:
    from .passages import Candidate

__all__ = ["ASIDE_WEIGHT", "within_entries"]

# A sentence holding a share r (IDF-weighted) of what the question asks beyond its heading
# gains (1 + ASIDE_WEIGHT * r) for its place in the entry (loadtests/faq_errors.py: right
# first sentence 175 -> 178 of 249 at 0.5; 1.0 gave 177, with two more refused).
ASIDE_WEIGHT = 0.5

# Words that ask rather than say what about ("What do I need to do to ...?", "How much does
# it cost?"): no sentence holds more of the question for holding them.
_ASKING = frozenset(
    stem(w)
    for w in "what do does did can could may i we you my our to how much many long need get".split()
)

# An entry's opening that says whether ("Yes, you can keep feeding garden birds.").
_SAYS_WHETHER = re.compile(r"^\W*(?:yes|no)\b", re.IGNORECASE)


def within_entries(
    ranked: Sequence[Candidate],
    sentences: Sequence[tuple[str, str, Set[str]]],
    question: Question,
    query: Set[str],
    idf: Mapping[str, float],
    terms: Callable[[str], Set[str]],
) -> list[Candidate]:
    """`ranked` (in `sentences`' order: each one's heading, all its headings, its terms) with
    each heading's sentences reordered and its scores dealt out to them in that order."""
    groups: dict[tuple[int, int], list[int]] = {}
    for k, (c, (title, _, _)) in enumerate(zip(ranked, sentences, strict=True)):
        if title:
            groups.setdefault((c.n, c.section), []).append(k)
    # The words saying which kind of answer is asked ("charge", "fee" for an amount) are read
    # by the kind already (`offers`): "Do you charge a restocking fee?" under "Is there a
    # restocking fee?" asks nothing beyond its heading.
    asked = set(query) - _ASKING - question.kind_terms
    whether = question.kind == "yesno"
    out = list(ranked)
    for members in groups.values():
        if len(members) < 2:
            continue
        title, headings, _ = sentences[members[0]]
        rest = asked - set(terms(headings))
        gain = [1 + ASIDE_WEIGHT * _share(rest, idf, sentences[k][2]) for k in members]
        lead = -1
        opening = min(members, key=lambda k: ranked[k].position)
        if (
            whether
            and answer_kind(title) == "yesno"
            and _says_whether(
                ranked[opening].text, set(terms(title)) - _ASKING, sentences[opening][2]
            )
        ):
            # The entry asks whether too, and its opening says whether: it leads.
            lead = opening
        slots = sorted(members, key=lambda k: -ranked[k].score)
        order = sorted(
            zip(members, gain, strict=True),
            key=lambda kg: (kg[0] != lead, -ranked[kg[0]].score * kg[1]),
        )
        for (k, _), slot in zip(order, slots, strict=True):
            out[k] = replace(ranked[k], score=ranked[slot].score, said=ranked[slot].said)
    return out


def _says_whether(text: str, heading: Set[str], said: Set[str]) -> bool:
    """An entry's opening says whether when it opens with yes or no, or states its heading's
    question ("Pets are not allowed in halls." under "Are pets allowed?"); "Human cases are
    rare." under "Can people catch bird flu?" does not."""
    return bool(_SAYS_WHETHER.match(text)) or (bool(heading) and heading <= said)


def _share(rest: Set[str], idf: Mapping[str, float], terms: Set[str]) -> float:
    """The IDF-weighted share of `rest` that a sentence's `terms` hold (0 when `rest` is empty)."""
    total = sum(idf[t] for t in rest)
    return sum(idf[t] for t in rest & terms) / total if total else 0.0
