"""Rewording for `stream-rag fake-llm`: a faithful sentence said the way a model might say it
(synonyms, a fronted phrase, active to passive; numbers untouched), and a faithful sentence
with an unsupported clause added. Deterministic for a given `random.Random`.
"""

from __future__ import annotations

import random
import re

__all__ = ["add_claim", "paraphrase"]

# A small thesaurus of words common in help-centre and policy text. Every entry keeps the
# meaning; the gate knows none of it (it matches stems and lemmas, then embeddings).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "available": ("offered", "provided"),
    "customers": ("clients", "users"),
    "customer": ("client", "user"),
    "typical": ("usual", "normal"),
    "response": ("reply", "answer"),
    "dedicated": ("personal", "assigned"),
    "also": ("additionally", "as well"),
    "include": ("add", "mention"),
    "get": ("receive", "obtain"),
    "gets": ("receives", "obtains"),
    "use": ("run", "employ"),
    "deleted": ("removed", "erased"),
    "delete": ("remove", "erase"),
    "stored": ("kept", "held"),
    "begin": ("start", "commence"),
    "starts": ("begins", "commences"),
    "permanently": ("for good", "irreversibly"),
    "automatically": ("by itself", "without user action"),
    "costs": ("is priced at", "is charged at"),
    "quickly": ("fast", "rapidly"),
    "large": ("big", "sizeable"),
    "small": ("little", "minor"),
    "shows": ("displays", "presents"),
    "show": ("display", "present"),
    "receive": ("get", "obtain"),
    "allows": ("lets", "permits"),
    "allow": ("let", "permit"),
    "needs": ("requires", "must have"),
    "need": ("require", "must have"),
    "choose": ("pick", "select"),
    "select": ("choose", "pick"),
    "contacting": ("reaching", "getting in touch with"),
    "export": ("download", "save out"),
    "issued": ("paid out", "granted"),
    "returned": ("paid back", "given back"),
    "keeps": ("retains", "holds"),
    "encrypted": ("enciphered", "protected by encryption"),
    "devices": ("machines", "gadgets"),
    "device": ("machine", "gadget"),
    "delivered": ("sent", "provided"),
    "emailed": ("mailed", "sent by email"),
    "expires": ("lapses", "runs out"),
    "keep": ("retain", "preserve"),
    "adds": ("brings", "includes"),
    "cancelled": ("ended", "terminated"),
    "gives": ("provides", "grants"),
    "enabled": ("turned on", "activated"),
    "supports": ("works with", "accepts"),
    "stores": ("keeps", "holds"),
    "shown": ("displayed", "listed"),
    "means": ("indicates", "signals"),
    "see": ("view", "read"),
    "named": ("labelled", "called"),
    "merge": ("combine", "join"),
    "linked": ("connected", "attached"),
    "unused": ("idle", "spare"),
    "import": ("bring in", "load"),
    "click": ("press", "tap"),
    "current": ("present", "ongoing"),
    "shared": ("collaborative", "common"),
    "removing": ("dropping", "taking away"),
}
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_DIGITS = re.compile(r"\d+(?:[.,:]\d+)*")
_PREPOSITIONS = ("within", "after", "before", "during", "for", "until")
_DETERMINERS = ("the", "a", "an", "your", "our", "their", "its", "all", "every", "each", "this")
_PP_HEADS = frozenset({"of", "for", "within", "in", "on", "at", "with", "to", "from", "by"})
_NOT_PASSIVE = frozenset({"be", "have", "get", "do", "can", "will", "may", "must", "need"})


def paraphrase(sentence: str, rng: random.Random) -> str:
    """`sentence` reworded: one structural change where one applies, then up to two
    synonyms. Numbers, dates and the sentence's claim stay as they were."""
    text = sentence.strip()
    structural = [_to_passive, _front_phrase]
    rng.shuffle(structural)
    for change in structural:
        changed = change(text)
        if changed is not None and _DIGITS.findall(changed) == _DIGITS.findall(text):
            text = changed
            break
    return _synonyms(text, rng, 2)


def add_claim(sentence: str, rng: random.Random) -> str:
    """`sentence` with a clause no source supports (no numbers, so only its words can give
    it away)."""
    clause = " ".join(
        (rng.choice(_CLAIM_SUBJECTS), rng.choice(_CLAIM_VERBS), rng.choice(_CLAIM_OBJECTS))
    )
    body = sentence.rstrip().rstrip(".!?")
    return f"{body}, and {clause}."


_CLAIM_SUBJECTS = (
    "the company",
    "the founders",
    "an independent auditor",
    "the regional office in Lisbon",
    "the partner network",
    "the marketing department",
)
_CLAIM_VERBS = (
    "also guarantees",
    "was recently praised for",
    "plans to introduce",
    "has quietly discontinued",
    "is negotiating",
    "openly criticised",
)
_CLAIM_OBJECTS = (
    "lifetime hardware insurance for every household",
    "a loyalty scheme with airline miles",
    "weekend concierge visits at home",
    "carbon-neutral shipping of printed notebooks",
    "a charity partnership with wildlife reserves",
    "exclusive festival tickets for subscribers",
)


def _synonyms(text: str, rng: random.Random, most: int) -> str:
    # Lowercase words only (a capitalised one mid-sentence is a name or a menu label), and
    # none inside an address or a path.
    candidates = [
        m
        for m in _WORD.finditer(text)
        if m.group().lower() in SYNONYMS
        and (m.group().islower() or m.start() == 0)
        and not _glued(text, m.start(), m.end())
    ]
    chosen = sorted(rng.sample(candidates, min(most, len(candidates))), key=lambda m: m.start())
    out, pos = [], 0
    for match in chosen:
        word = match.group()
        replacement = rng.choice(SYNONYMS[word.lower()])
        if word[0].isupper():
            replacement = replacement[0].upper() + replacement[1:]
        out += [text[pos : match.start()], replacement]
        pos = match.end()
    return "".join(out) + text[pos:]


def _glued(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return (
        before in "@./_-"
        or after in "@/_-"
        or (after == "." and end + 1 < len(text) and not text[end + 1].isspace())
    )


def _front_phrase(text: str) -> str | None:
    """ "X within 30 days." -> "Within 30 days, x." (a trailing phrase of 2 to 6 words, in a
    sentence with no commas or lists, whose phrase could belong to a list item)."""
    body, end = text.rstrip(".!?"), text[len(text.rstrip(".!?")) :] or "."
    if any(mark in body for mark in (",", ";", ":", " and ", " or ", "\n")):
        return None
    words = body.split(" ")
    for i in range(len(words) - 2, max(1, len(words) - 7), -1):
        if words[i].lower() in _PREPOSITIONS:
            phrase, main = " ".join(words[i:]), " ".join(words[:i])
            return f"{phrase[0].upper()}{phrase[1:]}, {_lower_first(main)}{end}"
    return None


def _to_passive(text: str) -> str | None:
    """ "The team reviews every request." -> "Every request is reviewed by the team."."""
    match = re.fullmatch(
        r"(?P<subj>(?:[A-Z]\w*\s)?[\w-]+(?:\s[\w-]+)?)\s(?P<verb>[a-z]+)\s"
        r"(?P<obj>(?:" + "|".join(_DETERMINERS) + r")\s[^,.;]+?)(?P<rest>[,.;].*|)",
        text.strip(),
    )
    if match is None:
        return None
    import lemminflect

    verb = match["verb"]
    lemmas = lemminflect.getAllLemmas(verb, upos="VERB").get("VERB", ())
    if not lemmas or lemmas[0] in _NOT_PASSIVE or (verb == lemmas[0] and verb.endswith("s")):
        return None
    past = verb.endswith("ed") or verb in lemminflect.getInflection(lemmas[0], tag="VBD")
    if not (past or verb.endswith("s")):
        return None  # "users export ..." is plural; leave agreement puzzles alone
    participle = lemminflect.getInflection(lemmas[0], tag="VBN")
    if not participle:
        return None
    # The object's noun phrase ends at its first preposition; what follows stays at the end.
    words = match["obj"].split()
    cut = next((i for i, w in enumerate(words) if i and w in _PP_HEADS), len(words))
    noun_phrase, trailing = " ".join(words[:cut]), " ".join(words[cut:])
    head = words[cut - 1]
    plural = head.endswith("s") and not head.endswith("ss")
    aux = ("were" if plural else "was") if past else ("are" if plural else "is")
    rest = match["rest"] or "."
    subj = _lower_first(match["subj"])
    tail = f" {trailing}" if trailing else ""
    return f"{noun_phrase[0].upper()}{noun_phrase[1:]} {aux} {participle[0]} by {subj}{tail}{rest}"


def _lower_first(text: str) -> str:
    """Lowercase the first word unless it looks like a name (no dictionary lemma)."""
    import lemminflect

    first = text.split(" ", 1)[0]
    common = first.lower() in _DETERMINERS or bool(lemminflect.getAllLemmas(first.lower()))
    return text[0].lower() + text[1:] if common and first[1:].islower() else text
