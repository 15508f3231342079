"""The numpy building blocks of MiniLM's forward pass: weights of one layer, LayerNorm, GELU."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

__all__ = ["Layer", "frozen", "gelu", "gelu_", "layer_norm_"]

F32 = npt.NDArray[np.float32]


# erf(u) ~= u * P(u^2) / Q(u^2) for |u| <= 4 (Eigen's float32 rational erf).
_ERF_P: Final = (
    -2.72614225801306e-10,
    2.77068142495902e-08,
    -2.10102402082508e-06,
    -5.69250639462346e-05,
    -7.34990630326855e-04,
    -2.95459980854025e-03,
    -1.60960333262415e-02,
)
_ERF_Q: Final = (
    -1.45660718464996e-05,
    -2.13374055278905e-04,
    -1.68282697438203e-03,
    -7.37332916720468e-03,
    -1.42647390514189e-02,
)


def _gelu_coefficients() -> tuple[tuple[np.float32, ...], tuple[np.float32, ...]]:
    """Fold u = x/sqrt(2) and the 0.5 factor of GELU into the erf polynomials.

    With z = x^2 (= 2 u^2): 0.5 * erf(x / sqrt 2) = x * P'(z) / Q'(z), where
    P' has coefficients p_k / 2^k * 0.5 / sqrt(2) and Q' has q_k / 2^k
    (highest degree first, as in the tables above).
    """
    deg_p = len(_ERF_P) - 1
    deg_q = len(_ERF_Q) - 1
    scale = 0.5 / math.sqrt(2.0)
    p = tuple(np.float32(c * scale / 2.0 ** (deg_p - i)) for i, c in enumerate(_ERF_P))
    q = tuple(np.float32(c / 2.0 ** (deg_q - i)) for i, c in enumerate(_ERF_Q))
    return p, q


_GELU_P, _GELU_Q = _gelu_coefficients()
_GELU_CLIP: Final = np.float32(4.0 * math.sqrt(2.0))
_HALF: Final = np.float32(0.5)


def gelu_(h: F32, xc: F32, z: F32, p: F32, q: F32) -> None:
    """In place: h <- h * 0.5 * (1 + erf(h / sqrt 2)). xc..q are scratch."""
    np.clip(h, -_GELU_CLIP, _GELU_CLIP, out=xc)
    np.multiply(xc, xc, out=z)
    np.multiply(z, _GELU_P[0], out=p)
    for c in _GELU_P[1:-1]:
        p += c
        p *= z
    p += _GELU_P[-1]
    p *= xc
    np.multiply(z, _GELU_Q[0], out=q)
    for c in _GELU_Q[1:-1]:
        q += c
        q *= z
    q += _GELU_Q[-1]
    p /= q
    p += _HALF
    h *= p


def gelu(x: F32) -> F32:
    """Exact-form (erf) GELU in float32, returns a new array."""
    h = np.array(x, dtype=np.float32, copy=True)
    scratch = [np.empty_like(h) for _ in range(4)]
    gelu_(h, *scratch)
    return h


@dataclass(frozen=True)
class Layer:
    w_qkv: F32  # (384, 1152), query part pre-scaled by 1/sqrt(head_dim)
    b_qkv: F32  # (1152,)
    w_o: F32  # (384, 384)
    b_o: F32
    ln1_g: F32
    ln1_b: F32
    w_1: F32  # (384, 1536)
    b_1: F32
    w_2: F32  # (1536, 384)
    b_2: F32
    ln2_g: F32
    ln2_b: F32


def frozen(a: npt.NDArray[Any]) -> F32:
    out = np.ascontiguousarray(a, dtype=np.float32)
    if out is a:
        out = out.copy()
    out.flags.writeable = False
    return out


def layer_norm_(x: F32, gamma: F32, beta: F32, eps: np.float32, tmp: F32) -> None:
    """In-place LayerNorm over the last axis; tmp has x's shape."""
    # The means are `ndarray.mean`'s own two steps (a float32 sum, then a division by the
    # count as an intp, cast back unsafely): the same bits without its Python wrapper,
    # ~13 us less of a question's cold embedding layer.
    n = np.intp(x.shape[-1])
    mean = np.add.reduce(x, axis=-1, dtype=np.float32, keepdims=True)
    np.true_divide(mean, n, out=mean, casting="unsafe")
    x -= mean
    np.multiply(x, x, out=tmp)
    var = np.add.reduce(tmp, axis=-1, dtype=np.float32, keepdims=True)
    np.true_divide(var, n, out=var, casting="unsafe")
    var += eps
    np.sqrt(var, out=var)
    np.divide(np.float32(1.0), var, out=var)
    x *= var
    x *= gamma
    x += beta
