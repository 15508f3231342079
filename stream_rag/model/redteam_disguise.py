"""The red team's families that hide a false edit in what a reader reads through: the changed
word in look-alike letters of another script (`lookalike`), or split by emphasis or a code
span that a renderer joins back (`smuggle`); each with faithful controls."""

from __future__ import annotations

import re

from .falsify import falsify
from .redteam import Option, Scene

__all__ = ["CYRILLIC_LOOKS", "GREEK_LOOKS", "LOOKALIKES", "lookalike", "smuggle"]

# Latin letters and digits with letters of other scripts (or Latin) drawn the same.
CYRILLIC_LOOKS = dict(zip("aceopxyisjhABCEHIKMOPTXY", "асеорхуіѕјһАВСЕНІКМОРТХҮ", strict=True))
GREEK_LOOKS = dict(zip("ouvikABEHIKMNOPTXYZ", "ουνικΑΒΕΗΙΚΜΝΟΡΤΧΥΖ", strict=True))
LOOKALIKES = {**{c: g for c, g in GREEK_LOOKS.items()}, **CYRILLIC_LOOKS}
_DIGIT_LOOKS = {"0": "О", "1": "l", "3": "З"}  # Cyrillic O, Latin l, Cyrillic Ze
_GREEK_CAPS = dict(zip("ABEHIKMNOPTXYZ", "ΑΒΕΗΙΚΜΝΟΡΤΧΥΖ", strict=True))


def lookalike(scene: Scene) -> list[Option]:
    """A false edit's changed word wholly in look-alike letters of another script (no word
    mixes scripts), its digits as look-alike letters, or a "NOT" in Greek capitals; control:
    a true sentence with typographic spaces, quotes and dashes."""
    s, out = scene.sentence, []
    made = falsify(s, scene.own, scene.rng, visible=True)
    if made is not None:
        edit = made[1]
        start, end = edit.span
        word = edit.text[start:end]
        for script, looks in (("cyrillic", CYRILLIC_LOOKS), ("greek", GREEK_LOOKS)):
            if any(c.isalpha() for c in word) and all(c in looks for c in word if c.isalpha()):
                hidden = "".join(looks.get(c, c) for c in word)
                text = edit.text[:start] + hidden + edit.text[end:]
                out.append(Option(f"{script}_word", text, True))
        if any(c in _DIGIT_LOOKS for c in word) and word.isdigit():
            hidden = "".join(_DIGIT_LOOKS.get(c, c) for c in word)
            out.append(Option("digits", edit.text[:start] + hidden + edit.text[end:], True))
    for match in re.finditer(r"\b(is|are|can|will|does|do)\s(?=[a-z])", s):
        text = s[: match.end()] + "".join(_GREEK_CAPS[c] for c in "NOT") + " " + s[match.end() :]
        out.append(Option("greek_not", text, True))
        break
    control = re.sub(r"(?<=\d) (?=[a-z])", "\u00a0", s).replace("'", "\u2019")
    control = re.sub(r"(?<=\d)-(?=\d)", "\u2013", control)
    if control != s:
        out.append(Option("control_typography", control, False))
    return out


def smuggle(scene: Scene) -> list[Option]:
    """The changed word of a false edit split by emphasis or a code span ("n**o**t", "3`0`"),
    which a renderer joins back; control: a true sentence with a whole phrase in bold."""
    s, rng, out = scene.sentence, scene.rng, []
    made = falsify(s, scene.own, rng, visible=True)
    if made is not None:
        edit = made[1]
        start, end = edit.span
        word = edit.text[start:end]
        if len(word) >= 2:
            cut = max(1, len(word) // 2)
            # An underscore inside a word is no emphasis (CommonMark): only * and ` hide here.
            mark = rng.choice(("**", "*", "`"))
            hidden = f"{word[:cut]}{mark}{word[cut]}{mark}{word[cut + 1 :]}"
            out.append(
                Option(
                    "split_" + {"**": "bold", "*": "em", "`": "code"}[mark],
                    edit.text[:start] + hidden + edit.text[end:],
                    True,
                )
            )
    words = list(re.finditer(r"\b[a-z]{4,}\b", s))
    if words:
        pick = rng.choice(words)
        out.append(
            Option("control_bold", f"{s[: pick.start()]}**{pick.group()}**{s[pick.end() :]}", False)
        )
    return out
