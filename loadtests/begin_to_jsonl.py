"""Convert BEGIN's TSV (knowledge, message, response, begin_label) to the gate's eval JSONL.

Each row becomes `{"sentence", "blocks", "cited", "label"}` with the passage as block [1], cited
[1]; label is true for "Fully attributable". `--distractors K` adds K other rows' passages as
blocks, shuffled around the true one (seeded), to try the gate with several blocks. `--pad K`
puts K other rows' passages in the cited block itself, the true one at a random place among
them (seeded), as a retrieved chunk holds the supporting sentence among others.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
from pathlib import Path


def sentence(text: str) -> str:
    """`text` ending in a full stop, so that a padded block splits where the passages meet."""
    text = text.strip()
    return text if text[-1:] in ".!?" else text + "."


def padded(knowledge: str, others: list[str], pad: int, rng: random.Random) -> str:
    """`knowledge` among `pad` of `others` in one block, at a random place."""
    parts = [sentence(p) for p in rng.sample(others, pad)]
    parts.insert(rng.randrange(pad + 1), sentence(knowledge))
    return " ".join(parts)


def convert(
    rows: list[dict[str, str]], distractors: int = 0, seed: int = 0, pad: int = 0
) -> list[str]:
    rng = random.Random(seed)
    passages = sorted({row["knowledge"] for row in rows})
    lines = []
    for row in rows:
        knowledge = row["knowledge"]
        if pad:
            others = [p for p in passages if p != row["knowledge"]]
            knowledge = padded(row["knowledge"], others, pad, rng)
        blocks = [knowledge]
        if distractors:
            others = [p for p in passages if p != row["knowledge"]]
            blocks += rng.sample(others, distractors)
            rng.shuffle(blocks)
        record = {
            "sentence": row["response"],
            "blocks": blocks,
            "cited": [blocks.index(knowledge) + 1],
            "label": row["begin_label"] == "Fully attributable",
        }
        lines.append(json.dumps(record, ensure_ascii=False))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tsv", type=Path, help="e.g. ../shared/data/attribution/begin_dev_wow.tsv")
    parser.add_argument("-o", "--output", type=Path, help="JSONL file (default: stdout)")
    parser.add_argument("--distractors", type=int, default=0, help="extra blocks per row")
    parser.add_argument(
        "--pad", type=int, default=0, help="other rows' passages around the cited one, same block"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with args.tsv.open(newline="", encoding="utf-8") as handle:
        # BEGIN's text has bare quotes: read fields literally.
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    lines = convert(rows, args.distractors, args.seed, args.pad)
    text = "".join(line + "\n" for line in lines)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    print(f"{len(lines)} rows", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
