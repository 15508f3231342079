"""loadtests/bench_question_encoders.py: which word pieces the late drop keeps, the fitting
sample, and the variants' vectors."""

from __future__ import annotations

import numpy as np

from loadtests.bench_question_encoders import Questions, Towers, collection_sentences
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.retrieve.metrics import BeirSet


def test_kept_drops_whole_stop_words_and_punctuation_only(minilm: MiniLMEmbedder) -> None:
    towers = Towers(minilm)
    ids = towers.int8.tokenize(["What is the isentropic flow in nozzles?"])[0]
    pieces = [minilm._tokenizer.id_to_token(i) for i in ids]
    kept = [pieces[i] for i in towers.kept(ids)]
    # "isentropic" starts with the piece "is" and "nozzles" with "no": both are kept whole.
    assert kept == ["[CLS]", "is", "##ent", "##rop", "##ic", "flow", "no", "##zzle", "##s", "[SEP]"]
    only_stop = towers.int8.tokenize(["what is it?"])[0]
    assert towers.kept(only_stop).tolist() == list(range(len(only_stop)))


def test_variants_give_unit_vectors(minilm: MiniLMEmbedder) -> None:
    towers = Towers(minilm)
    text = "How long is the warranty on the blender?"
    late = Questions("late:3", towers.late(3)).embed([text])
    assert late.shape == (1, 384)
    assert abs(float(np.linalg.norm(late)) - 1) < 1e-5
    full = towers.int8.embed([text])
    # The kept pieces saw the whole question for three layers: near the full vector.
    assert float(late[0] @ full[0]) > 0.8
    assert abs(float(np.linalg.norm(Questions("strip", towers.strip()).embed([text]))) - 1) < 1e-5


def test_collection_sentences_is_a_seeded_sample_of_documents_sentences() -> None:
    data = BeirSet(
        corpus={"1": "Too short. This sentence has enough words in it. Another one is here too."},
        queries={},
        qrels={},
    )
    first = collection_sentences(data, 1)
    assert first == collection_sentences(data, 1)
    assert first[0] in ("This sentence has enough words in it.", "Another one is here too.")
    assert len(collection_sentences(data, 10)) == 2
