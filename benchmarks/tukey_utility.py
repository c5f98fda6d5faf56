"""Utility of dp_lm (Tukey, no selection) on the real regression files, beside the anchors.

Median test R^2 over random 90/10 splits at (eps = ln 3, delta = 1e-5); a fit whose PTR check
fails counts as -inf (as the papers' code does). Prints a table and writes
benchmarks/results/tukey_utility.csv.

    python benchmarks/tukey_utility.py [--trials 10] [--files california,diamonds,...]
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import dpstats as dp

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "regression"
OUT = Path(__file__).resolve().parent / "results"
LABELS = {"california": "median_house_value", "diamonds": "price", "nyc_garbage":
          "REFUSETONSCOLLECTED", "nba": "PTS_home", "cpu_act": "y", "elevators": "y",
          "house_16H": "y", "ailerons": "y", "pol": "y", "wine_quality": "quality"}
#: ANCHORS.md: NonDP OLS, reference-code Tukey, and the reference code's best private method.
ANCHORS = {"california": (0.636, 0.240, 0.340), "diamonds": (0.906, -1.66, 0.882),
           "nyc_garbage": (0.541, 0.500, 0.501), "nba": (0.619, 0.597, 0.597),
           "cpu_act": (0.278, -math.inf, 0.743), "elevators": (0.793, -math.inf, 0.317),
           "house_16H": (0.085, -0.254, 0.024), "ailerons": (0.814, -math.inf, 0.669),
           "pol": (0.464, -math.inf, -0.017), "wine_quality": (0.298, -math.inf, -0.066)}


def r2(fit, test) -> float:
    return fit.score(test) if fit.released else -math.inf


def run(files, trials, accountings):
    rows = []
    for name in files:
        df = pd.read_csv(DATA / f"{name}.csv")
        formula = f"{LABELS[name]} ~ ."
        for trial in range(trials):
            rng = np.random.default_rng(2024 + trial)
            idx = rng.permutation(len(df))
            cut = int(0.9 * len(df))
            train, test = df.iloc[idx[:cut]], df.iloc[idx[cut:]]
            for acc in accountings:
                t0 = time.perf_counter()
                fit = dp.dp_lm(formula, train, eps=math.log(3), delta=1e-5, select=None,
                               accounting=acc, random_state=10_000 * trial + 7)
                rows.append({"dataset": name, "method": f"tukey[{acc}]", "trial": trial,
                             "r2": r2(fit, test), "seconds": time.perf_counter() - t0,
                             "m": fit.m})
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = dp.dp_lm(formula, train, eps=1.0, method="ols")
            rows.append({"dataset": name, "method": "ols (not private)", "trial": trial,
                         "r2": fit.score(test), "seconds": float("nan"), "m": None})
    return pd.DataFrame(rows)


def table(res: pd.DataFrame) -> pd.DataFrame:
    med = res.pivot_table(index="dataset", columns="method", values="r2", aggfunc="median")
    fails = res[res.r2 == -math.inf].groupby(["dataset", "method"]).size().unstack(fill_value=0)
    out = med.copy()
    for col in fails.columns:
        out[f"{col} PTR fails"] = fails[col]
    out["anchor NonDP"] = [ANCHORS[d][0] for d in out.index]
    out["anchor ref Tukey"] = [ANCHORS[d][1] for d in out.index]
    out["anchor ref best"] = [ANCHORS[d][2] for d in out.index]
    return out.loc[[d for d in LABELS if d in out.index]]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--files", default=",".join(LABELS))
    ap.add_argument("--accounting", default="swap,paper")
    args = ap.parse_args()
    res = run(args.files.split(","), args.trials, args.accounting.split(","))
    OUT.mkdir(exist_ok=True)
    res.to_csv(OUT / "tukey_utility.csv", index=False)
    pd.set_option("display.width", 200)
    print(table(res).round(3).to_string())
    print("\nmean seconds per private fit:",
          res[res.method.str.startswith("tukey")].groupby("dataset").seconds.mean().round(3)
          .to_dict())


if __name__ == "__main__":
    main()
