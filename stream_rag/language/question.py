"""The question, read once: its terms, the parts it asks, the names it asks about, its subject
words, the kind of answer it wants and its language (`Question`), for retrieval's checks, the
pre-model checks, sentence selection, the coverage check and the refusal's wording to read
alike.

The kind: "how long" wants a duration, "how much does it cost" an amount, "when" and "how
often" a time,
"how many" a count, "how old" an age, "how do I" steps, "who" a person or organisation, a
question opening with a verb ("Is there ...?", "Can I ...?") a yes or no. `offers` says
whether a sentence states an answer of a kind: a number with a time unit for a duration, a
price or "free" for an amount, a name or an organisation for "who".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from ..text import STOP_WORDS, tokenize
from .asking import asking_sentences
from .asks import asks
from .detect import detect_language
from .focus import focus_words, noun_phrases
from .followups import subject_words
from .quantities import canonical, scan
from .terms import names, stem
from .wordclass import only_noun

__all__ = [
    "AnswerKind",
    "Question",
    "answer_kind",
    "kind_words",
    "offers",
    "other_thing",
    "read_question",
    "wants_value",
]

AnswerKind = Literal["duration", "money", "time", "count", "age", "steps", "who", "yesno"]
# Kinds whose answer states a value (`offers` can tell a sentence that does).
_VALUE_KINDS = frozenset(("duration", "money", "time", "count", "age"))

_KINDS: tuple[tuple[AnswerKind, re.Pattern[str]], ...] = (
    ("age", re.compile(r"\bhow old\b|\b(?:what|which) age\b|\bage limit\b")),
    (
        "duration",
        re.compile(
            r"\bhow (?:long|soon|fast|quickly)\b|\bhow much (?:notice|time)\b"
            r"|\bhow (?:far|long|much|many days|many weeks) (?:in advance|ahead|beforehand)\b"
            r"|\bhow many (?:seconds|minutes|hours|days|working days|business days|weeks|months"
            r"|years)\b|\bfor how many\b|\bincubation period\b"
        ),
    ),
    (
        "time",
        re.compile(
            r"^\W*when\b|\bwhat time\b|\bwhich (?:day|date|month)\b|\bopening hours\b"
            r"|\bwhat (?:day|date)\b|\btime of (?:year|day)\b|\bhow (?:often|frequently)\b"
        ),
    ),
    ("count", re.compile(r"\bhow much (?:storage|space|data|water|memory|room|capacity)\b")),
    (
        "money",
        re.compile(
            r"\bhow much\b|\b(?:cost|costs|price|prices|priced|fee|fees|charge|charged|pay for"
            r"|have to pay|do i pay|discount|compensation|interest rate|rate|excess|premium)\b"
        ),
    ),
    ("count", re.compile(r"\bhow many\b")),
    (
        "steps",
        re.compile(
            r"^\W*how (?:do|can|should) (?:i|we|you)\b|\bhow to\b|\b(?:what are )?the steps\b"
            r"|\bprocedure\b|^\W*how does [^?]{1,60}\bwork\b"
        ),
    ),
    ("who", re.compile(r"^\W*(?:(?:and|so|but)\s+)?(?:who|whom|whose|to whom)\b")),
    (
        "yesno",
        re.compile(
            r"^\W*(?:is|are|was|were|do|does|did|can|could|will|would|should|may|must|has|have)\b"
        ),
    ),
)
_WH = re.compile(r"^\W*(?:(?:and|so|but)\s+)?(?:what|how|when|which|at what|for how|until when)\b")
# A yes/no question that asks whether something is paid for is answered by an amount or "free".
# Asking whether one may do something ("Can I spread the cost?"): answered by whether and how.
_MAY_I = re.compile(r"^\W*(?:can|could|may) (?:i|we)\b")
_PAID = re.compile(r"\b(?:free|pay|paid|fee|fees|charge|cost|costs|price|discount)\b")
_TIME_UNITS = frozenset(
    stem(u) for u in "second minute hour day night week fortnight month year sec min hr".split()
)
_DURATION_WORDS = re.compile(
    r"\b(?:within|until|up to|at least|overnight|immediately|same day|next day"
    r"|(?:every|each) (?:other |second |two |few )?(?:minute|hour|day|night|week|fortnight"
    r"|month|year|morning|evening)s?"
    r"|(?:a|an|one|several|a few|many) (?:minute|hour|day|night|week|fortnight|month|year)s?"
    r"|[^\W_]+-(?:minute|hour|day|night|week|month|year)s?)\b"
)
_TIME_WORDS = re.compile(
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekdays?|weekends?"
    r"|january|february|march|april|may|june|july|august|september|october|november|december"
    r"|spring|summer|autumn|fall|winter|morning|afternoon|evening|night|noon|midnight|daily"
    r"|weekly|monthly|yearly|annually|until|before|after|once|during|every|each|when|as soon as"
    r"|bank holidays?|public holidays?|today|tomorrow)\b"
)
# Words that may follow "no fee" when it says a thing costs nothing ("no fee is charged", "no
# charge for members"); any other word makes the fee a noun's modifier ("no fee reduction").
_AFTER_FEE = (
    r"(?![ \t]+(?!(?i:for|to|is|are|was|will|be|applies|apply|at|on|if|when|and|or|of|in|with"
    r"|charged|payable|whatsoever|either|involved|attached|required|needed|unless|except|but"
    r"|as|from|per|whatever)\b)[^\W\d_])"
)
# Lower-case: "Free" inside a sentence names a plan ("three plans: Free, Pro and Team"), but
# after a price column's header it is a table row's cell ("Resident card: ..., Price Free.");
# "not free" and "feel free" say nothing is free.
_FREE = re.compile(
    r"(?<![Nn]ot )(?<!n't )(?<![Ff]eel )\bfree\b|^Free\b"
    r"|\b(?:[Nn]o (?:[^\W\d_]+ )?(?:charge|fee|cost)s?|without (?:a |any )?(?:[^\W\d_]+ )?"
    r"(?:fee|charge)s?|at no (?:[^\W\d_]+ )?(?:cost|charge))\b" + _AFTER_FEE + r"|\b(?:[Pp]rice"
    r"|[Ff]ee|[Cc]ost|[Cc]harge|[Rr]ate|[Aa]mount)s?:? Free\b"
)
_NO_LIMIT = re.compile(r"\b(?:unlimited|no (?:\w+ ){0,2}limits?|as (?:many|often) as)\b")
_MONEY_WORDS = frozenset("pound pounds euro euros dollar dollars cent cents pence".split())
# What answers "who": a name written with a capital inside the sentence ("run by the Berger
# family"), a word for a person, a team or an organisation, or a number or address to reach one.
_WHO_WORDS = re.compile(
    r"\b(?:family|company|firm|team|staff|owner|owners|manager|managers|department|council"
    r"|office|agency|authority|service|partner|partners|provider|doctor|nurse|dentist"
    r"|receptionist|reception|desk|helpline|line|hotline|person|people|member of staff"
    r"|colleague|colleagues|volunteer|volunteers|landlord|insurer|bank|courier|technician"
    r"|engineer|tenant|police|court|judge|solicitor|lawyer|ombudsman|government)s?\b"
    r"|@|\+?\d[\d ]{6,}\d",
    re.IGNORECASE,
)
_NOT_NAMES = frozenset(
    "i monday tuesday wednesday thursday friday saturday sunday january february march april may"
    " june july august september october november december".split()
)
# A month is written with a capital in English because it is a month, not a name of something
# the sources must hold: "I got the final letter in March, is it too late?" asks about the
# letter ("names" for the gate's places keeps them; the question's names are what it asks about).
_MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)
# Languages that write every noun with a capital: there a capital names no one by itself.
_NOUNS_CAPITALISED = frozenset(("de",))
# Someone named in any language: a title before a name, a company's legal form after one.
_NAMED = re.compile(
    r"\b(?:Mr|Mrs|Ms|Mx|Dr|Prof|Frau|Herr|Mme|Mlle|Sr|Sra|Dhr|Mevr)\.?[ \t]+[^\W\d_]"
    r"|\b(?:GmbH|AG|KG|Ltd|Inc|LLC|PLC|SARL|e\.[ ]?V\.|B\.V\.|S\.A\.|S\.p\.A\.)(?!\w)"
)
_WORD = re.compile(r"[^\W\d_][\w'-]*")
# What opens a sentence, a clause after a colon or a list item: its first word's capital.
_OPENS = frozenset(".!?:;\n")


@dataclass(frozen=True, slots=True)
class Question:
    """What one question asks, read from its text once."""

    text: str
    terms: frozenset[str]  # its BM25 tokens, stemmed
    parts: tuple[str, ...]  # the separate things it asks (`asks`), itself when one
    names: tuple[str, ...]  # the words that name something ("Enterprise", "X500")
    subject: tuple[str, ...]  # its content words as written ("Nimbus Blender warranty")
    kind: AnswerKind | None  # the kind of answer it wants; None: an open question
    language: str | None = None  # the language it is written in, when clear (`detect.py`)
    tokens: tuple[str, ...] = ()  # its BM25 tokens as retrieval searches them, unstemmed
    focus: tuple[str, ...] = ()  # the nouns heading its noun phrases ("my dog", "by cheque")
    kind_terms: frozenset[str] = frozenset()  # the words asking its kind (`kind_words`)
    # The noun phrases it asks about, each up to its head ("the incubation period" ->
    # ("incubation", "period")): which thing of a kind it asks about (`other_thing`).
    things: tuple[tuple[str, ...], ...] = ()

    @property
    def wants_value(self) -> bool:
        return wants_value(self.kind)

    @property
    def asks_value(self) -> bool:
        """It wants a value and asks it outright ("How long ...?", "What is the fee ...?"), not
        in passing ("Do you price match?", "If it is cheaper elsewhere, ...?"): an answer
        stating no value does not answer it."""
        asking = asking_sentences(" ".join(self.text.casefold().split()))
        return self.wants_value and any(_WH.match(sentence) for sentence in asking)


def other_thing(question: Question, title: str) -> bool:
    """Whether `title`, an FAQ entry's question, asks about another thing of a kind the
    question asks about: a phrase of each with one head noun and the words before it told
    apart by none ("the infectious period" and "the incubation period", "the annual fee" and
    "the cancellation fee"); "the fee" and "the cancellation fee" are not told apart."""
    if not title.rstrip().endswith(("?", "？")):
        return False
    heading = read_question(_LABEL.sub("", title))
    asked = {_stems(p[-1:]): _stems(p[:-1]) for p in question.things if len(p) > 1}
    return any(
        before and before.isdisjoint(asked.get(_stems(p[-1:]), before))
        for p in heading.things
        if len(p) > 1
        for before in (_stems(p[:-1]),)
    )


# An FAQ's label before its question line ("Q: How do I ...?").
_LABEL = re.compile(r"^\s*(?:Q|Question)\s*[:.]\s*", re.IGNORECASE)


def _stems(words: tuple[str, ...]) -> frozenset[str]:
    return frozenset(stem(w.casefold()) for w in words)


def wants_value(kind: AnswerKind | None) -> bool:
    """Whether an answer of `kind` states a value (`offers` can tell)."""
    return kind in _VALUE_KINDS


@lru_cache(maxsize=2048)
def read_question(text: str) -> Question:
    """`text` read once (kept per text: the checks and the generator read the same question).
    A question asking several things wants the kind its parts agree on, else none."""
    parts = tuple(asks(text, limit=None))
    kinds = {answer_kind(part) for part in parts} if len(parts) > 1 else {answer_kind(text)}
    tokens = tuple(tokenize(text))
    return Question(
        text,
        frozenset(stem(t) for t in tokens),
        parts,
        tuple(n for n in names(text) if n.casefold() not in _MONTHS),
        tuple(subject_words(text)),
        kinds.pop() if len(kinds) == 1 else None,
        detect_language(text),
        tokens,
        focus_words(text),
        kind_words(text),
        noun_phrases(text),
    )


def answer_kind(text: str) -> AnswerKind | None:
    """The kind of answer `text` asks for (the first of `_KINDS` that matches)."""
    lowered = " ".join(text.casefold().split())
    for kind, pattern in _KINDS:
        asked = next((s for s in asking_sentences(lowered) if pattern.search(s)), None)
        if asked is not None:
            if kind == "steps" and _PAID.search(asked):
                return "money"  # "How do I pay less?" asks an amount, not steps
            if kind == "money" and _MAY_I.match(asked):
                return "yesno"  # "Can I pay my fees in cash?" asks whether, not how much
            return kind
    return None


@lru_cache(maxsize=2048)
def kind_words(text: str) -> frozenset[str]:
    """The stemmed words by which `text` asks its kind of answer ("charge", "fee" in "Do you
    charge a restocking fee?"): what it asks beyond them is what it asks about."""
    lowered = " ".join(text.casefold().split())
    for kind, pattern in _KINDS:
        said = [m.group() for s in asking_sentences(lowered) for m in pattern.finditer(s)]
        if said:
            if kind in ("steps", "money"):
                said += [m.group() for s in asking_sentences(lowered) for m in _PAID.finditer(s)]
            return frozenset(stem(w) for w in tokenize(" ".join(said)))
    return frozenset()


@lru_cache(maxsize=8192)
def offers(sentence: str, kind: AnswerKind | None) -> bool:
    """Whether `sentence` states an answer of `kind` (always, for a kind that wants no value
    but "who")."""
    if kind == "who":
        return _names_someone(sentence)
    if kind not in _VALUE_KINDS:
        return True
    lowered = sentence.casefold()
    canon = canonical(lowered)
    found, _ = scan(canon)
    units = [_unit(q.text, v) for q in found for v in q.values]
    if kind == "money":
        return bool(_FREE.search(sentence)) or any(
            u in ("%", "$", "€", "£", "¥") or u in _MONEY_WORDS for u in units
        )
    if kind == "duration":
        return any(stem(u) in _TIME_UNITS for u in units) or bool(_DURATION_WORDS.search(lowered))
    if kind == "time":
        has_time = any(q.dates or q.times for q in found)
        return has_time or bool(_TIME_WORDS.search(lowered))
    if kind == "age":
        return bool(units) and not any(u in ("%", "$", "€", "£", "¥") for u in units)
    # count: a number that is no price and no delay, or no limit to it
    if _NO_LIMIT.search(lowered):
        return True
    return any(
        u not in ("%", "$", "€", "£", "¥") and u not in _MONEY_WORDS and stem(u) not in _TIME_UNITS
        for u in units
    )


def _names_someone(sentence: str) -> bool:
    """Whether `sentence` names a person or an organisation, or says how to reach one."""
    if _WHO_WORDS.search(sentence) or _NAMED.search(sentence):
        return True
    if _capital_name(sentence):
        return True
    return any(_AGENT.search(w) and only_noun(w.casefold()) for w in _WORD.findall(sentence))


def _capital_name(sentence: str) -> bool:
    """Whether a word of `sentence` is written with a capital for being a name: not opening a
    sentence, clause or list item, no function word or day, in a language that does not
    capitalise every noun."""
    capitals = [m for m in _WORD.finditer(sentence) if m.group()[0].isupper()]
    if not capitals or detect_language(sentence) in _NOUNS_CAPITALISED:
        return False
    for match in capitals:
        before = sentence[: match.start()].rstrip(" \t\"'“‘([*_#>•-")
        word = match.group().casefold()
        if before and before[-1] not in _OPENS and word not in _NOT_NAMES | STOP_WORDS:
            return True
    return False


# A noun for one who does something ("bailiffs", "officer", "agent", "receptionist").
_AGENT = re.compile(r"(?:er|or|ist|ian|ant|ent|iff|ee)s?$", re.IGNORECASE)


def _unit(shown: str, value: tuple[float, str | None]) -> str:
    """A value's unit: its symbol, else the word after its number ("45 days" -> "day")."""
    if value[1]:
        return value[1]
    words = re.findall(r"[^\W\d_]+", shown)
    return words[-1] if words else ""
