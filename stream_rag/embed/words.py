"""Context-free word vectors from MiniLM's input embeddings (the gate's soft unsupported
weight): the mean of a word's word-piece rows, normalised. Vectorised over the words of a call:
a grey-zone sentence's first use of a block can ask for a thousand new words, which one
tokenizer call and one numpy pass per word made a cold tail of several milliseconds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

F32 = npt.NDArray[np.float32]

__all__ = ["StaticVectors"]


class StaticVectors:
    """`__call__(words)` -> unit vectors (len(words), dim); thread-safe (read-only state)."""

    def __init__(self, tokenizer: Tokenizer, word_emb: F32) -> None:
        # The model's tokenizer truncates at 256 tokens; a call's words are tokenised as one
        # text here, so this copy truncates nothing (and pads nothing).
        self._tokenizer = Tokenizer.from_str(tokenizer.to_str())
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self._word_emb = word_emb
        self.dim = int(word_emb.shape[1])

    def __call__(self, words: Sequence[str]) -> F32:
        out = np.zeros((len(words), self.dim), dtype=np.float32)
        # Most words are one vocabulary entry: a dict lookup, no tokenizer pass.
        ids = [self._tokenizer.token_to_id(w) for w in words]
        single = [(i, token) for i, token in enumerate(ids) if token is not None]
        if single:
            out[[i for i, _ in single]] = self._word_emb[[token for _, token in single]]
        rest = [i for i, token in enumerate(ids) if token is None]
        if rest:
            self._pieces_mean(out, rest, [words[i] for i in rest])
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        normalised: F32 = out / np.maximum(norms, np.float32(1e-12))
        return normalised

    def _pieces_mean(self, out: F32, rows: list[int], words: list[str]) -> None:
        """out[rows[k]] = the mean of `words[k]`'s word-piece embeddings (zero if it has
        none), as `word_emb[pieces].mean(axis=0)` would give it, bit for bit."""
        # One text, the words separated by spaces: normalising and pre-tokenising work a
        # character or a word at a time, so each word gets the pieces it gets alone; each
        # piece goes back to its word by its character offset.
        starts = np.empty(len(words), dtype=np.int64)
        position = 0
        for k, word in enumerate(words):
            starts[k] = position
            position += len(word) + 1
        encoding = self._tokenizer.encode(" ".join(words), add_special_tokens=False)
        ids = encoding.ids  # a new list each time the property is read
        if not ids:
            return
        owner = np.searchsorted(starts, [s for s, _ in encoding.offsets], side="right") - 1
        # Pieces come in word order: each word's run starts where its owner changes.
        first = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        counts = np.diff(np.r_[first, len(owner)])
        where = np.asarray(rows)[owner[first]]
        pieces = np.asarray(ids, dtype=np.int64)
        # Words of k pieces together: an (n, k, dim) gather reduced over its middle axis adds
        # each word's rows in the order `word_emb[pieces].mean(axis=0)` does (the same bits;
        # a segmented sum, `add.reduceat`, differs in the last bit), then divides as it does.
        for k in np.unique(counts).tolist():
            group = np.flatnonzero(counts == k)
            taken = pieces[first[group][:, None] + np.arange(k)]
            sums = np.add.reduce(self._word_emb[taken], axis=1)
            out[where[group]] = np.true_divide(sums, np.intp(k), out=sums, casting="unsafe")
