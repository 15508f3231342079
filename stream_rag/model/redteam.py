"""More hostile knobs: the red team's families of false sentences, each built from a block's own
sentence by a general edit of English (not any knowledge base's words), each with faithful
restatements recorded true as its controls, which the gate must still show.

Word families here (`wording`), number families in redteam_knobs.py. Every family returns its
options for a sentence; `red_team` picks a false one, or a control one time in four.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .edits import novel
from .falsify import falsify, negate

__all__ = ["Option", "Scene", "case_as", "lower_first", "sub_at", "wording"]


@dataclass(frozen=True, slots=True)
class Scene:
    """The sentence to edit, its block (number `n`, sentences `own`), the issued blocks."""

    n: int
    sentence: str
    own: Sequence[str]
    blocks: Mapping[int, str]
    rng: random.Random


@dataclass(frozen=True, slots=True)
class Option:
    """One edit: its text (markers inside it when `cites` is given), whether it is false."""

    variant: str
    text: str
    false: bool
    cites: tuple[int, ...] = ()
    false_cleaned: bool | None = None  # None: as `false`


Family = Callable[[Scene], list[Option]]


def case_as(like: str, word: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    return word[0].upper() + word[1:] if like[:1].isupper() else word


def lower_first(text: str) -> str:
    """The first word lowercased unless it is a name ("Pro and Team ...") or an acronym."""
    first, _, rest = text.partition(" ")
    name = (len(first) > 1 and not first[1:].islower()) or (
        rest[:1].isupper() and first.lower() not in _OPENERS
    )
    return text[0].lower() + text[1:] if first[:1].isupper() and not name else text


_OPENERS = frozenset("the a an it its this these their your our you if when".split())


def sub_at(text: str, match: re.Match[str], new: str) -> str:
    return text[: match.start()] + case_as(match.group(), new) + text[match.end() :]


def _body(sentence: str) -> str:
    return sentence.rstrip().rstrip(".!?")


def _swaps(
    sentence: str, table: Mapping[str, Sequence[str]], variant: str, *, false: bool
) -> list[Option]:
    """Each word or phrase of `table` found in `sentence` replaced by each of its entries."""
    pattern = re.compile(
        r"\b(" + "|".join(re.escape(k) for k in sorted(table, key=len, reverse=True)) + r")\b",
        re.IGNORECASE,
    )
    out = []
    for match in pattern.finditer(sentence):
        if match.start() == 0 and match.group()[:1].isupper() and variant == "antonym":
            continue  # a capitalised first word may be a name ("Open Sync")
        for new in table[match.group().lower()]:
            out.append(Option(variant, sub_at(sentence, match, new), false))
    return out


def _pairs(text: str) -> dict[str, list[str]]:
    """ "a b|c d" -> {a: [b], b: [a], c: [d], d: [c]} (phrases joined by "_")."""
    out: dict[str, list[str]] = {}
    for pair in re.split(r"[|\n]", text):
        if pair.strip():
            a, b = (w.replace("_", " ") for w in pair.split())
            out.setdefault(a, []).append(b)
            out.setdefault(b, []).append(a)
    return out


# -- bounds: comparatives, limits, before/after -------------------------------------------------

_BOUNDS = _pairs(
    """more_than less_than|fewer_than more_than|at_least at_most|up_to at_least
    or_more or_less|minimum maximum|earliest latest|longer_than shorter_than
    higher_than lower_than|above below|exceeds is_below|before after|within after
    no_later_than no_earlier_than"""
)
_BOUND_SAME = {
    "more than": ["over"],
    "at least": ["a minimum of"],
    "up to": ["at most"],
    "less than": ["under"],
    "before": ["prior to"],
    "within": ["inside"],
}


def bound_flip(scene: Scene) -> list[Option]:
    out = _swaps(scene.sentence, _BOUNDS, "bound", false=True)
    # Prepositions that bound only before a number ("over 30", "from 9 am"; not "from Notion").
    flips = {"over": "under", "under": "over", "from": "until", "until": "from", "since": "until"}
    for match in re.finditer(r"\b(over|under|from|until|since)(?= \$?\d)", scene.sentence, re.I):
        new = flips[match.group().lower()]
        out.append(Option("bound", sub_at(scene.sentence, match, new), True))
    return out + _swaps(scene.sentence, _BOUND_SAME, "control_bound", false=False)


# -- quantifiers and frequency ------------------------------------------------------------------

_QUANT_FALSE = {
    "some": ["all"],
    "many": ["all"],
    "several": ["all"],
    "most": ["all"],
    "usually": ["always"],
    "often": ["always"],
    "typically": ["always"],
    "generally": ["always"],
    "normally": ["always"],
    "sometimes": ["always"],
    "mostly": ["always"],
    "all": ["no"],
    "every": ["no"],
    "always": ["rarely"],
    "any": ["no"],
    "each": ["no"],
}
_QUANT_SAME = {
    "every": ["each"],
    "each": ["every"],
    "usually": ["typically"],
    "often": ["frequently"],
}


def quantifier(scene: Scene) -> list[Option]:
    s = scene.sentence
    out = _swaps(s, _QUANT_FALSE, "quantifier", false=True)
    # "all" before a plural noun stays grammatical as "no"; an "all" of "at all" does not.
    out = [o for o in out if not re.search(r"\bat no\b|\bno of\b|\bno the\b", o.text, re.I)]
    return out + _swaps(s, _QUANT_SAME, "control_quantifier", false=False)


# -- modals -------------------------------------------------------------------------------------

_MODAL_FALSE = {
    "can": ["must"],
    "may": ["must"],
    "might": ["must"],
    "could": ["must"],
    "must": ["may"],
    "will": ["may"],
    "has to": ["may"],
    "have to": ["may"],
    "is required to": ["may"],
    "are required to": ["may"],
    "cannot": ["need not"],
    "can't": ["need not"],
    "must not": ["need not"],
    "should": ["need not"],
}


def modal_flip(scene: Scene) -> list[Option]:
    s = scene.sentence
    # "May" opening a sentence or before a day is a month; "can" before "not" is handled whole.
    out = [
        o
        for o in _swaps(s, _MODAL_FALSE, "modal", false=True)
        if not re.search(r"\bmust not not\b|\bmay not not\b", o.text)
    ]
    out = [o for o in out if not o.text.startswith(("Must ", "May ", "Need not "))]
    for match in re.finditer(r"\b(you|we|they|users|members|customers)\s+(must|can)\b", s, re.I):
        verb = "have to" if match.group(2).lower() == "must" else "are able to"
        text = s[: match.start(2)] + verb + s[match.end(2) :]
        out.append(Option("control_modal", text, False))
    return out


# -- antonyms (a list of the red team's own, apart from the gate's) ---------------------------

_ANTONYMS = _pairs(
    """with without|allowed prohibited|permitted forbidden|increase decrease|increases decreases
    increased decreased|higher lower|earliest latest|include omit|includes omits|enabled disabled
    enable disable|possible impossible|mandatory voluntary|permanent temporary
    permanently temporarily|visible hidden|online offline|upgrade downgrade|paid unpaid
    eligible ineligible|complete incomplete|same different|fixed variable|encrypted unencrypted
    internal external|manual automatic|manually automatically|full partial|starts ends
    opens closes|import export|accept decline|accepts declines|lowest highest|faster slower
    shorter longer|added removed|adds removes|keep delete|keeps deletes|retained deleted
    active inactive|valid invalid|private public|unlimited limited|refundable non-refundable
    transferable non-transferable|grant revoke|granted revoked|approved rejected|allows blocks
    succeeds fails|inclusive exclusive|cheaper dearer|gain lose|arrive depart|arrives departs
    open closed|on off|in out|required optional|supported unsupported|available unavailable"""
)
_SYNONYMS = {
    "allowed": ["permitted"],
    "prohibited": ["forbidden"],
    "begins": ["starts"],
    "purchase": ["buy"],
    "receive": ["get"],
    "requires": ["needs"],
    "large": ["big"],
    "quickly": ["fast"],
    "help": ["assist"],
    "choose": ["select"],
}


def antonym_swap(scene: Scene) -> list[Option]:
    s = scene.sentence
    table = {k: v for k, v in _ANTONYMS.items() if k not in ("on", "off", "in", "out")}
    out = _swaps(s, table, "antonym", false=True)
    # Particles flip only after a verb ("switched on", "opted out"), not "on Monday".
    for match in re.finditer(r"(?<=[a-z]ed )(on|off|in|out)\b(?! (?:the|a|an|[A-Z0-9]))", s):
        out.append(Option("antonym", sub_at(s, match, _ANTONYMS[match.group()][0]), True))
    return out + _swaps(s, _SYNONYMS, "control_synonym", false=False)


# -- conditions dropped -------------------------------------------------------------------------

_CONDITION = re.compile(
    r",?\s+(?:only\s+)?(?:if|unless|except(?:\s+for|\s+when|\s+that)?|provided(?:\s+that)?"
    r"|as long as|so long as|only when|only for|only after|only with|only within|but only)"
    r"\b[^.;!?]*?(?=[.;!?]?\s*$)",
    re.IGNORECASE,
)
_LEADING_IF = re.compile(r"^(If|Unless|Provided|As long as|Except)\b([^,]{3,}),\s+(.+)$", re.I)


def drop_condition(scene: Scene) -> list[Option]:
    """A condition taken off ("Refunds are given within 14 days if unused" -> "Refunds are given
    within 14 days"): a conditional claim made absolute. Control: the condition moved."""
    s = scene.sentence.rstrip()
    out = []
    for match in _CONDITION.finditer(s):
        kept = s[: match.start()].rstrip(" ,")
        if len(kept.split()) >= 3:
            out.append(Option("condition", kept + ".", True))
            clause = match.group().strip(" ,").rstrip(".")
            if clause.split()[0].lower() in ("if", "unless"):
                control = f"{clause[0].upper()}{clause[1:]}, {lower_first(kept)}."
                out.append(Option("control_condition", control, False))
    if (lead := _LEADING_IF.match(s)) is not None and len(lead.group(3).split()) >= 4:
        rest = lead.group(3)
        out.append(Option("condition", rest[0].upper() + rest[1:], True))
        moved = f"{_body(rest)} {lead.group(1).lower()}{lead.group(2)}."
        out.append(Option("control_condition", moved, False))
    return out


# -- framings: notes, questions, double negation, "not only" ------------------------------------

_FRAMES = ("Note that {}.", "Keep in mind that {}.", "Remember: {}.", "In short, {}.")
_ASKED = ("Did you know that {}?", "Why is it that {}?")


def restate(scene: Scene) -> list[Option]:
    """A false claim framed as a note, an imperative or a question; the same frames around the
    true sentence are controls."""
    made = falsify(scene.sentence, scene.own, scene.rng, visible=True)
    true = lower_first(_body(scene.sentence))
    out = [Option("control_frame", scene.rng.choice(_FRAMES).format(true), False)]
    if made is not None:
        false = lower_first(_body(made[1].text))
        out.append(Option("frame", scene.rng.choice(_FRAMES).format(false), True))
        out.append(Option("question", scene.rng.choice(_ASKED).format(false), True))
    return out


def double_negation(scene: Scene) -> list[Option]:
    """ "It is not true that" before a sentence flips it: false before a true one, true (a
    control) before the sentence negated; "not un-" as a control."""
    s = lower_first(_body(scene.sentence))
    frame = scene.rng.choice(("It is not true that {}.", "It is not the case that {}."))
    out = [Option("not_true", frame.format(s), True)]
    flipped = negate(scene.sentence, scene.rng)
    if flipped is not None and flipped.variant in ("add_not", "drop_negation"):
        out.append(Option("control_double", frame.format(lower_first(_body(flipped.text))), False))
    for match in re.finditer(r"\b(is|are)\s+(available|possible|limited|valid|likely)\b", s):
        text = f"{match.group(1)} not {_PREFIX[match.group(2)]}{match.group(2)}"
        control = scene.sentence.replace(match.group(), text, 1)
        if control != scene.sentence:
            out.append(Option("control_not_un", control, False))
    return out


_PREFIX = {"available": "un", "possible": "im", "limited": "un", "valid": "in", "likely": "un"}

_LIST_PAIR = re.compile(r"\b([A-Z][\w-]*) and ([A-Z][\w-]*)(?= [a-z])")
_CAPITAL = re.compile(r"(?<=[a-z,] )[A-Z][a-z]+\b")
_ONLY = re.compile(r"\bonly\b", re.IGNORECASE)


def not_only(scene: Scene) -> list[Option]:
    """ "only A" -> "not only A", "A and B" -> "not only A but also C" (C another name of the
    block), both false; "A and B" -> "not only A but also B" (a control)."""
    s = scene.sentence
    out = [Option("not_only", sub_at(s, m, "not only"), True) for m in _ONLY.finditer(s)]
    out = [o for o in out if "not not" not in o.text]
    block = " ".join(scene.own)
    for match in _LIST_PAIR.finditer(s):
        a, b = match.group(1), match.group(2)
        head = "Not only" if match.start() == 0 else "not only"
        text = s[: match.start()] + f"{head} {a} but also {b}" + s[match.end() :]
        out.append(Option("control_not_only", text, False))
        others = sorted(set(_CAPITAL.findall(block)) - set(_CAPITAL.findall(s)) - {a, b})
        if others:
            c = scene.rng.choice(others)
            text = s[: match.start()] + f"{head} {a} but also {c}" + s[match.end() :]
            out.append(Option("not_only_other", text, True))
    return out


# -- exaggeration -------------------------------------------------------------------------------

_STRONG = ("instantly", "permanently", "automatically", "always", "completely")
_AUX_VERB = re.compile(r"\b(is|are|can|will|be)\s+(?=[a-z]+(?:ed|en)\b)")
_ARTICLE_NOUN = re.compile(r"\b(a|an|the|your)\s+(?=[a-z]{4,}\b)")
_AMOUNT = re.compile(r"(?:\$|€|£)?\d[\d,.]*\s*(?:GB|MB|TB|users?|seats?|devices?|projects?)\b")


def exaggerate(scene: Scene) -> list[Option]:
    """A word of excess put in: "free", "unlimited", "instantly", "lifetime"."""
    s, rng = scene.sentence, scene.rng
    out = []
    for match in _AUX_VERB.finditer(s):
        word = rng.choice(_STRONG)
        if word not in s.lower():
            out.append(Option("adverb", f"{s[: match.end()]}{word} {s[match.end() :]}", True))
    for match in _ARTICLE_NOUN.finditer(s):
        word = rng.choice(("free", "unlimited", "lifetime"))
        if word not in s.lower() and match.start() > 0:
            article = match.group(1)
            if article.lower() in ("a", "an"):
                article = "an" if word[0] in "aeiou" else "a"
            text = f"{s[: match.start()]}{article} {word} {s[match.end() :]}"
            out.append(Option("adjective", text, True))
    for match in _AMOUNT.finditer(s):
        unit = match.group().split()[-1].lstrip("$€£0123456789.,")
        out.append(
            Option("unlimited", f"{s[: match.start()]}unlimited {unit}{s[match.end() :]}", True)
        )
    if s[:1].isupper():
        out.append(Option("control_also", f"Also, {lower_first(s)}", False))
    return out


# -- the knobs ----------------------------------------------------------------------------------


def wording() -> dict[str, Family]:
    return {
        "bound_flip": bound_flip,
        "quantifier": quantifier,
        "modal_flip": modal_flip,
        "antonym_swap": antonym_swap,
        "drop_condition": drop_condition,
        "restate": restate,
        "double_negation": double_negation,
        "not_only": not_only,
        "exaggerate": exaggerate,
    }


def options_for(family: Family, scene: Scene) -> list[Option]:
    """The family's options that change the sentence; a false one must be no block sentence."""
    return [
        o
        for o in family(scene)
        if " ".join(o.text.split()) != " ".join(scene.sentence.split())
        and (not o.false or novel(o.text, scene.own))
    ]
