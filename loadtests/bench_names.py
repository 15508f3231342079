"""Benchmark the search for coordinated names in a question (`language/asks.py`): `re`'s own
`_NAMES.search`, which retries from every word of a run of names, against `_search_names`,
which tries a run once. Prints the median and range of thread CPU per call, the two
alternating, for questions of 1,000 to 4,000 characters (4,000 is the question limit).

    .venv/bin/python -m loadtests.bench_names
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from stream_rag.language.asks import _NAMES, _search_names

SHAPES: dict[str, Callable[[int], str]] = {
    "Abc Abc ...": lambda n: ("Abc " * n)[:n],
    "Abc, Abc, ...": lambda n: ("Abc, " * n)[:n],
    "X1 X2 ... (models)": lambda n: " ".join(f"X{i}" for i in range(n))[:n],
    "Is the Pro ... ?": lambda n: ("Is the Pro plan cheaper than the Basic one? " * n)[:n],
}


def _cpu_ms(search: Callable[[str], object], text: str) -> float:
    started = time.thread_time()
    search(text)
    return (time.thread_time() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="alternating pairs per figure")
    args = parser.parse_args()
    for shape, build in SHAPES.items():
        for length in (1000, 2000, 4000):
            text = build(length)
            old: list[float] = []
            new: list[float] = []
            for _ in range(args.runs):
                old.append(_cpu_ms(_NAMES.search, text))
                new.append(_cpu_ms(_search_names, text))
            print(
                f"{shape:<20} {length:>5} chars: re search {statistics.median(old):7.2f} ms "
                f"({min(old):.2f}-{max(old):.2f}), by runs {statistics.median(new):5.2f} ms "
                f"({min(new):.2f}-{max(new):.2f})"
            )


if __name__ == "__main__":
    main()
