"""What an English word can be by the lemma tables (lemminflect): a noun, a verb, a finite verb,
a modifier, a subject's head; the classes gate/unsaid.py reads a clause's added words by, and
the noun tests of the gate's other checks, the answer's checks and the red team.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = [
    "can_be_noun",
    "can_be_verb",
    "finite",
    "known",
    "modifier",
    "modifier_or_noun",
    "noun_not_verb_or_adjective",
    "nounish",
    "only_noun",
    "plain_noun",
    "subject_head",
]


@lru_cache(maxsize=8192)
def can_be_noun(word: str) -> bool:
    """Whether the lemma tables list `word` as a form of a noun."""
    import lemminflect

    return "NOUN" in lemminflect.getAllLemmas(word)


@lru_cache(maxsize=8192)
def only_noun(word: str) -> bool:
    """Whether the lemma tables list `word`, and only as a noun or a proper noun."""
    import lemminflect

    kinds = set(lemminflect.getAllLemmas(word))
    return bool(kinds) and kinds <= {"NOUN", "PROPN"}


@lru_cache(maxsize=8192)
def noun_not_verb_or_adjective(word: str) -> bool:
    """Whether `word` can be a noun and can be neither a verb nor an adjective."""
    import lemminflect

    found = lemminflect.getAllLemmas(word)
    return "NOUN" in found and "VERB" not in found and "ADJ" not in found


@lru_cache(maxsize=8192)
def can_be_verb(word: str) -> bool:
    """Whether the lemma tables list `word` as a form of a verb."""
    import lemminflect

    return "VERB" in lemminflect.getAllLemmas(word)


def subject_head(word: str, key: str, named: frozenset[str]) -> bool:
    """A word a subject's head may be: one that can be a noun ("filling", "white" as well),
    or one the lemma tables do not know that no block writes as a name."""
    return can_be_noun(word.lower()) or nounish(word, key, named)


@lru_cache(maxsize=8192)
def modifier(word: str) -> bool:
    """Whether `word` can be an adjective or a noun and is no verb (a modifier's place)."""
    import lemminflect

    lemmas = lemminflect.getAllLemmas(word.lower())
    return bool({"ADJ", "NOUN"} & set(lemmas)) and "VERB" not in lemmas


@lru_cache(maxsize=8192)
def plain_noun(word: str) -> bool:
    """Whether `word` can be a noun and is no verb's -s form or adjective only."""
    import lemminflect

    lemmas = lemminflect.getAllLemmas(word.lower())
    return "NOUN" in lemmas and "ADJ" not in lemmas and "ADV" not in lemmas


def nounish(word: str, key: str, named: frozenset[str]) -> bool:
    """A noun, or a word the lemma tables do not know ("Sync") that no block writes as a name:
    a subject's head, no verb."""
    return plain_noun(word) or (key not in named and not known(word.lower()))


@lru_cache(maxsize=8192)
def known(word: str) -> bool:
    """Whether the lemma tables list `word` at all."""
    import lemminflect

    return bool(lemminflect.getAllLemmas(word))


@lru_cache(maxsize=8192)
def modifier_or_noun(word: str) -> bool:
    """An adjective, a noun or a participle ("Deleted"), not a function word."""
    import lemminflect

    lemmas = lemminflect.getAllLemmas(word.lower())
    if {"ADJ", "NOUN"} & set(lemmas):
        return True
    return any(
        word.lower() in lemminflect.getInflection(v, tag="VBN") for v in lemmas.get("VERB", ())
    )


_AUXILIARIES = frozenset("is are was were has have had can cannot will must may should".split())


@lru_cache(maxsize=8192)
def finite(word: str) -> bool:
    """Whether a word can be a finite verb ("costs", "is"), as a predicate has one."""
    import lemminflect

    if word in _AUXILIARIES:
        return True
    for lemma in lemminflect.getAllLemmas(word).get("VERB", ()):
        if word != lemma and any(
            word in lemminflect.getInflection(lemma, tag=tag) for tag in ("VBZ", "VBD")
        ):
            return True
    return False
