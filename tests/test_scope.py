"""Words that widen a claim's scope beyond its cited blocks' (gate/scope.py)."""

from __future__ import annotations

from stream_rag.gate.scope import widened

BLOCK = "The warranty covers faults in materials and workmanship for two years."


def test_a_scope_word_no_block_uses_is_found() -> None:
    assert widened("The warranty covers any damage for two years.", [BLOCK]) == ["any"]
    assert widened("Support can ALWAYS redirect it, and only by phone.", [BLOCK]) == [
        "always",
        "only",
    ]


def test_a_scope_word_a_block_uses_or_none_at_all_is_not() -> None:
    assert widened("It covers faults for two years.", [BLOCK]) == []
    assert widened("You can cancel at any time.", ["Cancel at any time in Settings."]) == []
    # Another cited block using the word is enough; "anyway" is not "any".
    assert widened("All plans include it.", [BLOCK, "All plans include backups."]) == []
    assert widened("It is covered anyway.", [BLOCK]) == []
