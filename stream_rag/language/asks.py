"""The separate things one question asks, for the extractive generator to answer each from the
block that answers it: "What are the prices of the Basic and Pro plans?" asks the Basic plan's
price and the Pro plan's, which two documents state.

Only coordination that marks separate asks is split: two questions in one message, clauses
joined by "and"/"or" where the second opens as a question ("... and can guests visit?"), and
names joined by "and"/"or" (capitalised inside the sentence, or a model's letters and digits:
"Basic and Pro", "X200, X300 and X500"), or nouns with their own article ("the kettle and the
blender"). "Can I pause and resume sync?" or "my account and data" ask one thing.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["asks"]

MAX_ASKS = 3
# Words a clause that asks something opens with.
_OPENS_ASK = (
    r"(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|"
    r"will|would|should|shall|may|might|must|has|have)"
)
# Only from where a run of spaces starts: tried inside one too, the run's every split was tried
# against "and" (n**3 steps for 4,000 spaces); a match inside a run matches from its start.
_CLAUSE = re.compile(
    rf"(?<!\s)(?:\s*[,;]\s*|\s+)(?:and|or|but|also|plus)\s+(?={_OPENS_ASK}\b)", re.I
)
_SENTENCE = re.compile(r"(?<=\?)\s+")
# Atomic: "X1" is both a capitalised word and letters then a digit, and a failed search tried
# every word's two readings (2**n); a word is whole either way, so one reading is enough.
_WORD_NAME = r"(?>[A-Z][\w'’-]*|[^\W\d_]+\d[\w-]*)"
_NAME = rf"{_WORD_NAME}(?:\s+{_WORD_NAME})*"  # "Google Drive"
# "Basic and Pro", "Basic, Pro and Team", "the X200 or the X300"
_NAMES = re.compile(
    rf"(?<![\w'’-])(?P<a>(?:the\s+)?{_NAME})(?P<mid>(?:,\s*(?:the\s+)?{_NAME})*)"
    rf",?\s+(?:and|or)\s+(?P<b>(?:the\s+)?{_NAME})(?![\w'’-])"
)
# Where `_NAMES` can start: names joined by spaces or commas. A search failing from a run's
# first name fails from every later one (any match there extends back to the first), but `re`
# retries each, and each retry reads the rest of the run: 4,000 characters of "Abc Abc ..."
# took 75-100 ms. `_search_names` tries a run once, from its start.
_RUN = re.compile(rf"(?<![\w'’-])(?:the\s+)?{_NAME}(?:,\s*(?:the\s+)?{_NAME})*")
_ARTICLE = r"(?:the|my|your|our|a|an)"
_SEPARATOR = r"(?:\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+)"
# "the kettle and the blender", "the cargo bike, the city bike and the e-bike": each with its
# own article; the last takes a second word only where the phrase ends ("the e-bike per day").
# A possessive is followed by its noun, wherever the phrase ends ("the kids' bike cost").
_WORD = r"[a-z][\w-]*"
_POSSESSIVE = rf"{_WORD}['’]s?(?!\w)\s+{_WORD}"
_NOUN = rf"{_ARTICLE}\s+(?:{_POSSESSIVE}|{_WORD}(?:\s+{_WORD})??)"
_LAST_NOUN = rf"{_ARTICLE}\s+(?:{_POSSESSIVE}|{_WORD}(?:\s+{_WORD}(?=[?.!,;:]|$))?)"
_NOUNS = re.compile(
    rf"\b(?P<chain>{_NOUN}(?:{_SEPARATOR}{_NOUN})*{_SEPARATOR}{_LAST_NOUN})(?=[\s?.!,;:]|$)", re.I
)
_SPLIT_NOUNS = re.compile(_SEPARATOR, re.I)


def asks(question: str, limit: int | None = MAX_ASKS) -> list[str]:
    """The questions `question` asks, in its order: itself alone when it asks one thing, at
    most `limit` (None: all, as a check that must see every part needs)."""
    parts = _all_asked(question)
    return list(parts[:limit]) if len(parts) > 1 else [question]


@lru_cache(maxsize=1024)
def _all_asked(question: str) -> tuple[str, ...]:
    """Every part `asks` finds: one split per question, though the pre-model checks, the
    uncovered parts and the local generator each ask for it."""
    parts: list[str] = []
    sentences = _SENTENCE.split(question.strip())
    if not all(s.endswith(("?", ".")) for s in sentences):
        # A follow-up resolved with the earlier turn's words after it ("How do I claim it?
        # claim (Nimbus Blender warranty)") asks one thing.
        sentences = [question.strip()]
    for sentence in sentences:
        clauses = _CLAUSE.split(sentence)
        if any(len(c.split()) < 2 for c in clauses):  # "Where and when can I ...?"
            clauses = [sentence]
        for clause in clauses:
            parts.extend(_coordinated(clause.strip()))
    return tuple(p for p in dict.fromkeys(parts) if p)


def _coordinated(clause: str) -> list[str]:
    """`clause` once per coordinated name or noun it asks about ("the cargo bike, the city bike
    and the e-bike" each), else `clause`."""
    match = _search_names(clause)
    if match is not None and _inside(clause, match.start()):
        items = [match["a"], *re.findall(rf"(?:the\s+)?{_NAME}", match["mid"]), match["b"]]
    else:
        match = _NOUNS.search(clause)
        if match is None:
            return [clause]
        items = _SPLIT_NOUNS.split(match["chain"])
    head, tail = clause[: match.start()], clause[match.end() :]
    return [f"{head}{item}{tail}" for item in items]


def _search_names(clause: str) -> re.Match[str] | None:
    """`_NAMES.search(clause)`, in time linear in the clause's length."""
    for run in _RUN.finditer(clause):
        if (match := _NAMES.match(clause, run.start())) is not None:
            return match
    return None


def _inside(clause: str, start: int) -> bool:
    """A capital at `start` is a name only inside the sentence (a first word is capitalised
    anyway); a model name is one anywhere."""
    before = clause[:start].rstrip()
    word = clause[start:].split(None, 1)[0]
    return bool(before) or any(c.isdigit() for c in word)
