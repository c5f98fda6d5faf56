"""Point-estimate accuracy of Boosted AdaSSP with its residuals on the unclipped rows (the
default since issue 16) against the clipped rows (the behaviour before), in the same run, on
the ten regression files.

Median test R^2 over 10 random 90/10 splits at (eps = ln 3, delta = 1e-5), the protocol and
splits of benchmarks/adassp_bas_utility.py (``bas``: variant "scaled", bounds "auto", called
on the design of ``label ~ .``): ``raw`` scores ``X_test @ params`` (what
``DPLMResult.score`` computes), ``clip`` scores test features clipped to the released box.
Both variants get the same seeds, so the bounds releases are identical and only the boosting
differs. Prints a table with progress; writes benchmarks/results/bas_residuals_utility.csv.

    nice python benchmarks/bas_residuals_utility.py [--trials 10] [--files california,...]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd
from adassp_bas_utility import LABELS, METHODS, run

OUT = Path(__file__).resolve().parent / "results" / "bas_residuals_utility.csv"
VARIANTS = {"bas[unclipped]": ("bas", {"residuals": "unclipped"}),
            "bas[clipped]": ("bas", {"residuals": "clipped"})}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--files", default=",".join(LABELS))
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    METHODS.update(VARIANTS)
    parts = []
    print(f"{'file':14s} {'unclipped raw':>14s} {'clipped raw':>12s} {'unclipped clip':>15s} "
          f"{'clipped clip':>13s}  sec", flush=True)
    for name in a.files.split(","):
        t0 = time.perf_counter()
        res = run([name], a.trials, list(VARIANTS))
        parts.append(res)
        med = res.groupby("method")[["r2_raw", "r2_clip"]].median()
        print(f"{name:14s} {med.r2_raw['bas[unclipped]']:14.4f} {med.r2_raw['bas[clipped]']:12.4f}"
              f" {med.r2_clip['bas[unclipped]']:15.4f} {med.r2_clip['bas[clipped]']:13.4f}"
              f"  {time.perf_counter() - t0:.0f}", flush=True)
        pd.concat(parts).to_csv(a.out, index=False)
    res = pd.concat(parts)
    wide = res.pivot_table(index=["dataset", "trial"], columns="method", values="r2_raw")
    diff = wide["bas[unclipped]"] - wide["bas[clipped]"]
    print(f"median paired difference of raw test R^2 (unclipped - clipped): {diff.median():+.4f}"
          f"; files where the median is lower by > 0.005: "
          f"{int((diff.groupby('dataset').median() < -0.005).sum())} of "
          f"{diff.index.levels[0].size}")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
