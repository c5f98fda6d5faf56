"""Pool the runs of one logistic Tukey coverage cell (issue 16) into one ``coverage.py`` row.

``coverage.py`` writes a cell's row when the cell is done, so a long cell is run as several
processes of a few fits each (``--seed-offset`` apart: fresh data sets), each with its own
``--out RUN.csv`` and ``--glm-detail RUN_coef.csv``. This script adds them up: per coefficient
the coverage over every fit with intervals (the detail files' ``coverage`` weighted by their
``released`` counts), the share of fits with intervals, the width ratio (each run's median
ratio, weighted by its fits with intervals). ``z_bias``, ``z_sd_min`` and ``z_sd_max`` are the
extremes over the runs (``coverage.py`` keeps no per-fit z).

    python benchmarks/glm_tukey_pool.py --out POOLED.csv RUN1.csv RUN2.csv ...

Prints the pooled row and the per-coefficient coverage.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def pool(files: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    runs = [pd.read_csv(f) for f in files]
    coefs = pd.concat([pd.read_csv(Path(f).with_name(Path(f).stem + "_coef.csv"))
                       for f in files])
    coefs["hits"] = coefs["coverage"].fillna(0.0) * coefs["released"]
    per = coefs.groupby("coef", sort=False).agg(released=("released", "sum"),
                                                hits=("hits", "sum"))
    per["coverage"] = per["hits"] / per["released"]
    d = pd.concat(runs)
    has = d["reps"] * d["with_interval"]
    row = d.iloc[[0]].copy()
    row["reps"] = int(d["reps"].sum())
    row["with_interval"] = has.sum() / d["reps"].sum()
    row["coverage"] = per["coverage"].mean()
    row["coverage_min"] = per["coverage"].min()
    row["coverage_max"] = per["coverage"].max()
    row["width_ratio"] = float(np.average(d["width_ratio"], weights=has))
    row["z_bias"] = d["z_bias"].max()
    row["z_sd_min"] = d["z_sd_min"].min()
    row["z_sd_max"] = d["z_sd_max"].max()
    row["sec"] = d["sec"].sum()
    row["source"] = f"coverage.py ({len(files)} runs pooled)"
    return row, per[["released", "coverage"]].reset_index()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    row, per = pool(a.files)
    if a.out:
        row.to_csv(a.out, index=False)
    cols = ["cell", "reps", "with_interval", "coverage", "coverage_min", "coverage_max",
            "width_ratio", "z_bias", "z_sd_min", "z_sd_max"]
    print(row[cols].round(3).to_string(index=False))
    print(per.round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
