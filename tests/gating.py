"""One sentence judged by the gate against a few blocks, as the clause-check tests ask it."""

from __future__ import annotations

from collections.abc import Sequence

from stream_rag.gate.citations import Citation
from stream_rag.gate.lexical import GateContext


def verdict(blocks: Sequence[str], sentence: str, block: int) -> tuple[bool, str]:
    """Whether `sentence`, citing block `block` (1-based) of `blocks`, is shown, and why not."""
    ctx = GateContext(blocks)
    text, _, units = ctx.read(f"{sentence} [{block}]")
    result = ctx.check(text, [Citation(block)], units)
    return result.ok, result.detail
