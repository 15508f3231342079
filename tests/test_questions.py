from __future__ import annotations

import numpy as np

from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.index.questions import chunk_questions, embed_questions, question_hits


def test_a_chunk_answers_the_questions_heading_it() -> None:
    text = "## Can I pay later?\n\nYes, in three parts.\n\n## Is PayPal accepted?\n\nYes."
    assert chunk_questions(text, ["Payments"]) == ["Can I pay later?", "Is PayPal accepted?"]
    # No heading inside: the innermost one above it, when that asks something.
    assert chunk_questions("Yes, in three parts.", ["Payments", "Can I pay later?"]) == [
        "Can I pay later?"
    ]
    assert chunk_questions("Yes, in three parts.", ["Can I pay later?", "Details"]) == []
    assert chunk_questions("# Refund policy\n\nRefunds take 5 days.", []) == []
    # A plain-text FAQ line counts as its heading.
    assert chunk_questions("How much water does it hold?\n\n1.7 litres.", []) == [
        "How much water does it hold?"
    ]
    # A question line with its answer on the next line, no blank line between.
    faq = "Q: Can I pay later?\nA: Yes, in three parts.\n\nQ: Is PayPal accepted?\nA: Yes."
    assert chunk_questions(faq, []) == ["Q: Can I pay later?", "Q: Is PayPal accepted?"]
    assert chunk_questions("Refunds take 5 days. Why?\nBecause banks are slow.", []) == []


def test_question_hits_take_each_chunks_best_question(minilm: MiniLMEmbedder) -> None:
    asked = [["Can I pay later?", "Do gift cards expire?"], [], ["How long is delivery?"]]
    vectors = embed_questions(minilm, asked)
    assert [v.shape for v in vectors] == [(2, minilm.dim), (0, minilm.dim), (1, minilm.dim)]
    query = minilm.embed(["When does my gift voucher run out?"])[0]
    dense = [("a", 0.1), ("b", 0.2), ("c", 0.3)]
    hits = dict(question_hits(query, {"a": vectors[0], "c": vectors[2]}, dense))
    assert hits["a"] == float(np.max(vectors[0] @ query)) > hits["c"]
    assert hits["b"] == 0.2  # no question: its own dense score
    assert question_hits(query, {}, dense) == []  # no question anywhere: no branch
