"""The frozen baseline: all six MiniLM layers frozen, a logistic model on the claim's and the
evidence's mean states, out of fold as `train.py` (same folds, same `oof.jsonl` format).

    /tmp/vtrain/bin/python tools/verifier/probe.py pairs.jsonl --work DIR [--merge 2] [--l2 0.01]

Needs `DIR/states.npz` (the lower layers' states `train.py` caches).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
import bert
import folds
from train import FROZEN, MODEL_DIR, stacked


def features(rows: list[dict], states: list[np.ndarray]) -> torch.Tensor:
    model = bert.load(MODEL_DIR).eval()
    out = []
    with torch.no_grad():
        for b in range(0, len(rows), 64):
            idx = list(range(b, min(b + 64, len(rows))))
            x, types, mask = stacked(rows, states, idx)
            bias = (1.0 - mask[:, None, None, :]) * -1e4
            for layer in model.layers[FROZEN:]:
                x = layer(x, bias)
            claim, ev = types * mask, (1.0 - types) * mask
            c = (x * claim[..., None]).sum(1) / claim.sum(1, keepdim=True).clamp(min=1.0)
            e = (x * ev[..., None]).sum(1) / ev.sum(1, keepdim=True).clamp(min=1.0)
            out.append(torch.cat([c, e, c * e, (c - e).abs()], dim=-1))
    return torch.cat(out)


def fit(
    f: torch.Tensor, y: torch.Tensor, train: list[int], l2: float
) -> Callable[[list[int]], list[float]]:
    mu, sd = f[train].mean(0), f[train].std(0) + 1e-6
    x = (f[train] - mu) / sd
    w = torch.zeros(f.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=300)
    pos = y[train].mean()
    weight = torch.where(y[train] > 0.5, 0.5 / pos, 0.5 / (1 - pos))

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            x @ w + b, y[train], reduction="none"
        )
        total = (loss * weight).mean() + l2 * (w * w).sum()
        total.backward()
        return total

    opt.step(closure)
    return lambda test: torch.sigmoid(((f[test] - mu) / sd) @ w + b).detach().tolist()


def main() -> int:
    parser = folds.arguments(__doc__)
    parser.add_argument("--l2", type=float, default=0.01)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = folds.read(args.pairs, args.merge)
    states = list(np.load(args.work / "states.npz", allow_pickle=True)["states"])
    f = features(rows, states)
    y = torch.tensor([float(r["label"]) for r in rows])
    oof: dict[int, float] = {}
    for _, tr, te in folds.splits(rows):
        oof.update(zip(te, fit(f, y, tr, args.l2)(te), strict=True))
    tr, lf = folds.held_out(rows)
    oof.update(zip(lf, fit(f, y, tr, args.l2)(lf), strict=True))
    with (args.work / "probe_oof.jsonl").open("w") as out:
        for i, p in sorted(oof.items()):
            out.write(folds.oof_line(rows[i], p))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
