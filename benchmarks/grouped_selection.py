"""Factors as whole terms vs column-wise selection of dummies (issue 15, item 2).

The same design matrix is fitted twice per split and selector: once with the factors as
``pd.Categorical`` columns (``terms``: a factor is one term, all its dummies in or out) and
once with the factors one-hot encoded (treatment coding, the same columns) into numeric
columns (``columns``: every dummy its own candidate, the behaviour before terms). For SubLasso a
third mode, ``terms-widen``, runs each group's Lasso on until it names k distinct terms instead
of stopping at k columns (``dpstats.selection.sublasso.WIDEN = True``; the default is False).

Reported per task, selector and mode: median test R^2 over random 90/10 splits (a withheld fit
counts as -inf), the median number of design columns kept, and in how many splits a factor was
split (some dummies in, some out). Writes benchmarks/results/grouped_selection.csv.

Tasks: ``synthetic`` (20,000 rows; 6 numeric columns of which 2 matter, a 20-level factor that
matters and an 8-level factor that does not; data-independent, used to choose ``WIDEN``),
``diamonds_raw`` (cut, color, clarity declared with their documented level orders),
``california_raw`` (``ocean_proximity``, its five documented values) and ``nyc_garbage``
(the BOROUGH one-hot columns turned back into one factor, Bronx the reference).

    python benchmarks/grouped_selection.py [--trials 5] [--tasks synthetic,...]
        [--selectors kendall,sublasso,sis] [--eps 1.0986] [--method adassp]
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

import dpstats as dp
from dpstats.selection import sublasso

DATA = Path("/work/shared/data/regression")
OUT = Path(__file__).resolve().parent / "results"

DIAMOND_LEVELS = {"cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
                  "color": list("JIHGFED"),
                  "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"]}
OCEAN = ["<1H OCEAN", "INLAND", "ISLAND", "NEAR BAY", "NEAR OCEAN"]
BOROUGHS = ["Bronx", "Brooklyn", "Manhattan", "Queens", "Staten Island"]


def synthetic(n=20_000, seed=0) -> tuple[pd.DataFrame, str, dict]:
    rng = np.random.default_rng([2026, seed])
    X = rng.standard_normal((n, 6))
    g = rng.integers(0, 20, n)
    h = rng.integers(0, 8, n)
    effects = rng.normal(0.0, 1.0, 20)
    y = 1.0 * X[:, 0] + 0.5 * X[:, 3] + effects[g] + rng.standard_normal(n)
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(6)])
    df["g"] = pd.Categorical([f"g{i:02d}" for i in g], categories=[f"g{i:02d}" for i in range(20)])
    df["h"] = pd.Categorical([f"h{i}" for i in h], categories=[f"h{i}" for i in range(8)])
    df["y"] = y
    return df, "y", {"g": df["g"].cat.categories.tolist(), "h": df["h"].cat.categories.tolist()}


def load(task: str) -> tuple[pd.DataFrame, str, dict]:
    """``(frame, label, {factor: declared levels})`` with the factors as pd.Categorical."""
    if task == "synthetic":
        return synthetic()
    if task == "diamonds_raw":
        df = pd.read_csv(DATA / "diamonds_raw.csv")
        for col, levels in DIAMOND_LEVELS.items():
            df[col] = pd.Categorical(df[col], categories=levels)
        return df, "price", DIAMOND_LEVELS
    if task == "california_raw":
        df = pd.read_csv(DATA / "california_housing_raw.csv")
        df["ocean_proximity"] = pd.Categorical(df["ocean_proximity"], categories=OCEAN)
        return df, "median_house_value", {"ocean_proximity": OCEAN}
    if task == "nyc_garbage":
        df = pd.read_csv(DATA / "nyc_garbage.csv")
        onehot = df[[f"BOROUGH_{b}" for b in BOROUGHS]].to_numpy()
        borough = np.array(BOROUGHS, dtype=object)[onehot.argmax(axis=1)]
        df = df.drop(columns=[f"BOROUGH_{b}" for b in BOROUGHS])
        df.insert(2, "BOROUGH", pd.Categorical(borough, categories=BOROUGHS))
        return df, "REFUSETONSCOLLECTED", {"BOROUGH": BOROUGHS}
    raise SystemExit(f"unknown task {task!r}")


def one_hot(df: pd.DataFrame, factors: dict) -> pd.DataFrame:
    """Treatment-coded dummies (the first declared level is the reference) as numeric columns:
    the same design columns as the factor, but each one its own term."""
    out = df.copy()
    for col, levels in factors.items():
        pos = out.columns.get_loc(col)
        dummies = {f"{col}_{i}": (out[col] == lv).astype(float).where(out[col].notna())
                   for i, lv in enumerate(levels[1:], start=1)}
        out = out.drop(columns=col)
        for j, (name, values) in enumerate(dummies.items()):
            out.insert(pos + j, name, values)
    return out


def split_factors(fit, factors: dict, mode: str) -> int:
    """Number of factors with some dummies kept and some not (column-wise mode only)."""
    if mode != "columns":
        return 0
    kept = set(fit.selected)
    split = 0
    for col, levels in factors.items():
        names = {f"{col}_{i}" for i in range(1, len(levels))}
        split += 0 < len(names & kept) < len(names)
    return split


def run(tasks, selectors, trials, eps, method, k_of) -> pd.DataFrame:
    rows = []
    total = len(tasks) * trials
    done = 0
    for task in tasks:
        df, label, factors = load(task)
        frames = {"terms": df, "columns": one_hot(df, factors)}
        k = k_of(task)
        for trial in range(trials):
            rng = np.random.default_rng(100 + trial)
            idx = rng.permutation(len(df))
            cut = int(0.9 * len(df))
            for sel in selectors:
                modes = ["terms", "columns"] + (["terms-widen"] if sel == "sublasso" else [])
                for mode in modes:
                    data = frames["columns" if mode == "columns" else "terms"]
                    train, test = data.iloc[idx[:cut]], data.iloc[idx[cut:]]
                    sublasso.WIDEN = mode == "terms-widen"
                    t0 = time.perf_counter()
                    fit = dp.dp_lm(f"{label} ~ .", train, eps=eps, delta=1e-5, select=sel, k=k,
                                   method=method, random_state=10_000 * trial + 7)
                    secs = time.perf_counter() - t0
                    sublasso.WIDEN = False
                    kept = int((fit.params != 0).sum()) if fit.released else -1
                    rows.append({"task": task, "selector": sel, "mode": mode, "trial": trial,
                                 "k": k, "eps": eps, "method": method,
                                 "r2": fit.score(test) if fit.released else -math.inf,
                                 "columns_kept": kept, "split": split_factors(fit, factors, mode),
                                 "seconds": secs, "selected": "|".join(fit.selected)})
            done += 1
            print(f"[{done}/{total}] {task} split {trial} done", flush=True)
    return pd.DataFrame(rows)


def table(res: pd.DataFrame) -> pd.DataFrame:
    g = res.groupby(["task", "selector", "mode"])
    out = pd.DataFrame({"median R2": g.r2.median(), "columns kept": g.columns_kept.median(),
                        "splits with a split factor": g.split.apply(lambda s: int((s > 0).sum())),
                        "seconds": g.seconds.median()})
    wide = out["median R2"].unstack("mode")
    out = out.join((wide["terms"] - wide["columns"]).rename("terms - columns"),
                   on=["task", "selector"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--tasks", default="synthetic,diamonds_raw,california_raw,nyc_garbage")
    ap.add_argument("--selectors", default="kendall,sublasso,sis")
    ap.add_argument("--eps", type=float, default=math.log(3))
    ap.add_argument("--method", default="adassp")
    ap.add_argument("--k", type=int, default=3, help="k (nyc_garbage, 3 terms: k - 1)")
    ap.add_argument("--out", default="grouped_selection.csv")
    args = ap.parse_args()
    res = run(args.tasks.split(","), args.selectors.split(","), args.trials, args.eps,
              args.method, lambda task: args.k - 1 if task == "nyc_garbage" else args.k)
    OUT.mkdir(exist_ok=True)
    res.to_csv(OUT / args.out, index=False)
    pd.set_option("display.width", 200)
    print(table(res).round(3).to_string())
    print(f"wrote {OUT / args.out}")


if __name__ == "__main__":
    main()
