"""Tokenisation shared by the BM25 branch and the citation gate.

NFKC + casefold, words via blingfire, an English stop list, and runs of CJK characters as
overlapping character bigrams (Chinese and Japanese have no spaces between words).

A word written with hyphens ("e-bike", "Wi-Fi", "check-out") is its parts and the parts
joined ("ebike", "wifi", "checkout"), and a lone small letter before a word ("e bike",
"e mail") is also joined to it, so that the forms one word is written in meet: blingfire splits
at hyphens and single letters are no terms, so "ebike" and "e-bike" shared nothing.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from functools import lru_cache

import blingfire

_STOP_TEXT = """
    a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do
    does doesn't doing don't down during each few for from further had hadn't has hasn't
    have haven't having he he'd he'll he's her here here's hers herself him himself his how
    how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most
    mustn't my myself no nor not of off on once only or other ought our ours ourselves out
    over own same shan't she she'd she'll she's should shouldn't so some such than that
    that's the their theirs them themselves then there there's these they they'd they'll
    they're they've this those through to too under until up very was wasn't we we'd we'll
    we're we've were weren't what what's when when's where where's which while who who's
    whom why why's will with won't would wouldn't you you'd you'll you're you've your yours
    yourself yourselves 's 't 're 've 'll 'd 'm n't also may might must shall us via per
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())

_CJK = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uf900-\ufaff"  # compatibility ideographs
    "\uac00-\ud7af"  # hangul syllables
)
_CJK_RUN = re.compile(f"[{_CJK}]+")
_HAS_CJK = re.compile(f"[{_CJK}]")
_EDGE_PUNCT = re.compile(r"^[^\w]+|[^\w]+$")


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


@lru_cache(maxsize=65536)
def word_tokens(word: str) -> tuple[str, ...]:
    """The index terms of one whitespace-separated word (edge punctuation stripped)."""
    if _HAS_CJK.search(word):
        out: list[str] = []
        pos = 0
        for match in _CJK_RUN.finditer(word):
            out.extend(word_tokens(word[pos : match.start()]) if match.start() > pos else ())
            run = match.group()
            out.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
            pos = match.end()
        if pos < len(word):
            out.extend(word_tokens(word[pos:]))
        return tuple(out)
    stripped = _EDGE_PUNCT.sub("", word)
    if not stripped or stripped in STOP_WORDS:
        return ()
    if len(stripped) == 1 and not stripped.isdigit():
        return ()
    return (stripped,)


# Letters joined by hyphens (ASCII, U+2010, U+2011; NFKC keeps them apart) make one word too;
# digits take no part ("X-300", "9-5"). Found from each hyphen: a scan of the whole text for
# word starts costs as much as blingfire's own pass.
_HYPHEN = re.compile("[-\u2010\u2011](?=[^\\W\\d_])(?<=[^\\W\\d_].)")  # between letters
_COMPOUND = re.compile(r"[^\W\d_]+(?:[-\u2010\u2011][^\W\d_]+)+(?![\w'’]|[-\u2010\u2011]\w)")
# A lone small letter other than "a" and "i" after a space, before a word ("an e bike"),
# matched as written, not casefolded, so that "Plan B covers" stays apart; not before a stop
# word ("plan b on sale" made "bon" a term no source has). `_LONE_HINT` is a tenth of its
# cost and rarely matches.
_LONE = re.compile(r"(?:^|(?<= ))[b-hj-z]\s+[^\W\d_]{2,}(?![\w'’]|[-\u2010\u2011]\w)")
_LONE_HINT = re.compile(" [b-hj-z] ")
_JOINERS = re.compile("[-\u2010\u2011\\s]+")


def _joined(text: str) -> list[re.Match[str]]:
    found: list[re.Match[str]] = []
    if "-" in text or "\u2010" in text or "\u2011" in text:
        end = 0
        for hyphen in _HYPHEN.finditer(text):
            start = hyphen.start()
            if start < end:
                continue  # within the compound just found
            while start and text[start - 1].isalpha():
                start -= 1
            if start and (text[start - 1].isalnum() or text[start - 1] in "_'’.-\u2010\u2011"):
                continue
            if match := _COMPOUND.match(text, start):
                found.append(match)
                end = match.end()
    lone = (
        [m for m in _LONE.finditer(text) if m.group().split()[-1].casefold() not in STOP_WORDS]
        if _LONE_HINT.search(text) or text[1:2] == " "
        else []
    )
    return sorted(found + lone, key=lambda m: m.start()) if lone else found


def tokenize(text: str) -> list[str]:
    """Index terms of `text`, in order, duplicates kept; a joined word follows its parts."""
    return list(_tokenized(text))


@lru_cache(maxsize=2048)
def _tokenized(text: str) -> tuple[str, ...]:
    """`tokenize`, kept per text: the checks before an answer read the same blocks, headings
    and words for question after question (blingfire's call and its buffer each time)."""
    text = unicodedata.normalize("NFKC", text)
    joins = _joined(text)
    if not joins:
        return tuple(_tokens(text.casefold()))
    pieces: list[str] = []
    pos = 0
    for match in joins:
        # the joined word written after the match: one blingfire call for the whole text
        pieces += (text[pos : match.end()], " ", _JOINERS.sub("", match.group()), " ")
        pos = match.end()
    pieces.append(text[pos:])
    return tuple(_tokens("".join(pieces).casefold()))


def compounds(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """Each word of `text` that `tokenize` also joins: its joined token and its parts' tokens
    ("Wi-Fi": ("wifi", ("wi", "fi")); "e-bike": ("ebike", ("bike",)))."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for match in _joined(unicodedata.normalize("NFKC", text)):
        joined = word_tokens(_JOINERS.sub("", match.group()).casefold())
        if joined:
            out.append((joined[0], tuple(_tokens(match.group().casefold()))))
    return out


def _tokens(text: str) -> list[str]:
    words = blingfire.text_to_words(text).split()
    return [token for word in words for token in word_tokens(word)]


def term_counts(text: str) -> Counter[str]:
    return Counter(tokenize(text))
