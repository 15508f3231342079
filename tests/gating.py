"""One sentence judged by the gate against a few blocks, as the clause-check tests ask it."""

from __future__ import annotations

import random
from collections.abc import Sequence

from stream_rag.gate.citations import Citation
from stream_rag.gate.lexical import GateContext
from stream_rag.model.passages import block_sentences
from stream_rag.model.redteam import Family, Scene, options_for


def verdict(blocks: Sequence[str], sentence: str, block: int) -> tuple[bool, str]:
    """Whether `sentence`, citing block `block` (1-based) of `blocks`, is shown, and why not."""
    ctx = GateContext(blocks)
    text, _, units = ctx.read(f"{sentence} [{block}]")
    result = ctx.check(text, [Citation(block)], units)
    return result.ok, result.detail


def block_pairs(blocks: Sequence[str]) -> list[tuple[int, str]]:
    """Each sentence of `blocks` with its block's number (1-based)."""
    return [(n, s) for n, text in enumerate(blocks, start=1) for s in block_sentences(text)]


def assert_knob_judged(
    blocks: Sequence[str], knob: Family, pair: tuple[int, str], seed: int
) -> None:
    """A knob's false edits of a block's sentence are refused and its controls pass (or are
    grey: the semantic stage decides)."""
    n, sentence = pair
    issued = dict(enumerate(blocks, start=1))
    scene = Scene(n, sentence, block_sentences(blocks[n - 1]), issued, random.Random(seed))
    for option in options_for(knob, scene):
        ok, why = verdict(blocks, option.text, n)
        if option.false:
            assert not ok, (option, why)
        else:
            assert ok or why.startswith("overlap"), (option, why)
