"""Build the gate-eval JSONL of `loadtests/gate_sets/longform_kb.jsonl`: sentences in the manner of
a model's long-form answer over the dev KBs, labelled by hand, each citing one KB file among
the others retrieved with it (whole files as blocks, in a seeded order).

    python -m loadtests.longform_to_jsonl -o longform.jsonl
    stream-rag eval gate --data longform.jsonl --stages all

Written before any gate run on it (issue 27); judged, never fitted on.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

HERE = Path(__file__).parent
SPEC = HERE / "gate_sets" / "longform_kb.jsonl"
KBS = HERE / "answers"


def convert(spec: Path = SPEC, kbs: Path = KBS, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    lines = []
    for line in spec.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        names = [row["cited"], *row["others"]]
        rng.shuffle(names)
        blocks = [(kbs / row["kb"] / name).read_text(encoding="utf-8").strip() for name in names]
        record = {
            "sentence": row["sentence"],
            "blocks": blocks,
            "cited": [names.index(row["cited"]) + 1],
            "label": bool(row["label"]),
            "kind": row["kind"],
        }
        lines.append(json.dumps(record, ensure_ascii=False))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    lines = convert(seed=args.seed)
    args.output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
