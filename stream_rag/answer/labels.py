"""Label-and-value lines ("Hot desk: 160 euros a month.", a table row read as "Regular:
Monthly fee 12 euros, ...", a list item "- Late return: 20 euros ...") and when two of them, or
one and a sentence giving its label a value, speak of the same subject (`conflicts.py`)."""

from __future__ import annotations

import re
from functools import lru_cache

from ..language.quantities import canonical
from .statements import Statement, terms_of

__all__ = ["label_terms", "same_label", "subject_in_label"]

# A label and its value: "Hot desk: 160 euros a month.", a list item "- Late return: 20 euros
# per started half hour." or a table row read as a sentence (ingest/tables.py).
_LABEL = re.compile(r"^\s*(?:[-*+\u2022]\s+|\d{1,3}[.)]\s+)?([^\W\d_][^:.!?]{0,60}?)\s*:\s")
_LABEL_WORDS = 5


@lru_cache(maxsize=16384)
def label_terms(text: str) -> frozenset[str] | None:
    """The terms of a statement's label (at most `_LABEL_WORDS` words before a colon)."""
    label = _LABEL.match(text)
    if label is None or len(label.group(1).split()) > _LABEL_WORDS:
        return None
    return terms_of([label.group(1)])[0] or None


def same_label(sa: Statement, sb: Statement, asked: frozenset[str]) -> bool:
    """Two label-and-value lines of one label: a price list's "Hot desk: 160 euros a month."
    and a plans table's row "Hot desk: Price 190 euros a month, Access Weekdays, ...", or
    "Regular plan: 9 euros a month, ..." and the row "Regular: Monthly fee 12 euros, ..." when
    the question asks about the Regular plan. The same subject whatever else the line or the
    row's other cells say: what is compared is only the values the question asks (`_scoped`)
    on the same measure, so "Standard: 4.90 euros per parcel" and "Standard: Price 9 euros a
    month" still do not conflict. The labels may differ only in words the question asks."""
    la, lb = label_terms(sa.text), label_terms(sb.text)
    if la is None and lb is not None:
        return _label_said(sb, lb, sa, asked)
    if lb is None and la is not None:
        return _label_said(sa, la, sb, asked)
    if la is None or lb is None or len((la | lb) & asked) < min(2, len(asked)):
        return False  # the labels name what the question asks, not one word of it ("fee")
    return la == lb or (bool(la & lb) and (la ^ lb) <= asked)


# Words between a label written in a sentence and the value it is given there.
_GIVEN = r"\s+(?:(?:of|is|are|was|costs?|at|stands\s+at|will\s+be)\s+){1,2}"


def _label_said(
    line: Statement, label: frozenset[str], other: Statement, asked: frozenset[str]
) -> bool:
    """A sentence giving the line's label a value in the label's own words: "Day rate: 55
    euros." and "A day rate of 59 euros applies when ..."."""
    found = _LABEL.match(line.text)
    if found is None or len(label & asked) < min(2, len(asked)):
        return False
    phrase = " ".join(canonical(found.group(1)).split())
    given = re.compile(rf"\b{re.escape(phrase)}{_GIVEN}")
    starts = {v.start for v in other.values}
    return any(m.end() in starts for m in given.finditer(other.canon))


# A sentence opening with its subject and the verb that gives it a value: "Parking costs 15
# euros a night ...", "The deposit is 150 euros." (in canonical text: lower case).
_SUBJECT = re.compile(
    r"^\s*(?:(?:the|our|a|an)\s+)?([^\W\d_]+(?:[\s-][^\W\d_]+){0,3}?)"
    r"\s+(?:costs?|is|are|will\s+be|comes?\s+to)\s+"
)


def subject_in_label(
    line: Statement, other: Statement, asked: frozenset[str], around: frozenset[str]
) -> bool:
    """A label line and a sentence giving a value to a subject made of the label's words:
    "Parking in the hotel car park: 12 euros a night." (a price list) and "Parking costs 15
    euros a night and cannot be reserved." (under "Getting here | Hotel Seeblick"). The
    subject holds a word the question asks, and every word of the question the label holds
    is in the sentence or the headings it stands under (`around`): "Parking at the station:
    5 euros a night." is not the hotel page's parking however alike the values. A pronoun
    subject ("It costs ...") stands for what the sentence or heading before it names."""
    found = _LABEL.match(line.text)
    if found is None or label_terms(other.text) is not None:
        return False
    said = _SUBJECT.match(other.canon)
    if said is None or said.end() not in {v.start for v in other.values}:
        return False
    label = terms_of([found.group(1)])[0]
    # "It costs 19 euros a month." under "## Pro plan": its subject is what the sentence or
    # heading before it names (`Statement.about`), not a word of its own.
    subject = terms_of([said.group(1)])[0] or other.about - other.terms
    return bool(subject & asked) and subject <= label and label & asked <= other.terms | around
