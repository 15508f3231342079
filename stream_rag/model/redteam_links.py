"""The red team's links: false sentences whose clauses are each the block's own and whose link
is not ("X, so Y" of two unrelated statements), a condition the block never sets ("If Y, X"),
what happened said as a plan ("was due to be cancelled" of "was cancelled due to rain"),
the two sides of "instead of" traded, a limit dropped ("3 notebooks" of "up to 3"), and a
share written as another fraction ("a quarter" of "50%"). Built from the block's sentences.
"""

from __future__ import annotations

import re

from .redteam import Option, Scene, lower_first

__all__ = ["LINKS"]


def _body(sentence: str) -> str:
    return sentence.rstrip().rstrip(".!?")


def _plain(sentence: str) -> bool:
    """A sentence of one statement: no condition, cause or list of clauses of its own."""
    return not re.search(r"\b(?:if|unless|because|so|since|when|but)\b|;", sentence, re.I)


def causal_link(scene: Scene) -> list[Option]:
    """Two statements of the block joined by a cause ("X, so Y", "X because Y"); control: the
    same two joined by "and"."""
    s = scene.sentence
    if not _plain(s):
        return []
    out = []
    for other in scene.own:
        if other == s or not _plain(other):
            continue
        a, b = _body(s), lower_first(_body(other))
        out.append(Option("so", f"{a}, so {b}.", True))
        out.append(Option("because", f"{a} because {b}.", True))
        out.append(Option("control_and", f"{a}, and {b}.", False))
        break
    return out


def condition_add(scene: Scene) -> list[Option]:
    """A condition the block does not set: another statement as an "if" in front; control:
    the sentence after "Also,"."""
    s = scene.sentence
    if not _plain(s) or not s[:1].isupper():
        return []
    out = []
    for other in scene.own:
        if other != s and _plain(other):
            cond = lower_first(_body(other))
            out.append(Option("if", f"If {cond}, {lower_first(s)}", True))
            out.append(Option("only_if", f"{_body(s)} only if {cond}.", True))
            break
    if out:
        out.append(Option("control_also", f"Also, {lower_first(s)}", False))
    return out


_HAPPENED = re.compile(
    r"\b(was|were) ((?:[a-z]+ed|[a-z]+en|shut|cut|set|put|sold|paid|held|made|built|lost))\b"
    r"(?: (?:due to|because of|owing to) [^,;.]+)?"
)


def due_to(scene: Scene) -> list[Option]:
    """What happened ("was cancelled", "were suspended") said as a plan: "was due to be
    cancelled", a cause after it dropped."""
    s = scene.sentence
    out = []
    for m in _HAPPENED.finditer(s):
        if re.search(r"\b(?:due to be|scheduled|planned|expected|will)\b", s, re.I):
            break
        text = f"{s[: m.start()]}{m.group(1)} due to be {m.group(2)}{s[m.end() :]}"
        out.append(Option("planned", text, True))
    return out


_SIDES = re.compile(
    r"\b(?P<a>[\w$€£%.,-]+(?: [\w$€£%.-]+){0,3}) (?P<link>instead of|rather than) "
    r"(?P<b>[\w$€£%.-]+(?: [\w$€£%.-]+){0,3})(?=[.,;]|$)",
    re.IGNORECASE,
)


def sides_swap(scene: Scene) -> list[Option]:
    """The two sides of "instead of" / "rather than" traded: "credit instead of a refund" ->
    "a refund instead of credit"."""
    s = scene.sentence.rstrip()
    out = []
    for m in _SIDES.finditer(s):
        text = f"{s[: m.start()]}{m.group('b')} {m.group('link')} {m.group('a')}{s[m.end() :]}"
        out.append(Option("swapped", text, True))
    return out


_CAP = re.compile(
    r"\b(up to|at most|no more than|a maximum of|maximum of|not more than|less than|under"
    r"|fewer than|below) (?=[$€£]?\d)",
    re.IGNORECASE,
)


def bound_drop(scene: Scene) -> list[Option]:
    """A limit on a number dropped ("includes up to 3 notebooks" -> "includes 3 notebooks");
    control: the limit written another way ("at most")."""
    s, out = scene.sentence, []
    for m in _CAP.finditer(s):
        out.append(Option("dropped", s[: m.start()] + s[m.end() :], True))
        if m.group(1).lower() == "up to":
            out.append(Option("control_at_most", s[: m.start()] + "at most " + s[m.end() :], False))
    return out


_SHARES = {"50%": "half", "25%": "a quarter", "75%": "three quarters", "10%": "a tenth"}
_WRONG = {"50%": "a third", "25%": "a fifth", "75%": "two thirds", "10%": "a quarter"}
_PERCENT = re.compile(r"\b(50|25|75|10) ?(%|percent)")


def fraction(scene: Scene) -> list[Option]:
    """A share written as another fraction ("50% off" -> "a third off"); control: the same
    share in words ("half off")."""
    s, out = scene.sentence, []
    for m in _PERCENT.finditer(s):
        key = f"{m.group(1)}%"
        out.append(Option("fraction", s[: m.start()] + _WRONG[key] + s[m.end() :], True))
        out.append(Option("control_words", s[: m.start()] + _SHARES[key] + s[m.end() :], False))
    return out


LINKS = {
    "causal_link": causal_link,
    "condition_add": condition_add,
    "sides_swap": sides_swap,
    "bound_drop": bound_drop,
    "fraction": fraction,
    "due_to": due_to,
}
