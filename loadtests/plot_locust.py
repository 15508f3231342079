"""Plot a Locust run's history CSV: time to first verified sentence and answers per second.

python -m loadtests.plot_locust report/locust_stats_history.csv report/locust.png
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("history", type=Path)
    parser.add_argument("png", type=Path)
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with args.history.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    start = min(int(r["Timestamp"]) for r in rows)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    for name, label in (("ttfs", "first verified sentence"), ("total", "whole answer")):
        series = [r for r in rows if r["Type"] == "SSE" and r["Name"] == name and r["50%"] != "N/A"]
        xs = [int(r["Timestamp"]) - start for r in series]
        for q in ("50%", "95%", "99%"):
            top.plot(xs, [float(r[q]) for r in series], label=f"{label} p{q[:-1]}")
        if name == "total":
            bottom.plot(xs, [float(r["Requests/s"]) for r in series], label="answers/s")
            users = [float(r["User Count"]) for r in series]
            bottom.plot(xs, users, label="users", linestyle="--")
    top.set_ylabel("ms (percentiles over a recent window)")
    top.set_yscale("log")
    top.legend(fontsize="small")
    top.grid(True, which="both", alpha=0.3)
    bottom.set_xlabel("seconds")
    bottom.legend(fontsize="small")
    bottom.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.png, dpi=100)


if __name__ == "__main__":
    main()
