"""The semantic stage's logistic combination fitted (calibrate_gate.py, tools/greyzone/): Newton's
method, each coefficient held to its sign, and the committed two models, one for evidence of one
sentence and one for several."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
# The committed two models' signals: evidence of one sentence (every signal before the
# foreign name) and of several (cosine, foreign name, weakest part of 3 or more pieces).
SINGLE_COLUMNS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
MULTI_COLUMNS = (1, 11, 12)


def fit(x: F64, y: F64, l2: float = 1e-2, weight_positive: float = 1.0) -> F64:
    """Logistic regression by Newton's method; returns [intercept, coefficients...]."""
    design = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(design.shape[1])
    sample = np.where(y > 0, weight_positive, 1.0)
    penalty = np.full(design.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ w, -40, 40)))
        grad = design.T @ (sample * (p - y)) + penalty * w
        hess = (design * (sample * p * (1 - p))[:, None]).T @ design + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return w


# The sign each coefficient must have: more support never lowers the probability, more
# unsupported weight never raises it. Unconstrained fits flip signs between correlated
# signals and then extrapolate badly (a sentence sharing nothing with its block passed).
SIGNS = (1, 1, 1, 1, -1, -1, -1, -1, 1, -1, 1, -1, 1)


def fit_signed(x: F64, y: F64, signs: Sequence[int], weight_positive: float = 1.0) -> F64:
    """`fit` with each coefficient of its sign in `signs` (0: free; a wrong-signed signal is
    dropped and the rest refitted); returns [intercept, one coefficient per column of x]."""
    active = list(range(x.shape[1]))
    while True:
        w = fit(x[:, active], y, weight_positive=weight_positive)
        wrong = [i for i, c in zip(active, w[1:], strict=True) if c * signs[i] < 0]
        if not wrong:
            full = np.zeros(x.shape[1] + 1)
            full[0] = w[0]
            for i, c in zip(active, w[1:], strict=True):
                full[i + 1] = c
            return full
        active = [i for i in active if i not in wrong]


def fit_monotone(x: F64, y: F64, columns: list[int], weight_positive: float = 1.0) -> F64:
    """`fit_signed` on `columns` of x with the signs in `SIGNS`."""
    return fit_signed(x[:, columns], y, [SIGNS[c] for c in columns], weight_positive)


def predict(w: F64, x: F64) -> F64:
    z = w[0] + x @ w[1:]
    result: F64 = 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))
    return result


Models = tuple[F64, F64]  # [intercept, coefficients...] over every column: one, several


def fit_models(
    x: F64,
    y: F64,
    multi: npt.NDArray[np.bool_],
    weight_positive: float = 1.0,
    columns: tuple[Sequence[int], Sequence[int]] = (SINGLE_COLUMNS, MULTI_COLUMNS),
    signs: Sequence[int] = SIGNS,
) -> Models:
    """The two models, each fitted on its rows (`multi`: the evidence has several sentences)
    and on its `columns` of x, spread over every column (0 for the columns it does not use)."""
    out = []
    for rows, used in ((~multi, columns[0]), (multi, columns[1])):
        full = np.zeros(x.shape[1] + 1)
        if rows.any():
            w = fit_signed(
                x[rows][:, list(used)], y[rows], [signs[c] for c in used], weight_positive
            )
            full[0] = w[0]
            full[[c + 1 for c in used]] = w[1:]
        out.append(full)
    return out[0], out[1]


def predict_models(models: Models, x: F64, multi: npt.NDArray[np.bool_]) -> F64:
    return np.where(multi, predict(models[1], x), predict(models[0], x))
