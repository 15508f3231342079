"""The verifier's training pairs (tools/verifier/): edits, evidence selection, pair layout."""

from __future__ import annotations

import json
import random
from pathlib import Path

from stream_rag.model.falsify import opposites
from tools.verifier import folds
from tools.verifier.build_data import clause, edits, flip
from tools.verifier.pairs import CLS, MAX_PIECES, SEP, evidence, pair_ids, split


def words(text: str) -> int:
    return len(text.split())


def test_flip_turns_one_quantifier_or_comparative() -> None:
    assert flip("Higher speeds give more lift.", random.Random(0)) in (
        "Lower speeds give more lift.",
        "Higher speeds give less lift.",
    )
    assert flip("The wing was tested in a tunnel.", random.Random(0)) is None


def test_clause_needs_two_parts_of_five_words() -> None:
    text = "The plan covers accidental damage to the phone, and it renews every single year."
    assert clause(text, random.Random(1)) in (
        "The plan covers accidental damage to the phone.",
        "it renews every single year.",
    )
    assert clause("Short, and sweet.", random.Random(1)) is None


def test_edits_give_one_supported_and_one_unsupported_claim() -> None:
    own = ["Monthly plans can be cancelled at any time.", "Annual plans cost $80 per year."]
    made = list(edits(own[0], own, ["The Free plan has no support."], random.Random(3)))
    assert [label for _, _, label in made] == [True, False]
    assert made[1][1] != own[0]


def test_evidence_takes_the_sentences_sharing_most_in_block_order() -> None:
    blocks = ["Kettles boil water. Refunds take ten days.\nThe lid is steel.", "Boil it twice."]
    chosen = evidence("How long do refunds take, in days?", blocks, words, budget=5)
    assert chosen == "Refunds take ten days."
    assert evidence("Refunds and the lid", blocks, words) == (
        "Kettles boil water. Refunds take ten days. The lid is steel. Boil it twice."
    )
    assert split(blocks[0]) == [
        "Kettles boil water.",
        "Refunds take ten days.",
        "The lid is steel.",
    ]


def test_pair_ids_keep_the_claim_and_cap_the_length() -> None:
    ids, types = pair_ids(list(range(1000, 1400)), [7, 8, 9])
    assert len(ids) == MAX_PIECES == len(types)
    assert ids[0] == CLS
    assert ids[-1] == SEP
    assert ids[-4:-1] == [7, 8, 9]
    assert types[-4:] == [1, 1, 1, 1]
    assert types[0] == 0


def test_train_and_probe_read_the_same_merged_folds(tmp_path: Path) -> None:
    """`folds` (train.py's and probe.py's): four folds merged into two, cranfield (-1) trained
    on every time, long-form (-2) only tested, by the model of all folds."""
    made = [(0, "labelled"), (1, "labelled"), (2, "labelled"), (3, "extra"), (-1, "extra")]
    rows = [
        {"source": "s", "row": i, "fold": fold, "kind": kind, "label": i % 2 == 0}
        for i, (fold, kind) in enumerate([*made, (-2, "labelled")])
    ]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = folds.arguments(None).parse_args([str(pairs), "--work", str(tmp_path), "--merge", "2"])
    read = folds.read(args.pairs, args.merge)
    assert [r["fold"] for r in read] == [0, 0, 1, 1, -1, -2]
    assert list(folds.splits(read)) == [(0, [2, 3, 4], [0, 1]), (1, [0, 1, 4], [2])]
    assert folds.held_out(read) == ([0, 1, 2, 3, 4], [5])
    line = json.loads(folds.oof_line(read[5], 0.123456))
    assert line == {"source": "s", "row": 5, "fold": -2, "label": False, "p": 0.12346}


def test_flips_and_the_red_teams_antonyms_pair_words_alike() -> None:
    """`opposites` (falsify's antonyms, build_data's flips): either word of a pair gives the
    other, a longer word is found before a word inside it, whole words only, any case."""
    opposite, found = opposites([("refundable", "non-refundable"), ("open", "closed")])
    assert opposite == {
        "refundable": "non-refundable",
        "non-refundable": "refundable",
        "open": "closed",
        "closed": "open",
    }
    text = "Non-refundable tickets; the reopened gate is OPEN."
    assert [m.group() for m in found.finditer(text)] == ["Non-refundable", "OPEN"]
