"""Context-free word vectors (embed/words.py) and the semantic stage's start-up warm-up: both
give the values the plain per-word computation gives, bit for bit."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.embed.sentences import embed_sentences, warm_up
from stream_rag.embed.words import StaticVectors

from .gate_blocks import BLOCKS

# Vocabulary entries, words of several pieces, capitals, accents, punctuation inside a word,
# a ligature, CJK (a piece a character), control and zero-width characters (no piece at
# all), a word longer than WordPiece reads (one [UNK]), and repeats.
WORDS = [
    "warranty",
    "guarantee",
    "photosynthesis",
    "Hello",
    "andré",
    "naïve",
    "straße",
    "\ufb01nance",
    "1.125m",
    "e-mail",
    '"Aerobus",',
    "日本語",
    "x\x00y",
    "\u200b",
    "",
    "a" * 150,
    "00pmnycnycfcclbcolumbusregular",
    "warranty",
    "photosynthesis",
]


def one_by_one(
    tokenizer: Tokenizer, word_emb: npt.NDArray[np.float32], words: list[str]
) -> npt.NDArray[np.float32]:
    """Each word tokenised alone, its pieces' embeddings averaged, then normalised."""
    out = np.zeros((len(words), word_emb.shape[1]), np.float32)
    for i, word in enumerate(words):
        ids = tokenizer.encode(word, add_special_tokens=False).ids
        if ids:
            out[i] = word_emb[ids].mean(axis=0)
    unit: npt.NDArray[np.float32] = out / np.maximum(
        np.linalg.norm(out, axis=1, keepdims=True), np.float32(1e-12)
    )
    return unit


def test_static_vectors_are_the_per_word_mean_of_piece_embeddings(minilm: MiniLMEmbedder) -> None:
    expected = one_by_one(minilm._tokenizer, minilm._bert.word_emb, WORDS)
    got = minilm.static_vectors(WORDS)
    assert got.dtype == np.float32
    assert np.array_equal(got, expected)
    # A word's vector does not depend on the words asked with it.
    for i, word in enumerate(WORDS):
        assert np.array_equal(minilm.static_vectors([word])[0], expected[i])
    assert np.array_equal(minilm.static_vectors(WORDS[::-1]), expected[::-1])
    assert not expected[WORDS.index("\u200b")].any()  # zero-width: no piece, no vector
    assert minilm.static_vectors([]).shape == (0, minilm.dim)


def test_the_warm_up_changes_no_vector(minilm: MiniLMEmbedder) -> None:
    encoder = minilm.with_precision("int8")
    before = embed_sentences(BLOCKS, encoder)
    warm_up(encoder)
    after = embed_sentences(BLOCKS, encoder)
    for a, b in zip(before, after, strict=True):
        assert np.array_equal(a.vectors, b.vectors)
        assert a.tokens is not None
        assert b.tokens is not None
        assert np.array_equal(a.tokens.states, b.tokens.states)


def test_remembered_pieces_give_the_same_vectors_past_the_limit(minilm: MiniLMEmbedder) -> None:
    vectors = StaticVectors(minilm._tokenizer, minilm._bert.word_emb)
    vectors.LIMIT = 3  # forgets everything whenever a call brings more than it has room for
    expected = one_by_one(minilm._tokenizer, minilm._bert.word_emb, WORDS)
    for _ in range(2):
        for start in range(0, len(WORDS), 4):
            assert np.array_equal(vectors(WORDS[start : start + 4]), expected[start : start + 4])
    pieces = minilm._tokenizer.encode("photosynthesis", add_special_tokens=False).ids
    assert vectors.pieces(["photosynthesis"]) == [tuple(pieces)]
