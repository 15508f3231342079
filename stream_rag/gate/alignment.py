"""Contextual token alignment for the semantic stage (BERTScore precision): each content word
piece of the sentence against the stored word pieces of the cited block sentences nearest to
it, both MiniLM's last hidden states in the stored projection (embed/tokens.py). A
paraphrase finds a close piece for each of its words; a claim that adds a detail leaves the
detail's pieces without one (`words`: how well each word of the sentence is matched, for the
unsupported-term analysis in semantic.py). A long claim is supported only if every part of it
is, so the weakest part's alignment is kept too (`weakest_part`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..embed.blas import SINGLE_THREADED_BLAS
from ..embed.sentences import SentenceVectors
from ..embed.tokens import content_pieces, project

F32 = npt.NDArray[np.float32]

__all__ = ["LONG_PART_PIECES", "NEAREST", "PART_BOUNDARIES", "Alignment", "align", "parts"]

# Block sentences (by cosine to the sentence) whose word pieces a sentence is aligned to
# (3, 5, 8 and 12 measured: docs/decisions/).
NEAREST = 8
# Word pieces that end a part of a claim: punctuation, conjunctions, relatives and the
# prepositions that attach another fact ("..., which ...", "... after ...", "... with ...").
PART_BOUNDARIES = (
    frozenset((",", ";", ":", "(", ")", "-", "\u2013", "\u2014", "and", "but", "while", "whereas"))
    | frozenset(("which", "who", "whom", "whose", "where", "when", "although", "though", "because"))
    | frozenset(("including", "after", "before", "as", "with", "since"))
)
# A part needs this many content pieces to be judged alone (shorter ones join no other);
# the model for several-sentence evidence reads the weakest part of at least LONG_PART_PIECES
# (docs/decisions/, WiCE section).
PART_MIN_PIECES = 2
LONG_PART_PIECES = 3


@dataclass(frozen=True, slots=True)
class Alignment:
    mean: float  # mean over the sentence's content pieces of their best match
    words: dict[str, float]  # each content word (pieces joined) -> mean best match of its pieces
    weakest_part: float = 0.0  # the lowest mean best match over the sentence's parts
    weakest_long_part: float = 0.0  # the same over its parts of >= LONG_PART_PIECES pieces
    # The mean best match against the given window's sentences alone: how much of the match
    # one window accounts for (semantic.py picks the one-sentence model when it is all of it).
    window: float = 0.0


def align(
    pieces: Sequence[str],
    states: F32,
    sentence_vector: F32,
    cited: Sequence[int],
    vectors: Callable[[int], SentenceVectors],
    nearest: int = NEAREST,
    window: Sequence[tuple[int, int]] = (),
) -> Alignment | None:
    """The alignment of a sentence's word pieces (`states`, its last hidden states) to the
    nearest cited block sentences, and to `window`'s sentences alone ((block, sentence index)
    pairs); None if a cited block has no stored word pieces."""
    ranked: list[tuple[float, int, int]] = []
    stored = {}
    for n in sorted(set(cited)):
        block = vectors(n)
        if block.tokens is None:
            return None
        stored[n] = block.tokens
        sims = block.vectors @ sentence_vector
        ranked += [(float(s), n, i) for i, s in enumerate(sims)]
    ranked.sort(key=lambda item: -item[0])
    rows = [stored[n].rows([i]) for _, n, i in ranked[:nearest]]
    near = np.vstack(rows) if rows else np.zeros((0, 1), np.float32)
    keep = content_pieces(pieces) or list(range(len(pieces)))
    if not keep or not len(near):
        return Alignment(0.0, {})
    # Small GEMMs: on OpenBLAS's thread pool each would wait for its threads (milliseconds
    # on a busy machine, measured), so they run on this thread alone.
    with SINGLE_THREADED_BLAS:
        projected = project(states[keep], near.shape[1])
        best = (projected @ near.T).max(axis=1)
        in_window = [stored[n].rows([i]) for n, i in window if n in stored]
        window_mean = (
            float((projected @ np.vstack(in_window).T).max(axis=1).mean()) if in_window else 0.0
        )
    by_row = dict(zip(keep, best.tolist(), strict=True))
    weakest, weakest_long = (
        min(sum(by_row[i] for i in part) / len(part) for part in parts(pieces, keep, least))
        for least in (PART_MIN_PIECES, LONG_PART_PIECES)
    )
    words = _word_scores(pieces, keep, best)
    return Alignment(float(best.mean()), words, float(weakest), float(weakest_long), window_mean)


def parts(
    pieces: Sequence[str], keep: Sequence[int], least: int = PART_MIN_PIECES
) -> list[list[int]]:
    """The sentence's parts: runs of its content pieces (rows in `keep`) between boundary
    pieces, those with at least `least`; all of `keep` if none has."""
    kept = set(keep)
    out: list[list[int]] = [[]]
    for i, piece in enumerate(pieces):
        if piece in PART_BOUNDARIES:
            out.append([])
        elif i in kept:
            out[-1].append(i)
    judged = [part for part in out if len(part) >= least]
    return judged or [list(keep)]


def _word_scores(pieces: Sequence[str], keep: Sequence[int], best: F32) -> dict[str, float]:
    """Each word (a piece and its `##` continuations) -> mean best match of its kept pieces."""
    word, words, spelled = -1, list[int](), list[str]()
    for piece in pieces:
        if piece.startswith("##") and spelled:
            spelled[-1] += piece[2:]
        else:
            word += 1
            spelled.append(piece)
        words.append(word)
    matches: dict[int, list[float]] = {}
    for row, score in zip(keep, best, strict=True):
        matches.setdefault(words[row], []).append(float(score))
    return {spelled[w]: sum(v) / len(v) for w, v in matches.items()}
