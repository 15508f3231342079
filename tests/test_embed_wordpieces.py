"""Token ids of plain-ASCII texts from remembered word pieces (embed/wordpieces.py): always
the tokenizer's own ids, or no answer (the tokenizer's path)."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.embed.wordpieces import WordPieceMemo

# Cranfield questions as its queries file has them (lowercase, " ." and " ?" spaced).
QUESTIONS = [
    "what similarity laws must be obeyed when constructing aeroelastic models of heated high"
    " speed aircraft .",
    "how can the aerodynamic performance of channel flow ground effect machines be calculated .",
    "what is the basic mechanism of the transonic aileron buzz .",
    "papers on shock-sound wave interaction .",
    "what are the existing solutions for hypersonic viscous interactions over an insulated flat"
    " plate .",
    "has anyone investigated the effect of surface mass transfer on hypersonic viscous"
    " interactions .",
    "what is the effect of the boundary layer on the 'edge' of a 2:1 elliptic cone at m=6.8 ?",
]
# Words, numbers, every punctuation character, whitespace BERT splits on, control characters
# it drops, and a little Unicode.
ALPHABET = string.ascii_letters + string.digits + string.punctuation + " \t\n\r\x00\x0b\x0c\x7fé中"


def fresh(minilm: MiniLMEmbedder, limit: int = 20_000) -> tuple[WordPieceMemo, Tokenizer]:
    tokenizer: Tokenizer = minilm._tokenizer
    return WordPieceMemo(tokenizer, minilm.max_seq_length, limit), tokenizer


@settings(deadline=None, max_examples=300)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet=ALPHABET, max_size=30),
            st.sampled_from(["[CLS]", "[mask]", "[PAD]", "unaffable", "x" * 120, "Mach 2.5"]),
        ),
        max_size=8,
    )
)
def test_the_ids_are_the_tokenizers_whenever_it_answers(
    minilm: MiniLMEmbedder, parts: list[str]
) -> None:
    text = " ".join(parts)
    memo, tokenizer = fresh(minilm, limit=50)  # small: the memo starts over now and then
    expected = tokenizer.encode(text).ids
    found = memo.ids(text)
    if found is not None:
        assert found == expected
    assert minilm.tokenize([text]) == [expected]


def test_plain_questions_take_the_memo_and_the_rest_does_not(minilm: MiniLMEmbedder) -> None:
    memo, tokenizer = fresh(minilm)
    questions = [*QUESTIONS, "What is the REFUND policy?", "a-b_c (d) 3.14 [x]", "tabs\tand\nlines"]
    for question in questions:
        assert memo.ids(question) == tokenizer.encode(question).ids
    for other in ("café", "bell\x07", "why [MASK] it", "[SEP]", "word " * 300):
        assert memo.ids(other) is None
    assert minilm.tokenize(["word " * 300]) == [tokenizer.encode("word " * 300).ids]
    assert len(minilm.tokenize(["word " * 300])[0]) == minilm.max_seq_length
