"""Count which check of the gate drops supported sentences (and which let unsupported ones through).

    stream-rag eval gate --data begin.jsonl --stages all --mode strict --verdicts begin.v.jsonl
    python -m loadtests.gate_drops begin.v.jsonl longform.v.jsonl wice.v.jsonl [--sample 40]

Each file is `eval gate --verdicts` output; a drop's cause is read from its verdict's reason,
stage and detail (the first matching rule below). `--sample N --seed S` also draws N supported
drops per file to read one by one (`--show`); `--show` prints every row counted.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

_NUMBER = r"is said of|^'[^']*\d[^']*' is not in \["
_PLACE = r"stands where|is written where|another statement's subject"
_SCOPE = r"is not in the span|^says '|'only'"
# (cause, reason or None for any, stage or None, detail pattern); the first match names a drop.
CAUSES: tuple[tuple[str, str | None, str | None, str], ...] = (
    ("semantic: not anchored", None, "semantic", r"semantic: not anchored"),
    ("semantic: under the cutoff", None, "semantic", r"semantic p "),
    ("semantic: other", None, "semantic", r""),
    ("overlap: a number or date no cited block vouches", "low_overlap", None, r"no second look: '"),
    ("overlap: a negation no cited block writes", "low_overlap", None, r"its negation is in no"),
    ("overlap: polarity", "low_overlap", None, r"negat"),
    ("overlap: too low to be judged further", "low_overlap", None, r""),
    ("number replaced or unvouched", "number_mismatch", None, r""),
    ("name not in the aligned span", "claim_mismatch", None, r"^the name "),
    ("first person or a question", "claim_mismatch", None, r"first person|a question asserts"),
    ("cause link", "claim_mismatch", None, r"links by a cause"),
    ("judgement", "claim_mismatch", None, r"^judges "),
    ("clause shares too little of its span", "claim_mismatch", None, r"^clause '.*' shares "),
    ("example or aside shares too little", "claim_mismatch", None, r"^an example or aside"),
    ("clause said better by another block", "claim_mismatch", None, r"^clause '.*' is what "),
    ("number or date not in its span / of another thing", "claim_mismatch", None, _NUMBER),
    ("word in another's place", "claim_mismatch", None, _PLACE),
    ("scope word (only, every, adverb) not in the span", "claim_mismatch", None, _SCOPE),
    ("item added to a list", "claim_mismatch", None, r"is added to what the span lists"),
    ("polarity of a clause", "claim_mismatch", None, r"negates"),
    ("comparison", "claim_mismatch", None, r"compares"),
)


def cause(verdict: dict[str, object]) -> str:
    """The cause a verdict's reason, stage and detail name; 'other: <reason>' if no rule does."""
    reason, stage, detail = str(verdict["reason"]), str(verdict["stage"]), str(verdict["detail"])
    for name, want_reason, want_stage, pattern in CAUSES:
        if want_reason not in (None, reason) or want_stage not in (None, stage):
            continue
        if re.search(pattern, detail):
            return name
    return f"other: {reason}"


def read(path: Path) -> list[dict[str, object]]:
    try:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    except (OSError, ValueError) as exc:
        sys.exit(f"gate_drops: cannot read {path}: {exc}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("verdicts", nargs="+", type=Path, help="eval gate --verdicts files")
    parser.add_argument("--sample", type=int, help="draw N supported drops per file")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--show", action="store_true", help="print each counted row")
    args = parser.parse_args(argv)
    table: dict[str, dict[str, Counter[str]]] = {}
    for path in args.verdicts:
        rows = read(path)
        drops = [r for r in rows if r["label"] and not r["ok"]]
        passed = [r for r in rows if not r["label"] and r["ok"]]
        if args.sample is not None and args.sample < len(drops):
            drops = random.Random(args.seed).sample(drops, args.sample)
        supported = sum(1 for r in rows if r["label"])
        unsupported = len(rows) - supported
        print(
            f"{path.name}: {len(drops)} supported drops counted "
            f"(of {supported} supported), {len(passed)} of {unsupported} unsupported emitted"
        )
        table[path.name.split(".")[0]] = {
            "supported dropped": Counter(cause(r) for r in drops),
            "unsupported emitted": Counter(f"{r['stage']} stage passed it" for r in passed),
        }
        if args.show:
            for r in drops:
                print(f"  [{cause(r)}] {r['sentence']!r}\n      {r['detail']}")
    for kind in ("supported dropped", "unsupported emitted"):
        names = sorted({c for t in table.values() for c in t[kind]})
        print(f"\n{kind:<52}" + "".join(f"{n[:18]:>20}" for n in table))
        for c in sorted(names, key=lambda c: -sum(t[kind][c] for t in table.values())):
            print(f"{c[:52]:<52}" + "".join(f"{t[kind][c]:>20}" for t in table.values()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
