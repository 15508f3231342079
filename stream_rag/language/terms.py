"""The gate's content terms: BM25 tokens less numbers and words that state nothing, stemmed.

Shared by the gate's checks, the statements it reads in blocks and the chunk features
computed at ingest, which must all read a text alike.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..text import tokenize
from .quantities import NUMBER_WORDS, UNIT_WORDS

__all__ = [
    "DISCOURSE_WORDS",
    "NEGATION",
    "NEGATION_CUE",
    "WORD",
    "content_terms",
    "lemma_keys",
    "model_names",
    "names_model",
    "stem",
    "term_keys",
    "term_of",
]

# Interjections that open conversational answers ("Yes, ...") and state nothing checkable.
DISCOURSE_WORDS = frozenset(
    ("yes", "yeah", "yea", "yep", "yup", "oh", "ok", "okay", "wow", "hey", "hi", "hello")
) | {"absolutely"}
# Blingfire splits "can't" into "ca n't"; the stray halves are not words.
_FRAGMENTS = frozenset({"ca", "wo", "sha"})
# "not only ... but" and "not just" affirm, when something follows them.
NEGATION_CUE = re.compile(
    r"\b(?:not|no|never|nor|cannot|neither|none)\b"
    # "not only X" affirms X; "... on Saturdays not only." (nothing after) negates.
    r"(?!\s+(?:only|just|merely|simply)\b(?!\W*$))|n't\b"
)
NEGATION = "not"  # one pseudo-term for every negation cue: a claim's polarity must be in the block
_NEGATION_HINTS = ("no", "n't", "never", "neither")  # substrings of every cue; cheaper than re
_NUMERIC_TOKEN = re.compile(r"[\d.,:/]*\d[\d.,:/]*(?:st|nd|rd|th|s|am|pm)?")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Strip one inflection (-s, -es, -ies, -ied, -ed, -ing) and a final e, so that "uses",
    "used" and "using" meet; applied alike to sentence and blocks, so odd stems do no harm."""
    base = _stem(word)
    # "note", "noted", "notes" would read as the negation's pseudo-term.
    return "note" if base == NEGATION and word != NEGATION else base


def _stem(word: str) -> str:
    if not (word.isascii() and word.isalpha()) or len(word) <= 2:
        return word
    if word.endswith(("ies", "ied")) and len(word) > 4:
        return word[:-3] + "y"
    for suffix in ("ing", "ed"):
        base = word[: -len(suffix)]
        if word.endswith(suffix) and len(base) >= 2 and _VOWEL.search(base) and word[-3:] != "eed":
            if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "aeiouylsz":
                base = base[:-1]  # stopped -> stop, running -> run
            elif base.endswith("ll") and _doubled_l(word, base):
                base = base[:-1]  # cancelled -> cancel (installed -> install stays)
            return base[:-1] if base.endswith("e") and len(base) > 2 else base
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if word.endswith("ings") and len(word) > 5:
        return _stem(word[:-1])  # bookings -> booking -> book, as "booking" is read
    if word.endswith("s") and len(word) > 3 and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return word[:-1] if word.endswith("e") and len(word) > 2 else word


_VOWEL = re.compile("[aeiouy]")


def _doubled_l(word: str, base: str) -> bool:
    """Whether the "ll" of `word`'s `base` doubles a verb's one "l" (British "cancelled",
    "travelled", "labelled"), not a verb's own ("installed", "filled"), by the lemma tables."""
    import lemminflect  # loaded only for a word ending in "-lled" or "-lling"

    verbs = lemminflect.getAllLemmas(word).get("VERB", ())
    return base[:-1] in verbs and base not in verbs


_NOT_TERMS = DISCOURSE_WORDS | _FRAGMENTS | UNIT_WORDS | NUMBER_WORDS


@lru_cache(maxsize=65536)
def term_of(token: str) -> str | None:
    """The gate term of one token: stemmed, or None for numbers and words that state nothing."""
    if token in _NOT_TERMS or _NUMERIC_TOKEN.fullmatch(token):
        return None
    return stem(token)


def content_terms(text: str) -> list[str]:
    """The gate's content terms of `canonical` text: BM25 tokens less numbers, stemmed."""
    out = [term for token in tokenize(text) if (term := term_of(token)) is not None]
    if any(cue in text for cue in _NEGATION_HINTS) and NEGATION_CUE.search(text):
        out.append(NEGATION)
    return list(dict.fromkeys(out))


@lru_cache(maxsize=65536)
def lemma_keys(token: str, term: str) -> frozenset[str]:
    """`term` and the stems of the token's dictionary lemmas ("went" -> go, "mice" -> mouse)."""
    if not token.isascii():
        return frozenset((term,))
    import lemminflect  # 0.35 s to load its tables: only once a sentence reaches the grey zone

    lemmas = lemminflect.getAllLemmas(token)
    return frozenset({term, *(stem(lemma) for forms in lemmas.values() for lemma in forms)})


def term_keys(text: str) -> list[tuple[str, frozenset[str], str]]:
    """The content terms of `canonical` text, each with the keys it matches by (stem and
    lemmas) and its first surface form; in order, without repeats."""
    out: dict[str, tuple[frozenset[str], str]] = {}
    for token in tokenize(text):
        term = term_of(token)
        if term is not None:
            keys, surface = out.get(term, (frozenset(), token))
            out[term] = (keys | lemma_keys(token, term), surface)
    return [(term, keys, surface) for term, (keys, surface) in out.items()]


# A word as written: a letter or digit, then word characters, apostrophes and hyphens
# ("Wi-Fi", "don't", "X300").
WORD = re.compile(r"[^\W_][\w'’-]*")

# A model or part name: a word of a letter then digits ("X300", "A7", "iOS16"); a number with
# a unit or suffix ("12V", "3rd", "10am") is a value, not a name.
_MODEL_NAME = re.compile(r"\b[^\W\d_]\w*?\d\w*\b")


def model_names(text: str) -> frozenset[str]:
    """The model and part names in `text`, lower-cased."""
    return frozenset(m.group(0).lower() for m in _MODEL_NAME.finditer(text))


def names_model(model: str, *texts: str) -> bool:
    """Whether any of `texts` names `model` (a word of `model_names`), in any case."""
    pattern = re.compile(rf"\b{re.escape(model)}\b", re.IGNORECASE)
    return any(pattern.search(text) for text in texts)


_OPENS = '.?!:;"“(«¿¡'  # what a word after it opens, so its capital says nothing


def names(question: str) -> list[str]:
    """The words of `question` that name something: written with a capital inside a sentence
    ("Enterprise", not a question's first word), or a letter and digits ("X500"); words that
    state nothing ("OK", "I") aside."""
    capitals: list[str] = []
    models: list[str] = []
    lower = 0
    for match in WORD.finditer(question):
        word = match.group(0)
        parts = [term_of(t) for t in tokenize(word)]
        before = question[: match.start()].rstrip()
        if not parts or not all(parts):
            continue
        if word[:1].isalpha() and any(c.isdigit() for c in word):
            models.append(word)
        elif not before or before[-1] in _OPENS:
            continue  # a sentence's first word: its capital says nothing
        elif word[:1].isupper():
            capitals.append(word)
        else:
            lower += 1
    if question.upper() == question or (len(capitals) >= 3 and not lower):
        # CAPITALS or Title Case: the capitals name nothing
        capitals = []
    return list(dict.fromkeys(w for w in WORD.findall(question) if w in capitals or w in models))
