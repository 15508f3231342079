"""The rules that hold a sentence to the one statement of its cited blocks it restates (a
comparison turned, a condition reversed, a duty made advice, days narrowed, an exclusive
claim widened), run on each statement a sentence holds: the stream reads "... at most 300 cm.
Parcels over ..." as one sentence, and each rule, holding it to one statement, would
otherwise judge only the statement most of its words restate.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..language.statements import statement_spans
from .compared import compared, turned
from .conditions import conditioned
from .daykinds import day_kind, day_set
from .exclusive import exclusive
from .foreign import foreign_mismatch
from .obligation import obliged

__all__ = ["statement_rules"]


def statement_rules(sentence: str, evidence: Sequence[str]) -> str:
    """Why `sentence`, or one of the statements it holds, says otherwise than the statement
    of `evidence` it restates ("" if neither does)."""
    parts = [sentence]
    spans = statement_spans(sentence)
    if len(spans) > 1:
        parts += [sentence[s:e] for s, e in spans]
    for part in parts:
        why = compared(part, evidence) or turned(part, evidence) or conditioned(part, evidence)
        why = why or foreign_mismatch(part, evidence) or obliged(part, evidence)
        why = why or day_kind(part, evidence) or day_set(part, evidence)
        why = why or exclusive(part, evidence)
        if why:
            return why
    return ""
