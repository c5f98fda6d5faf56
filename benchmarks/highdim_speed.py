"""Wall time and peak memory of private selection when p >> n: DP-SIS and DPKendall.

Data: synthetic 100 x 20,000 (``y = X[:, :5] @ beta + noise``, standard-normal columns) and the
golub microarray (72 x 7,129, label coded +1/-1). For each, k = 5 and eps = 1:

* ``dpstats.select("y ~ .", data, method=...)`` end to end (design, private bounds for DP-SIS,
  selection, result) and the selector alone on the arrays (DP-SIS with public bounds after the
  paper's scaling, DPKendall);
* beside two non-private screens doing comparable work: the k largest ``|correlation|``
  (numpy, what SIS ranks by) and the k largest ``|Kendall tau|`` from
  ``scipy.stats.kendalltau`` column by column (what DPKendall's first round scores).

Each figure is the fastest of ``--repeats`` warm calls, with the peak resident memory above
the start of the call. Writes benchmarks/results/highdim_speed.csv.

    python benchmarks/highdim_speed.py [--repeats 5] [--scipy-columns 2000]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import speed_common as sc
from scipy import stats

import dpstats as dp
from dpstats.selection import get_selector

EPS, K = 1.0, 5


def synthetic(n: int = 100, d: int = 20_000) -> pd.DataFrame:
    return sc.synthetic_frame(n, d, seed=3)


def golub() -> pd.DataFrame:
    df = pd.read_csv(sc.SHARED / "microarray" / "golub.csv.gz")
    label = df.pop("y")
    df["y"] = np.where(label == sorted(label.unique())[0], 1.0, -1.0)
    return df


def scaled_arrays(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Columns centred and scaled into [-1, 1] (the protocol of 004), so bounds are public."""
    y = df["y"].to_numpy(dtype=np.float64)
    X = df.drop(columns="y").to_numpy(dtype=np.float64)
    X = X - X.mean(axis=0)
    X = X / np.maximum(np.abs(X).max(axis=0), 1e-12)
    return X, y / max(np.abs(y).max(), 1e-12)


def corr_screen(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    Xc = X - X.mean(axis=0)
    yc = y - y.mean()
    score = np.abs(yc @ Xc) / np.maximum(np.sqrt((Xc * Xc).sum(axis=0)), 1e-300)
    return np.argpartition(-score, K)[:K]


def kendall_screen(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    tau = np.array([stats.kendalltau(X[:, j], y).statistic for j in range(X.shape[1])])
    return np.argpartition(-np.abs(np.nan_to_num(tau)), K)[:K]


def run(name: str, df: pd.DataFrame, repeats: int, scipy_columns: int) -> list[dict]:
    X, y = scaled_arrays(df)
    rng = np.random.default_rng(0)
    sis, kendall = get_selector("sis"), get_selector("kendall")
    cases = [
        ("dp.select(method='sis'), private bounds",
         lambda: dp.select("y ~ .", df, eps=EPS, method="sis", k=K, random_state=1)),
        ("dp.select(method='kendall')",
         lambda: dp.select("y ~ .", df, eps=EPS, method="kendall", k=K, random_state=1)),
        ("DP-SIS selector, public bounds",
         lambda: sis(X, y, k=K, eps=EPS, rng=rng, bounds=(-1.0, 1.0))),
        ("DPKendall selector", lambda: kendall(X, y, k=K, eps=EPS, rng=rng)),
        ("non-private |correlation| top-k (numpy)", lambda: corr_screen(X, y)),
    ]
    rows = []
    for label, fn in cases:
        rec = sc.timed(fn, repeats, warmup=True)
        rows.append({"data": name, "n": X.shape[0], "p": X.shape[1], "method": label,
                     "seconds": rec["seconds"], "cpu seconds": rec["cpu_seconds"],
                     "peak MB": rec["peak_mb"]})
    cols = min(scipy_columns, X.shape[1])
    rec = sc.timed(lambda: kendall_screen(X[:, :cols], y), 1)
    rows.append({"data": name, "n": X.shape[0], "p": X.shape[1],
                 "method": f"non-private |Kendall tau| top-k (scipy; {cols} columns timed, "
                           "scaled to all)",
                 "seconds": rec["seconds"] * X.shape[1] / cols,
                 "cpu seconds": rec["cpu_seconds"] * X.shape[1] / cols,
                 "peak MB": rec["peak_mb"]})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--scipy-columns", type=int, default=2000,
                    help="columns scipy's kendalltau loop is timed on (scaled to all)")
    args = ap.parse_args()
    print(sc.load_note())
    rows = run("synthetic 100 x 20000", synthetic(), args.repeats, args.scipy_columns)
    rows += run("golub 72 x 7129", golub(), args.repeats, args.scipy_columns)
    table = pd.DataFrame(rows)
    sc.save(table, "highdim_speed", round_to=4)
    print(f"\n({sc.load_note()})")


if __name__ == "__main__":
    main()
