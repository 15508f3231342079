"""Context-free word vectors from MiniLM's input embeddings (the gate's soft unsupported
weight): the mean of a word's word-piece rows, normalised. Vectorised over the words of a call:
a grey-zone sentence's first use of a block can ask for a thousand new words, which one
tokenizer call and one numpy pass per word made a cold tail of several milliseconds.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

F32 = npt.NDArray[np.float32]

__all__ = ["StaticVectors"]


class StaticVectors:
    """`__call__(words)` -> unit vectors (len(words), dim); thread-safe."""

    # Words whose word pieces are remembered (a tuple of ids each, ~100 bytes): a request's
    # cited blocks can bring a thousand words that are not one vocabulary entry, and the
    # tokenizer is most of their cost (the caller's cache of vectors holds far fewer).
    LIMIT = 65536

    def __init__(self, tokenizer: Tokenizer, word_emb: F32) -> None:
        # The model's tokenizer truncates at 256 tokens; a call's new words are tokenised as
        # one text here, so this copy truncates nothing (and pads nothing).
        self._tokenizer = Tokenizer.from_str(tokenizer.to_str())
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self._word_emb = word_emb
        self.dim = int(word_emb.shape[1])
        self._pieces: dict[str, tuple[int, ...]] = {}
        self._lock = threading.Lock()

    def __call__(self, words: Sequence[str]) -> F32:
        out = np.zeros((len(words), self.dim), dtype=np.float32)
        # Most words are one vocabulary entry: a dict lookup, no tokenizer pass.
        ids = [self._tokenizer.token_to_id(w) for w in words]
        single = [(i, token) for i, token in enumerate(ids) if token is not None]
        if single:
            out[[i for i, _ in single]] = self._word_emb[[token for _, token in single]]
        rest = [i for i, token in enumerate(ids) if token is None]
        if rest:
            pieces = self.pieces([words[i] for i in rest])
            # Words of k pieces together: an (n, k, dim) gather reduced over its middle axis
            # adds each word's rows in the order `word_emb[pieces].mean(axis=0)` does (the
            # same bits; a segmented sum, `add.reduceat`, differs in the last bit), then
            # divides as `mean` does (its float32 sum by an intp count).
            counts = np.array([len(p) for p in pieces])
            for k in np.unique(counts).tolist():
                if k == 0:
                    continue  # no piece at all (a zero-width character): no vector
                group = np.flatnonzero(counts == k)
                taken = np.array([pieces[g] for g in group.tolist()], dtype=np.int64)
                sums = np.add.reduce(self._word_emb[taken], axis=1)
                rows = np.asarray(rest)[group]
                out[rows] = np.true_divide(sums, np.intp(k), out=sums, casting="unsafe")
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        normalised: F32 = out / np.maximum(norms, np.float32(1e-12))
        return normalised

    def pieces(self, words: Sequence[str]) -> list[tuple[int, ...]]:
        """Each word's word-piece ids as the model's tokenizer gives them for the word alone."""
        found = [self._pieces.get(w) for w in words]
        new = list(dict.fromkeys(w for w, p in zip(words, found, strict=True) if p is None))
        if new:
            computed = self._tokenize(new)
            with self._lock:
                if len(self._pieces) + len(new) > self.LIMIT:
                    self._pieces.clear()
                self._pieces.update(computed)
            found = [computed[w] if p is None else p for w, p in zip(words, found, strict=True)]
        return [p for p in found if p is not None]

    def _tokenize(self, words: list[str]) -> dict[str, tuple[int, ...]]:
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
        owner = np.searchsorted(starts, [s for s, _ in encoding.offsets], side="right") - 1
        grouped: list[list[int]] = [[] for _ in words]
        for word, piece in zip(owner.tolist(), ids, strict=True):
            grouped[word].append(piece)
        return {w: tuple(p) for w, p in zip(words, grouped, strict=True)}
