"""Build the verifier's (evidence, claim, supported?) pairs, tokenised, with grouped folds.

    .venv/bin/python -m tools.verifier.build_data \
        --wice ../shared/data/attribution/wice_dev.jsonl --begin begin.jsonl \
        --longform longform.jsonl --cranfield ../shared/data/cranfield/corpus.jsonl -o pairs.jsonl

Provenance of every row (`source`, `kind`):
- `wice` / `begin`: the labelled rows of WiCE dev (CC BY-SA, Wikipedia) and BEGIN WoW dev (CC BY
  4.0), converted by `loadtests.begin_to_jsonl`; fold by the evidence they cite (`group`).
- `wice_synth` / `begin_synth`: a sentence of such a row's cited evidence, restated (the fake
  model's `paraphrase`, or a clause of it: supported) or falsified (negation, number or entity
  swap: `model.falsify`; a quantifier or comparative flipped; a sentence of another row's
  evidence, alone or appended: unsupported). Same group, so same fold, as the row.
- `cranfield`: the same edits on Cranfield 1400 abstracts (public IR collection); always
  training (fold -1), a different domain from every evaluation set.
- `longform`: our own hand-labelled long-form set; fold -2, never trained on.
No KB of loadtests/answers is used (the long-form set and the held-out answer sets draw on them).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from tokenizers import Tokenizer

from stream_rag.embed.model_files import find_model_dir
from stream_rag.model.edits import novel
from stream_rag.model.falsify import negate, opposites, swap_entities
from stream_rag.model.number_swap import swap_numbers
from stream_rag.model.paraphrase import paraphrase
from tools.verifier.folds import FOLDS
from tools.verifier.pairs import evidence, pair_ids, split

_FLIPS = (
    ("all", "some"),
    ("always", "sometimes"),
    ("more", "less"),
    ("higher", "lower"),
    ("increase", "decrease"),
    ("increases", "decreases"),
    ("increased", "decreased"),
    ("larger", "smaller"),
    ("greater", "smaller"),
    ("before", "after"),
    ("maximum", "minimum"),
    ("above", "below"),
    ("faster", "slower"),
    ("most", "few"),
    ("many", "few"),
    ("first", "last"),
    ("earlier", "later"),
    ("older", "younger"),
    ("largest", "smallest"),
)
_FLIP, _FLIP_RE = opposites(_FLIPS)
_CLAUSE = re.compile(r",\s+(?:and|but|which|while|so)\s+|;\s+|,\s+")


def flip(sentence: str, rng: random.Random) -> str | None:
    """One quantifier or comparative turned into its opposite."""
    hits = list(_FLIP_RE.finditer(sentence))
    if not hits:
        return None
    m = rng.choice(hits)
    word = _FLIP[m.group(1).lower()]
    word = word.capitalize() if m.group(1)[0].isupper() else word
    return sentence[: m.start()] + word + sentence[m.end() :]


def clause(sentence: str, rng: random.Random) -> str | None:
    """A clause of the sentence of at least five words, as a sentence."""
    parts = [p.strip(" .") for p in _CLAUSE.split(sentence)]
    parts = [p for p in parts if len(p.split()) >= 5]
    if len(parts) < 2:
        return None
    return rng.choice(parts) + "."


def edits(
    sentence: str, own: Sequence[str], other: Sequence[str], rng: random.Random
) -> Iterator[tuple[str, str, bool]]:
    """(kind, claim, supported) made from one evidence sentence."""
    made = paraphrase(sentence, rng)
    if made.strip() and made != sentence:
        yield "paraphrase", made, True
    elif (part := clause(sentence, rng)) is not None:
        yield "clause", part, True
    else:
        yield "verbatim", sentence, True
    false: list[tuple[str, str]] = []
    for kind, edit in (
        ("negate", negate(sentence, rng)),
        ("swap_numbers", swap_numbers(sentence, own, rng)),
        ("swap_entities", swap_entities(sentence, own, rng)),
    ):
        if edit is not None and edit.text != sentence and novel(edit.text, own):
            false.append((kind, edit.text))
    if (flipped := flip(sentence, rng)) is not None:
        false.append(("flip", flipped))
    if other:
        far = rng.choice(other)
        false.append(("neighbour", far))
        false.append(("appended", f"{sentence.rstrip(' .')}, and {far[:1].lower()}{far[1:]}"))
    if false:
        kind, text = rng.choice(false)
        yield kind, text, False


def _group(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wice", type=Path, required=True)
    parser.add_argument("--begin", type=Path, required=True)
    parser.add_argument("--longform", type=Path, required=True)
    parser.add_argument("--cranfield", type=Path, required=True)
    parser.add_argument("--cranfield-docs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--out", type=Path, required=True)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    tok = Tokenizer.from_file(str(find_model_dir() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()

    def ids(text: str) -> list[int]:
        return tok.encode(text, add_special_tokens=False).ids

    def count(text: str) -> int:
        return len(ids(text))

    out: list[dict[str, object]] = []

    def add(
        source: str,
        kind: str,
        group: str,
        fold: int,
        claim: str,
        blocks: list[str],
        label: bool,
        row: int = -1,
    ) -> None:
        ev = evidence(claim, blocks, count)
        pid, types = pair_ids(ids(ev), ids(claim))
        out.append(
            {
                "source": source,
                "kind": kind,
                "group": group,
                "fold": fold,
                "row": row,
                "label": label,
                "claim": claim,
                "evidence": ev,
                "ids": pid,
                "types": types,
            }
        )

    for source, path in (("wice", args.wice), ("begin", args.begin), ("longform", args.longform)):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        cited = [[r["blocks"][n - 1] for n in r["cited"]] for r in rows]
        groups = [_group("\n".join(c)) for c in cited]
        order = sorted(set(groups))
        rng.shuffle(order)
        fold_of = {g: i % FOLDS for i, g in enumerate(order)}
        pool = [s for c in cited for b in c for s in split(b) if len(s.split()) >= 6]
        seen: set[str] = set()
        for i, (row, blocks, group) in enumerate(zip(rows, cited, groups, strict=True)):
            fold = -2 if source == "longform" else fold_of[group]
            add(source, "labelled", group, fold, row["sentence"], blocks, bool(row["label"]), i)
            if source == "longform" or group in seen:
                continue
            seen.add(group)
            own = [s for b in blocks for s in split(b)]
            usable = [s for s in own if 6 <= len(s.split()) <= 60]
            if not usable:
                continue
            for kind, claim, label in edits(rng.choice(usable), own, pool, rng):
                add(f"{source}_synth", kind, group, fold, claim, blocks, label)
    docs = [json.loads(line) for line in args.cranfield.read_text().splitlines() if line.strip()]
    rng.shuffle(docs)
    chosen = docs[: args.cranfield_docs]
    pool = [s for d in docs[args.cranfield_docs :] for s in split(d["text"]) if len(s.split()) >= 6]
    for d in chosen:
        own = split(d["text"])
        usable = [s for s in own if 6 <= len(s.split()) <= 60]
        for sentence in rng.sample(usable, min(2, len(usable))):
            for kind, claim, label in edits(sentence, own, pool, rng):
                add("cranfield", kind, f"cranfield:{d['_id']}", -1, claim, [d["text"]], label)
    args.out.write_text("".join(json.dumps(r) + "\n" for r in out))
    by: dict[tuple[str, bool], int] = {}
    for r in out:
        key = (str(r["source"]), bool(r["label"]))
        by[key] = by.get(key, 0) + 1
    for (source, label), n in sorted(by.items()):
        print(f"{source:12} {'supported' if label else 'unsupported':12} {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
