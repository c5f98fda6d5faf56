"""Test R^2 of the private linear methods against eps on the bundled regression data.

Uses :func:`dpstats.lab.experiments.run` (seeded 90/10 splits; a failed release counts as -inf) and
the plot helpers. Prints the summary table and writes
``benchmarks/results/methods_vs_eps.csv`` plus two PNGs (utility vs eps, box plots at eps=1).

    python benchmarks/methods_vs_eps.py [--trials 10] [--datasets california,nba] [--quick]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

import dpstats as dp  # noqa: E402
from dpstats.results import plot as plotting

OUT = Path(__file__).resolve().parent / "results"
CONFIGS = {
    "tukey": {"select": None},
    "tukey+auto select (k=5)": {},
    "adassp": {"method": "adassp", "select": None},
    "bas": {"method": "bas", "select": None},
    "ols": {"method": "ols"},
}
EPS = [0.1, 0.3, 1.0, 3.0, 10.0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--datasets", default="california,diamonds,nba,nyc_garbage")
    ap.add_argument("--quick", action="store_true", help="2 trials, eps 0.3 and 3")
    args = ap.parse_args()
    trials, eps = (2, [0.3, 3.0]) if args.quick else (args.trials, EPS)
    t0 = time.perf_counter()
    df = dp.lab.experiments.run(CONFIGS, args.datasets.split(","), trials=trials, eps=eps,
                                seed=2024)
    OUT.mkdir(exist_ok=True)
    df.to_csv(OUT / "methods_vs_eps.csv", index=False)
    table = dp.lab.experiments.summarise(df)
    with pd.option_context("display.width", 140, "display.max_rows", 500):
        print(table.drop(columns=["metric"]).round(3).to_string(index=False))
    plotting.utility_vs_eps(df).savefig(OUT / "methods_vs_eps.png", dpi=100)
    if 1.0 in eps:
        plotting.r2_boxplot(df, eps=1.0).savefig(OUT / "methods_box_eps1.png", dpi=100)
    print(f"\n{len(df)} fits in {time.perf_counter() - t0:.0f} s; wrote {OUT}/methods_vs_eps.*")


if __name__ == "__main__":
    main()
