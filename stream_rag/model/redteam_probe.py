"""The red team's third round: false sentences that keep nearly every word of the cited block
and change what one part of a sentence is said of. Each is a general edit of English built
from the block's own sentences (another sentence's subject, list item, qualifier), or from an
issued block the sentence does not cite, never from any knowledge base's words.

- `predicate_join`: one sentence's subject joined to another sentence's predicate
- `list_extend`: a list with an item that another sentence of the block mentions
- `novel_word`: a modifier swapped for a word of the same class no cited block uses
- `qualifier`: a phrase of time, group or place appended or fronted ("on weekends")
- `scope_widen`: the subject made universal ("Everyone gets", "All members get")
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..text import STOP_WORDS
from .paraphrase import SYNONYMS
from .redteam import Option, Scene, lower_first

__all__ = ["PROBE", "list_extend", "novel_word", "predicate_join", "qualifier", "scope_widen"]

_AUX = frozenset(
    "is are was were can could will would should must may might has have had does do did "
    "cannot".split()
)
_DETERMINERS = frozenset("the a an this that these those its their our your each every any".split())
_SKIP = frozenset(
    "the a an and or of to for in on at by with from if when to as not no it its this that "
    "there these those you your we our they their".split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


@lru_cache(maxsize=8192)
def _lemmas(word: str) -> dict[str, tuple[str, ...]]:
    import lemminflect

    return dict(lemminflect.getAllLemmas(word.lower()))


def _verb_form(word: str, tag: str) -> bool:
    import lemminflect

    for lemma in _lemmas(word).get("VERB", ()):
        if word.lower() in lemminflect.getInflection(lemma, tag=tag):
            return True
    return False


def _split(sentence: str) -> tuple[str, str] | None:
    """(subject, predicate) of a plain sentence: the subject is the words before its first
    finite verb (an auxiliary, a third-person -s form, or a plural's verb), one to six words
    with no comma, opening with no preposition or conjunction."""
    words = list(_WORD.finditer(sentence))
    if not words or words[0].group().lower() in _SKIP - _DETERMINERS - {"you", "we", "they"}:
        return None
    for i, match in enumerate(words[1:7], start=1):
        word, before = match.group(), words[i - 1].group()
        if word[:1].isupper() or before.lower() in _DETERMINERS:
            continue
        plural = before.endswith("s") and not before.endswith("ss")
        after = words[i + 1].group() if i + 1 < len(words) else ""
        # "notes keep": a plural noun before its verb, not a verb itself
        noun_before_verb = "NOUN" in _lemmas(word) and (
            after.lower() in _AUX or _verb_form(after, "VBP")
        )
        finite = word.lower() in _AUX or (
            not noun_before_verb
            and (
                (_verb_form(word, "VBZ") and not plural)
                or (plural and _verb_form(word, "VBP") and not word.endswith("s"))
            )
        )
        if finite:
            subject = sentence[: match.start()].strip()
            if "," in subject or ":" in subject:
                return None
            return subject, sentence[match.start() :]
    return None


def _content(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if w.lower() not in _SKIP}


def _plural(subject: str) -> bool:
    last = subject.split()[-1]
    return " and " in subject or (last.endswith("s") and not last.endswith(("ss", "us", "is")))


_SINGULAR = frozenset("is was has does".split())
_PLURAL = frozenset("are were have do".split())


def _number(predicate: str) -> str:
    """ "one", "many" or "any": the number its verb agrees with ("costs", "are", "can")."""
    verb = predicate.split(" ", 1)[0].lower()
    if verb in _SINGULAR or (verb not in _AUX and _verb_form(verb, "VBZ")):
        return "one"
    return "many" if verb in _PLURAL or verb not in _AUX else "any"


def _verbal(phrase: str) -> bool:
    """Whether a phrase opens with a verb ("choose Export", "delivered as ..."): no noun item."""
    first = phrase.split(" ", 1)[0].lower()
    lemmas = _lemmas(first)
    if first in _AUX or first == "not" or _verb_form(first, "VBZ") or _verb_form(first, "VBD"):
        return True
    return "VERB" in lemmas and "NOUN" not in lemmas and "ADJ" not in lemmas


def predicate_join(scene: Scene) -> list[Option]:
    """ "The Basic membership costs €79 per month" from "The Basic membership costs €29 ..."
    and "The Elite membership costs €79 ...": a subject of one sentence, another's predicate."""
    mine = _split(scene.sentence)
    if mine is None:
        return []
    subject, predicate = mine
    words = _content(subject)
    out = []
    for other in scene.own:
        theirs = _split(other) if other != scene.sentence else None
        if theirs is None or not words or words <= _content(theirs[0]):
            continue
        if not _content(theirs[0]) or _content(theirs[0]) <= words:
            continue
        if "any" not in (a := _number(predicate), b := _number(theirs[1])) and a != b:
            continue
        out.append(Option("join", f"{subject} {theirs[1]}", True))
    if out and scene.sentence[:1].isupper():
        out.append(Option("control_also", f"Also, {lower_first(scene.sentence)}", False))
    return out


_LIST = re.compile(r"(?P<head>.*\S)(?P<sep>,? and | or )(?P<last>[^,;:]+?)(?P<end>[.!?]?)\s*$")


_LEAD = re.compile(r"(?:from|to|for|in|on|at|with|by|via|as)\b", re.IGNORECASE)


def _items(sentence: str) -> list[str]:
    """The items of the list a sentence ends with, or of its object ("adds group classes")."""
    match = _LIST.match(sentence.rstrip())
    if match is not None:
        head = re.split(r", ", match.group("head"))
        first = _split(head[0] + ".")
        if first is not None:
            head[0] = first[1].split(" ", 1)[-1].rstrip(".")
        else:
            head[0] = re.sub(r"^(?:It|They|This|You|We)\s+\S+\s+", "", head[0])
        items = [i.strip(" ,") for i in (*head, match.group("last"))]
        return [i for i in items if 1 <= len(i.split()) <= 6 and not _verbal(i)]
    split = _split(sentence)
    if split is None:
        return []
    rest = split[1].split(" ", 1)[-1].rstrip(" .!?,")
    return [rest] if 1 <= len(rest.split()) <= 5 and "," not in rest and not _verbal(rest) else []


def list_extend(scene: Scene) -> list[Option]:
    """A list the sentence ends with, extended by an item another sentence of the block names
    ("Plus adds group classes, the sauna and 4 personal training sessions"); control: two of
    its items in the other order."""
    s = scene.sentence.rstrip()
    match = _LIST.match(s)
    if match is None or len(match.group("last").split()) > 6 or _verbal(match.group("last")):
        return []
    if match.group("head").endswith(","):
        return []
    lead = _LEAD.match(match.group("last"))
    out = []
    lowered = s.lower()
    for other in scene.own:
        if other == scene.sentence:
            continue
        for item in _items(other):
            if item.lower() in lowered or not _content(item) - _content(s):
                continue
            item_lead = _LEAD.match(item)
            if (lead and lead.group()) != (item_lead and item_lead.group()):
                continue  # "from OneNote" joins a list of "from ..." only
            item = lower_first(item)
            text = f"{match.group('head')}, {match.group('last')}{match.group('sep')}{item}"
            out.append(Option("item", text + (match.group("end") or "."), True))
    head = match.group("head")
    cut = head.rfind(", ")
    if cut < 0 and (split := _split(head + ".")) is not None:
        verb, _, first = split[1].partition(" ")
        before, first = f"{split[0]} {verb} ", first.rstrip(".")
    elif cut >= 0:
        before, first = head[: cut + 2], head[cut + 2 :]
    else:
        return out
    if 1 <= len(first.split()) <= 6 and not _verbal(first):
        swapped = f"{before}{match.group('last')}{match.group('sep')}{first}"
        out.append(Option("control_order", swapped + (match.group("end") or "."), False))
    return out


_FUNCTION = frozenset(
    "after before another both same plain once such other every each many much several "
    "within without across along among around".split()
)
# Modifiers a help-centre text might use of anything; used only where no issued block the
# sentence does not cite offers a word of the same class.
_GENERAL = (
    "work personal business home mobile local international premium standard weekly daily "
    "digital printed private shared student family corporate regional"
).split()


def _pos(word: str) -> str | None:
    if word in STOP_WORDS or word in _FUNCTION:
        return None
    lemmas = _lemmas(word)
    if "ADJ" in lemmas and "VERB" not in lemmas:
        return "ADJ"
    if "NOUN" in lemmas and "VERB" not in lemmas and not word.endswith("s"):
        return "NOUN"
    return None


def novel_word(scene: Scene) -> list[Option]:
    """A modifier before a noun ("school email") swapped for a word of its class that no cited
    block uses ("work email"): from an issued block the sentence does not cite, else general."""
    s = scene.sentence
    block = _content(" ".join(scene.own))
    theirs = [
        w
        for m, text in scene.blocks.items()
        if m != scene.n
        for w in sorted(_content(text))
        if w not in block and len(w) > 3
    ]
    words = list(_WORD.finditer(s))
    out = []
    for before, here, after in zip(words, words[1:], words[2:], strict=False):
        word, noun = here.group(), after.group()
        if not word.islower() or word in _SKIP or len(word) < 4 or not noun.islower():
            continue
        kind = _pos(word)
        if kind is None or "NOUN" not in _lemmas(noun) or noun in _SKIP or noun in _AUX:
            continue
        if _verb_form(noun, "VBZ") or before.group().lower() == "per":
            continue  # "membership costs": a subject's head; "per month": a unit
        pool = [w for w in theirs if _pos(w) == kind] or [
            w for w in _GENERAL if w not in block and _pos(w) == kind
        ]
        for new in scene.rng.sample(pool, min(2, len(pool))):
            out.append(Option("word", s[: here.start()] + new + s[here.end() :], True))
    for match in words if out else []:  # a control only beside a false edit, not for it
        same = SYNONYMS.get(match.group())
        if same and " " not in same[0]:
            text = s[: match.start()] + same[0] + s[match.end() :]
            out.append(Option("control_synonym", text, False))
            break
    return out


_PHRASE = re.compile(
    r"\b(?:for|on|in|during|at|after|before|until|with|from|outside|inside)"
    r"(?: (?:the|your|their|its|each|every))?(?: [a-z][a-z-]+){1,3}(?=[,.;]|$)"
)
_GENERAL_QUALIFIERS = (
    "for the first year",
    "on weekends",
    "for new customers",
    "in the first month",
    "outside business hours",
    "on request",
)


def qualifier(scene: Scene) -> list[Option]:
    """A phrase that narrows or moves the claim ("on weekends", "for the first year") put at
    the end or the front: from another sentence of the block where one has such a phrase."""
    s = scene.sentence.rstrip()
    body, end = (s[:-1], s[-1]) if s[-1:] in ".!?" else (s, ".")
    lowered = s.lower()
    found = [
        m.group()
        for other in scene.own
        if other != scene.sentence
        for m in _PHRASE.finditer(other)
        if m.group() not in lowered and _content(m.group()) - _content(s)
    ]
    phrases = list(dict.fromkeys(found)) or [
        q for q in _GENERAL_QUALIFIERS if q not in lowered and not _content(q) <= _content(s)
    ]
    out = []
    own = list(_PHRASE.finditer(body))
    # Only a sentence with one predicate: in "costs $12 and arrives before noon" the phrase
    # fronted would qualify the cost too.
    simple = not re.search(r"\b(?:and|or|but|unless|if|when)\b|,", body)
    if simple and own and own[-1].end() == len(body) and _split(s) is not None:
        head = body[: own[-1].start()].rstrip(" ,")
        phrase = own[-1].group()
        fronted = f"{phrase[0].upper()}{phrase[1:]}, {lower_first(head)}{end}"
        out.append(Option("control_fronted", fronted, False))
    for phrase in scene.rng.sample(phrases, min(3, len(phrases))):
        out.append(Option("appended", f"{body} {phrase}{end}", True))
        if s[:1].isupper() and _split(s) is not None:
            fronted = f"{phrase[0].upper()}{phrase[1:]}, {lower_first(body)}{end}"
            out.append(Option("fronted", fronted, True))
    return out


def _agree(verb: str) -> str | None:
    """The verb of a singular subject for a plural's ("get" -> "gets"), None when unknown."""
    import lemminflect

    low = verb.lower()
    special = {"are": "is", "were": "was", "have": "has", "do": "does"}
    if low in special or low in _AUX:
        return special.get(low, verb)
    lemmas = _lemmas(verb).get("VERB", ())
    forms = lemminflect.getInflection(lemmas[0], tag="VBZ") if lemmas else ()
    return forms[0] if forms else None


def scope_widen(scene: Scene) -> list[Option]:
    """The subject made universal: "Students get" -> "Everyone gets" / "All customers get",
    "The Pro plan includes" -> "Every plan includes"; a claim of some made of all."""
    split = _split(scene.sentence)
    if split is None:
        return []
    subject, predicate = split
    words = subject.split()
    head = words[-1]
    if head.lower() in ("you", "we", "they", "it", "this") or (
        head[:1].isupper() and len(words) > 1
    ):
        return []  # a pronoun, or a name ("Lumen Notes")
    if "NOUN" not in _lemmas(head):
        return []
    verb, _, rest = predicate.partition(" ")
    out = []
    if _plural(subject):
        if (single := _agree(verb)) is not None:
            for everyone in ("Everyone", "Anyone"):
                out.append(Option("everyone", f"{everyone} {single} {rest}", True))
        if len(words) > 1 and head.islower():
            out.append(Option("all", f"All {head} {predicate}", True))
    elif len(words) > 1 and head.islower() and words[0].lower() in ("the", "a", "an", "your"):
        out.append(Option("every", f"Every {head} {predicate}", True))
        out.append(Option("any", f"Any {head} {predicate}", True))
    if len(words) == 1 and _plural(subject):
        out.append(Option("control_article", f"The {head.lower()} {predicate}", False))
    return out


PROBE = {
    "predicate_join": predicate_join,
    "list_extend": list_extend,
    "novel_word": novel_word,
    "qualifier": qualifier,
    "scope_widen": scope_widen,
}
