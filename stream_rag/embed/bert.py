"""MiniLM's BERT encoder in numpy: the weights, read from the model's safetensors, and the
forward pass over a packed token matrix.

The forward pass works on all the tokens of a batch concatenated, no padding, so the dense
layers never compute padding. Attention runs per group of equal-length sequences, which makes
the attention mask unnecessary (every key in a group is a real token). Everything is float32;
an instance holds only read-only weights and every call allocates its own scratch buffers, so
one instance can be shared by threads.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from safetensors.numpy import load_file

from .layers import Layer, frozen, gelu_, layer_norm_

__all__ = ["BertEncoder"]

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]

# Rows of the packed token matrix per feed-forward matmul (big enough for
# efficient GEMMs) and per GELU sub-block (small enough to stay in cache).
_FFN_ROWS: Final = 2048
_GELU_ROWS: Final = 128
# Cap on elements of one (group, heads, L, L) attention-score block.
_ATTN_SCORE_ELEMS: Final = 1 << 20


class BertEncoder:
    """The encoder's weights (positions up to `max_seq_length`) and its numpy forward pass."""

    def __init__(self, model_dir: Path, dim: int, max_seq_length: int) -> None:
        """Read config.json and model.safetensors of `model_dir`; ValueError if the config
        is not a `dim`-wide GELU BERT taking `max_seq_length` positions."""
        self.dim = dim
        config: dict[str, Any] = json.loads((model_dir / "config.json").read_text("utf-8"))
        hidden = int(config["hidden_size"])
        if hidden != dim:
            raise ValueError(f"expected hidden_size {dim}, config says {hidden}")
        if str(config.get("hidden_act", "gelu")) != "gelu":
            raise ValueError(f"unsupported hidden_act {config.get('hidden_act')!r}")
        self.heads: int = int(config["num_attention_heads"])
        self.head_dim: int = hidden // self.heads
        self.eps: np.float32 = np.float32(config.get("layer_norm_eps", 1e-12))
        max_pos = int(config["max_position_embeddings"])
        if not 2 <= max_seq_length <= max_pos:
            raise ValueError(f"max_seq_length must be in [2, {max_pos}], got {max_seq_length}")

        w = load_file(str(model_dir / "model.safetensors"))
        self.word_emb: F32 = frozen(w["embeddings.word_embeddings.weight"])
        # token_type_ids are always 0 for single sentences: fold into positions.
        pos = w["embeddings.position_embeddings.weight"][:max_seq_length]
        self._pos_emb: F32 = frozen(pos + w["embeddings.token_type_embeddings.weight"][0])
        self._emb_ln_g: F32 = frozen(w["embeddings.LayerNorm.weight"])
        self._emb_ln_b: F32 = frozen(w["embeddings.LayerNorm.bias"])

        scale = np.float32(1.0 / math.sqrt(self.head_dim))
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
        self.layers: tuple[Layer, ...] = tuple(layers)
        for layer in self.layers:
            if layer.w_qkv.dtype != np.float32:  # pragma: no cover - sanity
                raise TypeError("weights must be float32")

    def embedded(self, seq: list[int]) -> F32:
        """The embedding layer's output (LayerNorm included) for one sequence."""
        x: F32 = self.word_emb[seq]
        x += self._pos_emb[: len(seq)]
        layer_norm_(x, self._emb_ln_g, self._emb_ln_b, self.eps, np.empty_like(x))
        return x

    def encode(self, seqs: list[list[int]], states: list[F32] | None = None) -> F32:
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
            cap = max(1, _ATTN_SCORE_ELEMS // (self.heads * seq_len * seq_len))
            j = i
            while j < n and j - i < cap and int(lengths[j]) == seq_len:
                j += 1
            groups.append((int(offsets[i]), j - i, seq_len))
            i = j

        x: F32 = self.word_emb[flat]
        x += self._pos_emb[positions]
        tmp = np.empty_like(x)
        layer_norm_(x, self._emb_ln_g, self._emb_ln_b, self.eps, tmp)

        d = self.dim
        heads = self.heads
        hd = self.head_dim
        qkv = np.empty((total, 3 * d), dtype=np.float32)
        ctx = np.empty((total, d), dtype=np.float32)
        rows = min(_FFN_ROWS, total)
        inner = self.layers[0].w_1.shape[1]
        h = np.empty((rows, inner), dtype=np.float32)
        sub = min(_GELU_ROWS, rows)
        scratch = [np.empty((sub, inner), dtype=np.float32) for _ in range(4)]

        for layer in self.layers:
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
            layer_norm_(x, layer.ln1_g, layer.ln1_b, self.eps, tmp)

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
            layer_norm_(x, layer.ln2_g, layer.ln2_b, self.eps, tmp)

        if states is not None:
            states.extend(np.split(x, offsets[1:]))
        pooled: F32 = np.add.reduceat(x, offsets, axis=0, dtype=np.float32)
        pooled /= lengths.astype(np.float32)[:, None]
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        pooled /= np.maximum(norms, np.float32(1e-12))
        return pooled
