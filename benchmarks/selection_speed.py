"""Wall time of the private selectors (issue 3), beside statsmodels OLS on the same data.

* DPKendall (k = 5) and SubLasso on n = 1,000,000 x d = 20 synthetic rows;
* DP-SIS (public bounds) and DPKendall on golub (72 x 7,129) and on 100 x 20,000 synthetic;
* the reference code's K-Tukey / L-Tukey seconds per fit from ANCHORS.md for scale.

Times are medians of ``--repeats`` warm runs (numba compiled beforehand), excluding data
loading. Writes benchmarks/results/selection_speed.csv.

    python benchmarks/selection_speed.py [--repeats 5] [--n 1000000]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm

from dpstats.selection import get_selector

OUT = Path(__file__).resolve().parent / "results"
MICRO = Path(__file__).resolve().parents[2] / "shared" / "data" / "microarray"
#: ANCHORS.md: reference-code seconds per fit (K-Tukey, L-Tukey) on the real files.
REF = {"california": (1.21, 2.5), "diamonds": (3.34, 6.2), "nyc_garbage": (1.39, 2.7),
       "nba": (1.38, 2.8)}


def timed(fn, repeats: int) -> float:
    fn()  # warm-up (numba compile / caches)
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def synthetic(n: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X[:, :5] @ np.array([3.0, -2.0, 1.5, 1.0, -0.5]) + rng.standard_normal(n)
    return X, y


def golub():
    df = pd.read_csv(MICRO / "golub.csv.gz")
    y = np.where(df.pop("y") == sorted(df.columns[:0].tolist() + ["ALL"])[0], 1.0, -1.0)
    X = df.to_numpy(dtype=np.float64)
    X = (X - X.mean(0)) / np.maximum(np.abs(X - X.mean(0)).max(0), 1e-12)  # paper protocol
    return X, y


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--n", type=int, default=1_000_000)
    args = ap.parse_args()
    rows = []
    rng = np.random.default_rng(1)
    kendall, sublasso = get_selector("kendall"), get_selector("sublasso")
    X, y = synthetic(args.n, 20)
    Xc = sm.add_constant(X)
    base = timed(lambda: sm.OLS(y, Xc).fit(), args.repeats)
    for name, fn in [
        ("DPKendall k=5", lambda: kendall(X, y, k=5, eps=1.0, rng=rng)),
        ("SubLasso k=5", lambda: sublasso(X, y, k=5, eps=1.0, rng=rng, n_noisy=args.n)),
    ]:
        t = timed(fn, args.repeats)
        rows.append({"data": f"synthetic {args.n} x 20", "selector": name, "seconds": t,
                     "statsmodels OLS seconds": base, "ratio to OLS": t / base})
    sis = get_selector("sis")
    for label, (Xh, yh) in [("golub 72 x 7129", golub()),
                            ("synthetic 100 x 20000", synthetic(100, 20_000))]:
        if label.startswith("synthetic"):
            Xh = Xh / np.abs(Xh).max()
            yh = yh / np.abs(yh).max()
        for name, fn in [
            ("DP-SIS k=5 (public bounds)",
             lambda Xh=Xh, yh=yh: sis(Xh, yh, k=5, eps=5.0, rng=rng, bounds=(-1.0, 1.0))),
            ("DPKendall k=5", lambda Xh=Xh, yh=yh: kendall(Xh, yh, k=5, eps=5.0, rng=rng)),
        ]:
            rows.append({"data": label, "selector": name, "seconds": timed(fn, args.repeats),
                         "statsmodels OLS seconds": float("nan"), "ratio to OLS": float("nan")})
    res = pd.DataFrame(rows)
    OUT.mkdir(exist_ok=True)
    res.to_csv(OUT / "selection_speed.csv", index=False)
    pd.set_option("display.width", 160)
    print(res.round(4).to_string(index=False))
    print("\nreference code (ANCHORS.md), seconds per whole fit: K-Tukey / L-Tukey")
    for k, (a, b) in REF.items():
        print(f"  {k:12s} {a:5.2f} / {b:4.1f}")


if __name__ == "__main__":
    main()
