"""Throughput: numpy MiniLMEmbedder vs sentence-transformers, same process.

Run with the venv that has both PyTorch and numpy/tokenizers/safetensors:

    HF_HUB_OFFLINE=1 python -m loadtests.bench_embedder [--n 2000]

(in a venv that also has sentence-transformers, e.g. with `pip install torch==2.13.0
sentence-transformers`; stream_rag never needs them).

Texts are built deterministically from the Cranfield corpus
(/work/shared/data/cranfield/corpus.jsonl) or, if it is absent, from generated
sentences; lengths are drawn uniformly from 5..300 words.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from stream_rag.embed.minilm import MiniLMEmbedder, find_model_dir

CRANFIELD = Path("/work/shared/data/cranfield/corpus.jsonl")


def _word_stream() -> list[str]:
    if CRANFIELD.is_file():
        words: list[str] = []
        with CRANFIELD.open(encoding="utf-8") as fh:
            for line in fh:
                doc = json.loads(line)
                words.extend(str(doc.get("text", "")).split())
        if words:
            return words
    rng = random.Random(7)
    subjects = ["the wing", "a boundary layer", "the shock wave", "our model", "the flow"]
    verbs = ["increases", "reduces", "separates from", "interacts with", "predicts"]
    objects = ["the drag", "surface pressure", "heat transfer", "the lift curve", "vortex shedding"]
    words = []
    for _ in range(60_000):
        sent = f"{rng.choice(subjects)} {rng.choice(verbs)} {rng.choice(objects)} ."
        words.extend(sent.split())
    return words


def build_texts(n: int, seed: int = 1234) -> list[str]:
    words = _word_stream()
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        k = rng.randint(5, 300)
        start = rng.randrange(0, len(words) - k)
        texts.append(" ".join(words[start : start + k]))
    return texts


def blas_report() -> str:
    lines = [
        f"numpy {np.__version__}",
        (
            f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '<unset>')} "
            f"OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE', '<unset>')}"
        ),
    ]
    try:
        from threadpoolctl import (  # type: ignore[import-not-found, unused-ignore]
            threadpool_info,
        )
    except ImportError:
        lines.append("threadpoolctl not installed")
    else:
        for info in threadpool_info():
            lines.append(
                f"  {info.get('user_api')}: {info.get('internal_api')} "
                f"{info.get('version')} arch={info.get('architecture', '-')} "
                f"threads={info.get('num_threads')} ({Path(str(info.get('filepath'))).name})"
            )
    return "\n".join(lines)


def load_average() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "n/a"


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3, help="timed passes over all texts")
    ap.add_argument("--slices", type=int, default=8, help="texts are timed in this many slices")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument(
        "--num-threads",
        type=int,
        default=None,
        help="MiniLMEmbedder num_threads (default: its own default, usable CPUs)",
    )
    ap.add_argument("--skip-st", action="store_true", help="only time the numpy embedder")
    args = ap.parse_args(argv)

    texts = build_texts(args.n)
    n_words = [len(t.split()) for t in texts]
    step = -(-len(texts) // args.slices)
    slices = [texts[i : i + step] for i in range(0, len(texts), step)]

    local = MiniLMEmbedder(batch_size=args.batch_size, num_threads=args.num_threads)
    n_tok = [len(ids) for ids in local.tokenize(texts)]
    print(
        f"{len(texts)} texts, words min/mean/max {min(n_words)}/"
        f"{statistics.mean(n_words):.0f}/{max(n_words)}, tokens (truncated at "
        f"{local.max_seq_length}) mean {statistics.mean(n_tok):.0f}, "
        f"{sum(t == local.max_seq_length for t in n_tok)} truncated; "
        f"batch_size {args.batch_size}; MiniLMEmbedder num_threads {local.num_threads}; "
        f"{len(slices)} slices x {args.rounds} rounds"
    )

    runners: dict[str, Callable[[list[str]], np.ndarray]] = {
        "numpy MiniLMEmbedder": local.embed_batch,
    }
    if not args.skip_st:
        # Never touch a hub: the model comes from the installed package directory.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch  # type: ignore[import-not-found, unused-ignore]
        from sentence_transformers import (  # type: ignore[import-not-found, unused-ignore]
            SentenceTransformer,
        )

        st = SentenceTransformer(str(find_model_dir()), device="cpu")
        print(
            f"torch {torch.__version__}, intra-op threads {torch.get_num_threads()}, "
            f"sentence-transformers max_seq_length {st.max_seq_length}"
        )

        def run_st(batch: list[str]) -> np.ndarray:
            with torch.inference_mode():
                return np.asarray(
                    st.encode(
                        batch,
                        batch_size=args.batch_size,
                        convert_to_numpy=True,
                        show_progress_bar=False,
                    )
                )

        runners["sentence-transformers"] = run_st
    print(blas_report())

    names = list(runners)
    for fn in runners.values():  # warm-up
        fn(texts[:64])

    # Interleave at slice level, alternating which implementation goes first,
    # so that load from other processes on this shared machine hits both alike.
    times: dict[str, list[list[float]]] = {name: [[] for _ in slices] for name in names}
    outputs: dict[str, list[np.ndarray]] = {name: [] for name in names}
    t_start = time.perf_counter()
    for rnd in range(args.rounds):
        for i, batch in enumerate(slices):
            order = names if (rnd + i) % 2 == 0 else names[::-1]
            for name in order:
                t0 = time.perf_counter()
                vecs = runners[name](batch)
                times[name][i].append(time.perf_counter() - t0)
                if rnd == 0:
                    outputs[name].append(vecs)
        print(f"round {rnd + 1}/{args.rounds} done, load average {load_average()}", flush=True)
    wall = time.perf_counter() - t_start

    if len(names) == 2:
        a = np.vstack(outputs[names[0]]).astype(np.float64)
        b = np.vstack(outputs[names[1]]).astype(np.float64)
        cos = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
        print(f"agreement on all {len(texts)} texts: min cosine {cos.min():.12f}")

    print(
        f"\n{'implementation':<24}{'best-slices s':>14}{'texts/s':>9}"
        f"{'median s':>10}{'texts/s':>9}{'worst s':>9}"
    )
    best_rate: dict[str, float] = {}
    med_rate: dict[str, float] = {}
    for name in names:
        best = sum(min(ts) for ts in times[name])
        med = sum(statistics.median(ts) for ts in times[name])
        worst = sum(max(ts) for ts in times[name])
        best_rate[name] = len(texts) / best
        med_rate[name] = len(texts) / med
        print(
            f"{name:<24}{best:>14.2f}{best_rate[name]:>9.1f}"
            f"{med:>10.2f}{med_rate[name]:>9.1f}{worst:>9.2f}"
        )
    if len(names) == 2:
        print(
            "ratio numpy / sentence-transformers (texts/s): "
            f"best {best_rate[names[0]] / best_rate[names[1]]:.2f}x, "
            f"median {med_rate[names[0]] / med_rate[names[1]]:.2f}x"
        )
    print(f"wall time of timed rounds: {wall:.0f}s")


if __name__ == "__main__":
    main()
