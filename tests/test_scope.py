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
    # "not only A but also B" widens nothing; "only" alone still does.
    assert widened("It covers not only faults but also wear.", [BLOCK]) == []
    assert widened("It covers only faults, not wear.", [BLOCK]) == ["only"]


def test_a_word_of_the_same_sense_vouches() -> None:
    each = "Each plan includes backups."
    assert widened("Every plan includes backups.", [each]) == []
    assert widened("All plans include backups.", [each]) == []
    assert widened("She was the only member to vote no.", ["She was the lone member."]) == []
    assert widened("Any plan includes backups.", [each]) == ["any"]
    assert widened("You earn a point for every euro.", ["One point per euro spent."]) == []
    assert widened("Cancel at any time.", ["Cancel whenever you like."]) == []
    assert widened("Members always ship free.", ["Free shipping on every order."]) == []


def test_the_gate_drops_a_sentence_saying_more_than_its_block() -> None:
    from stream_rag.gate.citations import Citation
    from stream_rag.gate.lexical import GateContext

    ctx = GateContext(["The app is owned by Facebook. Refunds take five days."])
    verdict = ctx.check("The apps are all owned by Facebook.", [Citation(1)])
    assert (verdict.ok, verdict.reason) == (False, "claim_mismatch")
    assert "'all'" in verdict.detail
    assert ctx.check("The app is owned by Facebook.", [Citation(1)]).ok
