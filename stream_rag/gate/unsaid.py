"""What a clause adds to the span it restates (issue 27, the red team's third round): a
qualifier the span does not write ("... on weekends", "For the first year, ..."), an item added
to a list, and the span's subject replaced by another statement's ("Imported notes are
delivered as a ZIP archive" where exports are).

Structure only: the clause's words are aligned to the span's in order, and what stands on the
clause's side alone is read by where it stands (after a preposition, in a list, opening the
clause) and whose words it has (the span's, another statement's of a cited block, none).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from difflib import SequenceMatcher

from ..language.wordclass import (
    can_be_verb,
    finite,
    modifier,
    modifier_or_noun,
    nounish,
    plain_noun,
    subject_head,
)
from .coordinated import mixed_parts, modifier_carried, moved_in, predicate_carried
from .roles import roles
from .span_statements import home_statement, numbers_beside, statements_of
from .support import Span, Word
from .swaps import swapped

__all__ = ["unsaid"]

# Prepositions that open a phrase narrowing a claim to a time, a group, a place or a case.
_QUALIFYING = re.compile(
    r"\b(?:for|on|in|during|at|after|before|until|till|with|from|outside|inside|within"
    r"|throughout|by|over|under|via|except|only|per|to|among|across"
    r"|if|when|whenever|unless|once|provided|while)\b",
    re.IGNORECASE,
)
_LISTED = re.compile(r"\b(?:and|or|plus|as well as)\b", re.IGNORECASE)
# A clause must restate its span for its extra words to be an addition: most of its words are
# the span's (else the overlap and the other checks judge a clause of its own).
_RESTATES = 0.5
_CONDITION = re.compile(r"\W*\b(?:if|whenever|unless|provided|as long as)\b", re.I)
# The same word anywhere, for `.search`: the leading "\W*" tried from every character of a
# long run of punctuation read the run to its end each time (quadratic).
_CONDITION_WORD = re.compile(r"\b(?:if|whenever|unless|provided|as long as)\b", re.I)
_WHOLE = 0.8
# What may stand before a subject: articles, determiners, numbers, markup.
_OPENS = re.compile(
    r"(?:\W|\d|\b(?:the|a|an|all|each|every|some|any|these|those|this|that)\b)*", re.I
)
# A clause opening with a universal says its claim of everyone or everything.
_UNIVERSAL = re.compile(
    r"\W*(any|anyone|anybody|anything|every|everyone|everybody|everything|all|each|no one"
    r"|nobody)\b",
    re.IGNORECASE,
)
_COMPOUND_END = re.compile(r"^-\w+")
# "to" of a verb's infinitive ("have to attend"), no preposition joining two phrases.
_INFINITIVE = re.compile(r"\b(?:have|has|had|needs?|ought|able|going|used)\s+to\b", re.I)
# What joins two phrases: punctuation, a preposition, a conjunction or a relative pronoun.
_JOINS = re.compile(
    r"[,;:()]|\b(?:with|and|or|but|which|who|that|where|while|plus|including|for|between|among"
    r"|of|from|to|by|on|in|at)\b",
    re.IGNORECASE,
)
# A preposition that makes what follows it the object of the words before it.
_OBJECT = re.compile(
    r"\W*(?:between|among|of|for|from|with|to|by|on|in|at)\W+"
    r"(?:(?:the|a|an|any|all|every|each|some|both|either|one|two|three|four|five|six|seven"
    r"|eight|nine|ten)\W+)*",
    re.IGNORECASE,
)


def unsaid(
    text: str,
    words: Sequence[Word],
    span: Span,
    cited: Sequence[Span],
    issued: Callable[[], frozenset[str]] | None = None,
) -> str:
    """Why the clause (`text`, its `words`) says more than `span` does ("" if it does not);
    `cited` are the statements of its cited blocks, `issued()` the words of every block."""
    mine = [w for w in words if not w.number]
    theirs = [w for w in span.words if not w.number]
    if len(mine) < 3 or not theirs:
        return ""
    a = [w.key for w in mine]
    # Words the blocks write as names: the name checks' to place, no common noun of a subject.
    named = frozenset(w.key for s in (span, *cited) for w in s.words if w.name)
    if why := _spliced(text, words, (span, *cited), named):
        return why
    # Of a span of two statements, the one the clause restates: its words vouch for an
    # addition, the other's do not ("... at the same time" from the statement after).
    theirs = home_statement(span, theirs, set(a))
    own = frozenset(w.key for w in theirs)  # what "It" names vouches for no list item
    # Restated: most of the clause is the span's, or all of its statement is in the clause
    # (however much the clause adds: "If <another statement>, <this one>").
    share = sum(k in span.keys or k in span.context for k in a) / len(a)
    whole = sum(k in a for k in own) >= _WHOLE * len(own)
    home = own | span.context | {w.key for w in span.words if w.number}
    elsewhere = frozenset().union(span.keys, *(s.keys for s in cited)) - home
    if share < _RESTATES and not whole:
        return ""
    if why := swapped(text, span, cited, issued):
        return why
    if why := roles(text.lower(), span.lowered, span.quantities):
        return why
    if (mixed := mixed_parts(text, words, span)) is not None:
        return f"{mixed[0]!r} is said of another part of the span, in place of {mixed[1]!r}"
    if (took := moved_in(text, words, span)) is not None:
        return f"{took[0]!r} of the span stands in the place of its {took[1]!r}"
    if (carried := predicate_carried(text, words, span, finite)) is not None:
        return f"{carried[0]!r} is said in another clause of the span than {carried[1]!r}"
    if (moved := modifier_carried(text, words, span)) is not None:
        return f"{moved[0]!r} is said of another {moved[1]!r} in the span"
    universal = _UNIVERSAL.match(text)
    said = universal.group(1).lower() if universal is not None else ""
    if said and not re.search(rf"\b{said}\b", span.lowered):
        return f"{said!r} says of all what the span says of some"
    if universal is not None and (why := _all_of_another(universal, words, span)):
        return why
    if why := _restriction_lifted(text.lower(), span.lowered):
        return why
    if why := _groups_reordered(text, span.text):
        return why
    cited_keys = frozenset().union(span.keys, span.context, *(s.keys for s in cited))
    # A word the clause writes more often than its statement does is no word of it moved:
    # "... which does not take them at any price" of "... the 10 kg price ..., which does not
    # take them" says the price again, of what the statement does not.
    spare = Counter(a) - Counter(w.key for w in theirs)
    short = Counter(w.key for w in theirs) - Counter(a)  # what the clause says less often
    matcher = SequenceMatcher(None, a, [w.key for w in theirs], autojunk=False)
    ops = matcher.get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        run = mine[i1:i2]
        if tag == "insert" and i1 == 0 == j1 and j2 < len(theirs) and _rest_equal(ops):
            # The span's opening words left out and the clause opening with what follows a
            # preposition there ("Any two stations ... cost" of "A journey between any two
            # stations ... costs"): the span's object made the subject.
            dropped = theirs[:j2]
            between = span.text[dropped[-1].end : theirs[j2].start]
            nouns = any(plain_noun(_of(span.text, w)) for w in dropped)
            # Not a fragment: "on 2024-05-01 and raised ...", "five business days."
            opens = not _JOINS.search(text[: mine[0].start]) and any(
                finite(_of(text, w).lower()) for w in mine
            )
            if (
                opens
                and nouns
                and _OBJECT.fullmatch(between)
                and not {w.key for w in dropped} & set(a)
            ):
                return f"{_of(text, mine[0])!r} is the object of a preposition in the span"
        if tag not in ("delete", "replace"):
            continue
        gap = text[mine[i1 - 1].end if i1 else 0 : run[0].start]
        phrase = text[run[0].start : run[-1].end]
        if tag == "delete" and i1 and _LISTED.search(gap) and not _ends_part(text, mine[i1 - 1]):
            # An item of words the clause has already said or the span does not write ("...
            # and three plans: Free" of "The Free plan includes ..."): a reordered list moves
            # the span's own items, each written once.
            theirs_keys = [w.key for w in theirs]
            new = [w for w in run if a.count(w.key) > theirs_keys.count(w.key)]
            if 2 * len(new) > len(run):
                return f"{phrase!r} is added to what the span lists"
        if tag == "delete" and i1 == 0 and i2 < len(mine) and _OPENS.fullmatch(gap):
            # Words put before the span's subject that another statement writes ("Deleted
            # notes are encrypted" of "All notes are encrypted" beside "Deleted notes stay in
            # the Trash"): the claim said of what that statement names. Not the span's own
            # ("The Silver pass ... It includes": what "It" names).
            glued = not text[run[-1].end : mine[i2].start].strip()
            other = all(w.key in elsewhere and w.key not in span.keys for w in run)
            if glued and other and all(modifier_or_noun(_of(text, w)) for w in run):
                return f"{phrase!r} narrows the span's subject to another statement's"
        if tag == "delete" and i2 == len(mine) and i1 and _LISTED.search(gap):
            # The clause's last item, of the statement's words, counting what the statement
            # does not ("..., version history for 90 days and version history for 1 year").
            counted = {w.key for w in words if w.number and w.start > mine[i1 - 1].end}
            if counted and j1 and not counted & numbers_beside(span, theirs[j1 - 1]):
                return f"{phrase!r} is added to what the span lists"
        if tag == "replace" and i1 == 0 == j1 and _OPENS.fullmatch(gap):
            # The subject made of a noun the clause writes again where the span does, the
            # span's subject gone ("Refunds are not eligible for a refund").
            later = {w.key for w in mine[i2:]}
            gone = {w.key for w in theirs[j1:j2]} - set(a)
            if gone and all(w.key in later and plain_noun(_of(text, w)) for w in run):
                return f"{phrase!r} is the span's object made its subject"
        if 2 * sum(w.key in own and w.key not in spare for w in run) > len(run):
            continue  # mostly the span's words: written in another order
        if i1 and _LISTED.search(gap) and tag == "delete" and not _ends_part(text, mine[i1 - 1]):
            return f"{phrase!r} is added to what the span lists"
        if 2 * sum(w.key in home and w.key not in spare for w in run) > len(run):
            continue
        if tag == "delete" and all(w.capital for w in run):
            continue  # names (and months) are the name checks' to judge where they qualify
        if tag == "replace" and i2 - i1 == 1 == j2 - j1 and i1 > 0 and i2 < len(mine):
            # One word in the span's word's place between the same words, written by a block
            # the clause does not cite ("work email" for "school email"): a word no cited
            # block has may be a synonym, one another block uses is that block's.
            word, was, head = run[0], theirs[j1], mine[i2]
            # A modifier: the next word, right after it, is the noun it qualifies ("school
            # email"); a head noun ("Team users have") is where synonyms are written.
            modifies = not text[word.end : head.start].strip() and plain_noun(_of(text, head))
            other = modifies and issued is not None and word.key not in cited_keys
            other = other and was.key not in a
            if other and modifier(_of(text, word)) and issued is not None and word.key in issued():
                return f"{phrase!r} of another block stands where the span says {was.key!r}"
        if tag == "replace":
            if i1 or j1 or not _OPENS.fullmatch(gap):
                continue  # not what the clause opens with: "You can download" is no subject
            # The subject: another statement's nouns in place of the span's, the span's not
            # said anywhere in the clause.
            if why := _other_subject(text, run, theirs[j1:j2], a, elsewhere, named, short):
                return why
            continue
        after = text[run[-1].end : mine[i2].start if i2 < len(mine) else len(text)]
        ends = i2 == len(mine) or re.search(r"[,;:.!?)]", after) is not None
        opening = gap + _of(text, run[0])  # "inside" of "inside the app" is a word of its own
        if ends and _CONDITION_WORD.search(gap + " " + after):
            # "If <another statement>, <this one>" or "<another>, if <this one>": a condition
            # the span does not set, or the span made the condition of what it does not say
            return f"{phrase!r} and the span are joined by a condition the span does not set"
        if ends and _QUALIFYING.search(opening) and (i1 == 0 or i2 == len(mine) or "," in gap):
            return f"{phrase!r} qualifies what the span does not"
        if i2 == len(mine) and "," in gap and _CONDITION.match(text):
            # "If <this statement>, <another>": the span is the condition, not what holds on it
            return f"{phrase!r} is said to hold on a condition the span does not set"
    return ""


def _other_subject(
    text: str,
    run: Sequence[Word],
    replaced: Sequence[Word],
    written: Sequence[str],
    elsewhere: frozenset[str],
    named: frozenset[str],
    short: Counter[str],
) -> str:
    """Why `run`, the clause's opening words in the place of the span's `replaced`, is another
    statement's subject: nouns of it the span does not write, the span's own not said at all
    (or said fewer times than the span says them: "Road parties ... on streets" of "Street
    parties ... on streets")."""
    said = [
        w for w in run if w.key in elsewhere and (w.name or nounish(_of(text, w), w.key, named))
    ]
    gone = {w.key for w in replaced if w.key in short}
    if said and gone:
        return (
            f"{text[run[0].start : run[-1].end]!r} is another statement's subject, not the span's"
        )
    return ""


def _spliced(text: str, mine: Sequence[Word], spans: Sequence[Span], named: frozenset[str]) -> str:
    """Why the clause is one statement's opening words before another's predicate ("Lumen
    Notes stores data in data can be enabled under Settings > Security"): its last three or
    more words end a statement whose own opening words the clause leaves out, and the words
    before them, a noun among them, are all another statement's."""
    a = [w.key for w in mine]
    if len(a) < 4 or not _OPENS.fullmatch(text[: mine[0].start]):
        return ""
    # A statement's parts after ";" are predicates of their own ("Payment is due ...; see ...").
    statements = {
        tuple(w.key for w in part)
        for span in spans
        for cut in (False, True)
        for part in statements_of(span, span.words, cut)
    }
    statements.discard(())
    if any(set(a) <= set(one) for one in statements):
        return ""  # one statement holds every word: the checks of its span judge the order
    words = list(mine)
    for theirs in statements:
        tail = 0
        while tail < min(len(a), len(theirs)) and a[-1 - tail] == theirs[-1 - tail]:
            tail += 1
        k = len(a) - tail
        if tail < 2 or k == 0 or tail == len(theirs) or set(theirs[: len(theirs) - tail]) <= set(a):
            continue  # no predicate of it, the clause is all of it, or keeps its subject whole
        if tail == 2 and not any(can_be_verb(_of(text, w).lower()) for w in words[k:]):
            continue  # two words and no verb: a number's unit ("15 business days"), no predicate
        opening = set(a[:k])
        # "-in" of "check-in" is the word's own, no preposition joining it to the predicate
        between = text[words[k - 1].end : words[k].start]
        compound = len(found.group()) if (found := _COMPOUND_END.match(between)) else 0
        if opening <= set(theirs) or _JOINS.search(_INFINITIVE.sub(" ", between[compound:])):
            continue  # its own words, or joined to the predicate ("..., with 20 GB of storage")
        nouns = any(_head_word(text, w, named) for w in words[:k])
        if nouns and any(opening <= set(other) for other in statements if other != theirs):
            phrase = text[words[0].start : words[k - 1].end + compound]
            return f"{phrase!r} is another statement's subject, not the span's"
    return ""


def _head_word(text: str, word: Word, named: frozenset[str]) -> bool:
    """Whether `word` may head an opening subject: a noun, or a number, in digits or in words,
    standing for what it counts ("After two failed" of "After two failed attempts ...")."""
    return word.number or subject_head(_of(text, word), word.key, named)


def _of(text: str, word: Word) -> str:
    return text[word.start : word.end]


def _ends_part(text: str, word: Word) -> bool:
    """Whether a comma or the clause's end follows `word`."""
    rest = text[word.end :].lstrip()
    return not rest or rest[0] in ",;:.!?)"


def _rest_equal(ops: Sequence[tuple[str, int, int, int, int]]) -> bool:
    """Whether the clause is the span from some word on: every op after the first is equal."""
    return all(op[0] == "equal" for op in ops[1:])


def _all_of_another(universal: re.Match[str], words: Sequence[Word], span: Span) -> str:
    """ "Any cot can be put ..." where the span says "A cot can be put in any double room": the
    clause's universal determiner not before its noun in the span, but before another."""
    said = universal.group(1).lower()
    noun = next((w for w in words if w.start >= universal.end()), None)
    if said not in _DETERMINERS or noun is None or noun.number:
        return ""
    theirs = span.words
    for m in re.finditer(rf"\b{said}\b", span.lowered):
        after = [w for w in theirs if w.start >= m.end()][:3]
        if any(w.key == noun.key for w in after):
            return ""
    return f"{said!r} is said of another word than {noun.key!r} in the span"


_DETERMINERS = frozenset({"any", "every", "each", "all"})
# "not only" where the span says "only": the restriction it states lifted.
_LIFTED = re.compile(r"\bnot\s+(only|solely|exclusively)\b")


def _restriction_lifted(lowered: str, span_lowered: str) -> str:
    """ "may swim not only with an adult" where the span says "only with an adult"."""
    m = _LIFTED.search(lowered)
    if m is None:
        return ""
    word = m.group(1)
    if re.search(rf"\b{word}\b", span_lowered) and not re.search(
        rf"\bnot\s+{word}\b", span_lowered
    ):
        return f"'not {word}' where the span says {word!r}"
    return ""


def _groups_reordered(text: str, span_text: str) -> str:
    """A phone number's digit groups in another order than the span writes them ("0199 555
    020" of "020 555 0199"): each group is a number the span has, the number is not."""
    theirs = {tuple(sorted(r.split())): r for r in _DIGIT_RUN.findall(span_text)}
    for run in _DIGIT_RUN.findall(text):
        said = theirs.get(tuple(sorted(run.split())))
        if said is not None and said.split() != run.split():
            return f"{run!r} where the span writes {said!r}"
    return ""


# Digit groups written one after another with single spaces: one number (a phone number).
_DIGIT_RUN = re.compile(r"(?<!\d)(?<!\d[.,:])\d+(?: \d+)+(?!\d|[.,:]\d)")
