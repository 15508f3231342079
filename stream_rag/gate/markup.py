"""The markup a streamed answer may carry: what a line opens (`classify`: paragraph, blank line,
code fence, heading, rule, table row, list item) and the labels of inline lists ("1) a 2) b")."""

from __future__ import annotations

import re

BLANK_CHARS = " \t\r\f\v"
BULLETS = "\u2022\u2043\u2023\u25e6\u25aa"  # bullet, hyphen bullet, triangle, white, square
_BLANK_LINE = re.compile(r"[ \t\r\f\v]*(\n)?")
_RULE_RUN = re.compile(r"([-*_])(?:[ \t\r]*\1)*[ \t\r]*")
# Inline list labels: "1.", "2)", "3.)", "a.", "• 9.", or a bullet alone.
_B = f"[{BULLETS}]"
LABEL = re.compile(
    f"(?P<bullet>{_B}[ \t]?)?"
    r"(?P<value>[0-9]{1,3}|[a-z])(?P<suffix>\.\)|[.)])(?=[ \t])"
    f"|(?P<alone>{_B})(?=[ \t])"
)
LABEL_PREFIX = re.compile(f"(?:{_B}[ \t]?)?" r"(?:(?:[0-9]{1,3}|[a-z])(?:\.\)?|\))?)?\Z")
LABEL_ONLY = re.compile(f"(?:{_B}[ \t]?)?" r"(?:[0-9]{1,3}|[a-z])(?:\.\)?|\))")


def skip(pattern: re.Pattern[str], buf: str, pos: int) -> int:
    """Where `pattern`, which may match nothing, stops when matched at `pos`."""
    m = pattern.match(buf, pos)
    return pos if m is None else m.end()


def successor(label: re.Match[str]) -> str | None:
    """The label an inline list's next item would carry (a `LABEL` match), if any."""
    if label["alone"]:
        return label["alone"]
    value = label["value"]
    if value.isdigit():
        following = str(int(value) + 1)
    elif value < "z":
        following = chr(ord(value) + 1)
    else:
        return None
    return f"{label['bullet'] or ''}{following}{label['suffix']}"


def classify(buf: str, p: int, final: bool) -> str | None:
    """What the line starting at `p` opens: blank, end, fence, heading, rule, row, item, para;
    "block" when it is a rule or an item, not yet which; None while it cannot tell yet."""
    n = len(buf)
    if p < n and buf[p].isalpha():  # the common case: a line of text
        return "para"
    m = _BLANK_LINE.match(buf, p)
    if m is None:
        return None
    if m.group(1):
        return "blank"
    q = m.end()
    if q == n:
        return "end" if final else None
    c = buf[q]
    if c == "|":
        return "row"
    if c in "`~":
        run = 0
        while run < 3 and q + run < n and buf[q + run] == c:
            run += 1
        if run == 3:
            return "fence"
        return None if q + run == n and not final else "para"
    if c == "#":
        e = q + len(buf[q : q + 8]) - len(buf[q : q + 8].lstrip("#"))
        if e == n:
            return None if not final else ("heading" if e - q <= 6 else "para")
        return "heading" if e - q <= 6 and buf[e] in " \t\r\n" else "para"
    if c in "-*_":
        e = skip(_RULE_RUN, buf, q)
        if e == n and not final:  # "- " opens an item or a rule: a block either way
            return "block" if c != "_" and buf[q + 1 : q + 2] in (" ", "\t") else None
        if (e == n or buf[e] == "\n") and buf.count(c, q, e) >= 3:
            return "rule"
    if c in "-*+" or c in BULLETS:
        if q + 1 == n:
            return None if not final else "para"
        return "item" if buf[q + 1] in " \t\r\n" else "para"
    if "0" <= c <= "9":
        e = q
        while e < n and e - q < 10 and "0" <= buf[e] <= "9":
            e += 1
        if e == n:
            return None if not final else "para"
        if e - q > 9 or buf[e] not in ".)":
            return "para"
        if e + 1 == n:
            return None if not final else "item"
        return "item" if buf[e + 1] in " \t\r\n" else "para"
    return "para"
