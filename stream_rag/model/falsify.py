"""False sentences made from a block's own: polarity flipped, two numbers swapped
(number_swap.py), two entities swapped. The hostile knobs of `stream-rag fake-llm`
(attacks.py) build on these.

Each works on any sentence: entities are capitalised words and a short list of terms that bind
values (periods, weekdays), polarity is auxiliaries, "not" and a small antonym list.
Deterministic for a `random.Random`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from functools import partial

from ..language.terms import NEGATION_CUE
from .edits import Edit, novel
from .number_swap import swap_numbers

__all__ = ["falsify", "negate", "opposites", "swap_entities"]


# -- polarity -----------------------------------------------------------------------------------

_AUX = (
    "is are was were can could will would should must may might has have had does do did"
).split()
_DROP_NOT = re.compile(rf"\b({'|'.join(_AUX)})\s+not\b", re.IGNORECASE)
_CONTRACTED = re.compile(
    r"\b(ca|wo|is|are|was|were|does|do|did|has|have|had|should|would|could|must)n't\b",
    re.IGNORECASE,
)
_UNCONTRACT = {"ca": "can", "wo": "will"}
_CANNOT = re.compile(r"\bcannot\b", re.IGNORECASE)
_NEVER = re.compile(r"\bnever\b", re.IGNORECASE)
_NO = re.compile(r"\bno\b(?!\s+(?:later|more|longer|one|less)\b)(?=\s+[a-z])", re.IGNORECASE)
_ADD_NOT = re.compile(rf"\b({'|'.join(_AUX)})\b(?!\s+not\b|n't)", re.IGNORECASE)
# Past participles after has/have/had make them auxiliaries ("has expired"); else a main verb.
_PARTICIPLE = re.compile(r"\s+(?:been|\w+ed|\w+en)\b")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_PRONOUNS = frozenset("it he she this that which who one".split())
_DETERMINERS = frozenset("the a an this that these those its their our your each every".split())
# Pairs of opposites: either word swapped for the other flips what the sentence says.
ANTONYMS = (
    ("keep", "lose"),
    ("keeps", "loses"),
    ("kept", "lost"),
    ("included", "excluded"),
    ("include", "exclude"),
    ("includes", "excludes"),
    ("allowed", "forbidden"),
    ("allow", "forbid"),
    ("allows", "forbids"),
    ("permitted", "prohibited"),
    ("free", "paid"),
    ("before", "after"),
    ("always", "never"),
    ("enabled", "disabled"),
    ("open", "closed"),
    ("opens", "closes"),
    ("available", "unavailable"),
    ("required", "optional"),
    ("mandatory", "optional"),
    ("automatically", "manually"),
    ("automatic", "manual"),
    ("more", "less"),
    ("earliest", "latest"),
    ("minimum", "maximum"),
    ("accepted", "rejected"),
    ("accepts", "rejects"),
    ("refundable", "non-refundable"),
    ("public", "private"),
    ("supported", "unsupported"),
    ("increase", "decrease"),
    ("adds", "removes"),
    ("first", "last"),
)


def opposites(pairs: Sequence[tuple[str, str]]) -> tuple[dict[str, str], re.Pattern[str]]:
    """Each word of `pairs` with its opposite, and a pattern finding any of them as a whole word
    (the longest first, any case)."""
    opposite = {a: b for a, b in pairs} | {b: a for a, b in pairs}
    words = "|".join(sorted(opposite, key=len, reverse=True))
    return opposite, re.compile(rf"\b({words})\b", re.I)


_OPPOSITE, _ANTONYM_RE = opposites(ANTONYMS)


def negate(sentence: str, rng: random.Random) -> Edit | None:
    """`sentence` with its polarity flipped: a "not" added or dropped, or an antonym."""
    # A sentence already negated is flipped by dropping the cue: "is not no fee" is no way to
    # say "there is a fee".
    added = None if NEGATION_CUE.search(sentence.lower()) else _add(sentence)
    edits = [e for e in (_drop(sentence), added, _antonym(sentence, rng)) if e]
    return rng.choice(edits) if edits else None


def _drop(text: str) -> Edit | None:
    for pattern, replace in (
        (_DROP_NOT, lambda m: m.group(1)),
        (_CONTRACTED, lambda m: _UNCONTRACT.get(m.group(1).lower(), m.group(1))),
        (_CANNOT, lambda m: _case(m.group(), "can")),
        (_NEVER, lambda m: _case(m.group(), "always")),
        (_NO, lambda m: _case(m.group(), "some")),  # "There is no fee" -> "some fee"
    ):
        if match := pattern.search(text):
            new = replace(match)
            changed = text[: match.start()] + new + text[match.end() :]
            end = match.start() + len(new)
            # A word put in its place ("always", "some") is the change; a dropped one leaves none.
            start = end if pattern in (_DROP_NOT, _CONTRACTED) else match.start()
            return Edit(changed, "drop_negation", (start, end), match.group())
    return None


def _add(text: str) -> Edit | None:
    for match in _ADD_NOT.finditer(text):
        if match.start() == 0:
            continue  # a sentence opening with "Can ..." or "Is ..." is a question
        aux = match.group()
        if aux.lower() in ("has", "have", "had") and not _PARTICIPLE.match(text, match.end()):
            break  # "has three plans": a main verb, handled below
        if aux.lower() == "can":
            new = _case(aux, "cannot")
            changed = text[: match.start()] + new + text[match.end() :]
            return Edit(changed, "add_not", (match.start(), match.start() + len(new)), aux)
        changed = text[: match.end()] + " not" + text[match.end() :]
        return Edit(changed, "add_not", (match.end() + 1, match.end() + 4), aux)
    return _add_do(text)


def _add_do(text: str) -> Edit | None:
    """ "The plan includes X" -> "The plan does not include X": the first present-tense verb
    after a noun (lemminflect knows it as a verb's -s form)."""
    import lemminflect

    words = list(_WORD.finditer(text))
    for i, match in enumerate(words):
        word = match.group()
        after = words[i + 1] if i + 1 < len(words) else None
        plural = word.endswith("s") and not word.endswith(("ss", "us", "is"))
        if i and words[i - 1].group().lower() in _PRONOUNS:
            plural = False  # "It adds": a verb
        if plural and after is not None and _base_verb(after.group()):
            # "Members get", "notes keep": a plural noun before its verb, the one to negate
            changed = text[: after.start()] + "do not " + text[after.start() :]
            start = after.start() + 3
            return Edit(changed, "add_not", (start, start + 3), after.group())
        if i == 0 or not word.islower() or words[i - 1].group().lower() in _DETERMINERS:
            continue
        if word in ("has", "have", "had"):
            lemma = "have"
        else:
            lemmas = lemminflect.getAllLemmas(word, upos="VERB").get("VERB", ())
            if not lemmas or word not in lemminflect.getInflection(lemmas[0], tag="VBZ"):
                continue
            lemma = lemmas[0]
        do = "did" if word == "had" else ("do" if word == "have" else "does")
        new = f"{do} not {lemma}"
        changed = text[: match.start()] + new + text[match.end() :]
        start = match.start() + len(do) + 1
        return Edit(changed, "add_not", (start, start + 3), word)
    return None


def _base_verb(word: str) -> bool:
    import lemminflect

    return word.islower() and word in lemminflect.getAllLemmas(word, upos="VERB").get("VERB", ())


def _antonym(text: str, rng: random.Random) -> Edit | None:
    # Lowercase words only: a capitalised one is a name ("the Free plan") or an instruction.
    found = [m for m in _ANTONYM_RE.finditer(text) if m.group().islower() and m.start() > 0]
    if not found:
        return None
    match = rng.choice(found)
    new = _case(match.group(), _OPPOSITE[match.group().lower()])
    changed = text[: match.start()] + new + text[match.end() :]
    return Edit(changed, "antonym", (match.start(), match.start() + len(new)), match.group())


def _case(like: str, word: str) -> str:
    return word[0].upper() + word[1:] if like[:1].isupper() else word


# -- entities -----------------------------------------------------------------------------------

# Terms that bind a value to what it is for: "per month" against "per year" is another price.
BINDING = (
    ("hour", "day", "week", "month", "year"),
    ("hourly", "daily", "weekly", "monthly", "yearly"),
    ("monthly", "annual"),
    ("weekday", "weekend"),
    ("morning", "afternoon", "evening"),
    ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
)
_BOUND = {
    form: (i, base)
    for i, group in enumerate(BINDING)
    for base in group
    for form in (base, base + "s")
}
_BINDING_RE = re.compile(rf"\b({'|'.join(sorted(_BOUND, key=len, reverse=True))})\b", re.I)
_NAME_RUN = re.compile(r"\b[A-Z][\w-]*(?: [A-Z][\w-]*)*\b")
_LIST_GAP = re.compile(r"^(?:\s*(?:,|and|or|&)\s*|\s+)+$", re.IGNORECASE)
_NOT_NAMES = frozenset({"I", "A", "An", "The", "If", "When", "It", "This", "You", "Your", "We"})


def swap_entities(sentence: str, others: Sequence[str], rng: random.Random) -> Edit | None:
    """Two names or binding terms of the sentence swapped ("per month ... per year" -> "per
    year ... per month"), else one replaced by another of the block's ("The Free plan costs
    $8" where $8 is the Pro plan's)."""
    mine = _entities(sentence, others)
    within = [
        (a, b)
        for i, a in enumerate(mine)
        for b in mine[i + 1 :]
        if a[2] == b[2]
        and a[3].lower() != b[3].lower()
        # "Free, Pro and Team": a list, in any order
        and not _LIST_GAP.match(_NAME_RUN.sub(" ", sentence[a[1] : b[0]]))
    ]
    if within:
        alike = [
            (a, b)
            for a, b in within
            if any(
                _followed(o, a[3], w) and _followed(o, b[3], w)
                for o in others
                for w in {_next_word(o, o.find(a[3]) + len(a[3]))}
                if a[3] in o
            )
        ]
        (a0, a1, _, a), (b0, b1, _, b) = rng.choice(alike or within)
        into_a, into_b = _instead(a, b), _instead(b, a)
        text = sentence[:a0] + into_a + sentence[a1:b0] + into_b + sentence[b1:]
        return Edit(text, "within", (a0, a0 + len(into_a)), a)
    options: list[tuple[tuple[int, int, str, str], str]] = []
    pool = [e for other in others if other != sentence for e in _entities(other, others)]
    for start, end, group, word in mine:
        if group.startswith("binding"):
            index, base = _BOUND[word.lower()]
            plural = word.lower() != base
            for other in BINDING[index]:
                if other != base:
                    options.append(((start, end, group, word), other + ("s" if plural else "")))
            continue
        after = _next_word(sentence, end)
        names = sorted({e[3] for e in pool if e[2] == group and e[3] != word})
        near = [n for n in names if any(_followed(o, n, after) for o in others)]
        options += [((start, end, group, word), name) for name in near or names]
    if not options:
        return None
    (start, end, _, word), new = rng.choice(options)
    new = _case(word, new)
    text = sentence[:start] + new + sentence[end:]
    return Edit(text, "across", (start, start + len(new)), word)


def _entities(sentence: str, block: Sequence[str]) -> list[tuple[int, int, str, str]]:
    """(start, end, group, words): binding terms, and names: runs of capitalised words
    ("Central European Time"), acronyms ("SAML", "GB") apart; a sentence's first word only
    when the block has it mid-sentence too."""
    out = [
        (m.start(), m.end(), f"binding{_BOUND[m.group().lower()][0]}", m.group())
        for m in _BINDING_RE.finditer(sentence)
    ]
    taken = {m[0] for m in out}
    for match in _NAME_RUN.finditer(sentence):
        words = match.group()
        if match.start() in taken or words in _NOT_NAMES or len(words) < 2:
            continue
        first = match.start() == 0 or sentence[: match.start()].rstrip().endswith((".", ":"))
        mid = re.compile(rf"(?:[,;:(]|\b[a-z][\w'-]*) {re.escape(words)}\b(?! [A-Z])")
        if first and not any(mid.search(s) for s in block):
            continue
        group = "acronym" if words.isupper() and " " not in words else "name"
        out.append((match.start(), match.end(), group, words))
    return sorted(out)


def _instead(slot: str, other: str) -> str:
    """`other` written in `slot`'s place: a binding term keeps the slot's number and case."""
    if slot.lower() in _BOUND and other.lower() in _BOUND:
        base = _BOUND[other.lower()][1]
        return _case(slot, base + ("s" if slot.lower() != _BOUND[slot.lower()][1] else ""))
    return _case(slot, other)


def _followed(text: str, name: str, word: str) -> bool:
    """Whether `name` stands before `word` somewhere in `text` ("Pro plan", "Team plan")."""
    return bool(word) and re.search(rf"\b{re.escape(name)}\W+{re.escape(word)}\b", text) is not None


def _next_word(text: str, end: int) -> str:
    match = _WORD.search(text, end)
    return match.group().lower() if match else ""


# -- any of them --------------------------------------------------------------------------------


def falsify(
    sentence: str, others: Sequence[str], rng: random.Random, *, visible: bool = False
) -> tuple[str, Edit] | None:
    """One of the three edits that applies (tried in a random order), with its name; with
    `visible`, only edits whose new words can be shown (not a deletion)."""
    makers: list[tuple[str, Callable[[], Edit | None]]] = [
        ("negate", partial(negate, sentence, rng)),
        ("swap_numbers", partial(swap_numbers, sentence, others, rng)),
        ("swap_entities", partial(swap_entities, sentence, others, rng)),
    ]
    rng.shuffle(makers)
    for name, make in makers:
        edit = make()
        if edit is None or not novel(edit.text, others):
            continue
        if visible and edit.span[0] == edit.span[1]:
            continue
        return name, edit
    return None
