"""Why ``method="bas"`` under-covers x1 with heteroscedastic errors: the non-robust sampling
variance, measured without privacy and predicted for the private intervals.

Two parts, both on :mod:`interval_coverage`'s cells (same data generator and seeds):

1. **Non-private OLS** (statsmodels), ``--reps`` data sets of a cell: per coefficient the
   coverage of the nominal 95% nonrobust and HC1 intervals, and ``v``, the variance of the
   estimate over data sets divided by the mean nonrobust variance (1 when the nonrobust
   variance is right; for ``errors=hetero``, sd 0.5 + |x1|, the population value for x1 is
   E[x^2 s(x)^2] / E[s(x)^2] = 4.85 / 2.05 = 2.37).
2. **The private intervals** (``--raw``: :mod:`interval_coverage` ``--raw`` files of the same
   cell; z and width ratios are recorded before the inflation): if BAS's bootstrap variance is
   the nonrobust sampling variance (1 in OLS units) plus privacy noise (``r^2 - 1``, with ``r``
   the median bootstrap standard error / the OLS nonrobust one), the realised variance is
   ``r^2 - 1 + v``, so ``sd z = sqrt((r^2 - 1 + v) / r^2)`` and the coverage at inflation ``c``
   is ``P(|Z| <= 1.96 c / sd z)``. Printed next to the measured sd z and coverage.

    cd benchmarks && python bas_hetero_diag.py --cells errors=hetero --reps 4000 \
        [--raw RAW.jsonl[.gz],...] [--out results/bas_hetero_diag_s15.csv]
    python bas_hetero_diag.py --cells errors=hetero --v 1.009,2.410,1.015,1.038,0.999,0.991 \
        --raw RAW.jsonl.gz           # part 2 with part 1's v of an earlier run
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import warnings
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import interval_coverage as ic  # noqa: E402

Z = 1.959963984540054


def ols_cell(cell: dict, reps: int, start: int = 0) -> pd.DataFrame:
    """Per coefficient: nonrobust and HC1 coverage and ``v`` over ``reps`` data sets (the data
    of :func:`interval_coverage.one_rep`'s seeds ``start ..``)."""
    est, se0, se1 = [], [], []
    for rep in range(start, start + reps):
        rng = np.random.default_rng([rep, cell["n"], cell["p"], int(cell["eps"] * 10),
                                     zlib.crc32(cell["covariates"].encode()) % 997,
                                     zlib.crc32(cell["errors"].encode()) % 991])
        df = ic.simulate(cell, rng)
        X = sm.add_constant(df.drop(columns="y").to_numpy(), has_constant="add")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = sm.OLS(df["y"].to_numpy(), X).fit()
        est.append(fit.params)
        se0.append(fit.bse)
        se1.append(np.sqrt(np.diag(fit.cov_HC1)))
    est, se0, se1 = np.array(est), np.array(se0), np.array(se1)
    err = est - ic.truth(cell["p"])
    return pd.DataFrame({"coef": ["Intercept"] + [f"x{j + 1}" for j in range(cell["p"])],
                         "ols_nonrobust": (np.abs(err) <= Z * se0).mean(0),
                         "ols_HC1": (np.abs(err) <= Z * se1).mean(0),
                         "v": err.var(0) / (se0 ** 2).mean(0)})


def load_raw(paths: list[str]) -> dict:
    """(design, method) -> one row per replication (z, ratio before the inflation)."""
    out: dict = {}
    for p in paths:
        for line in (gzip.open(p, "rt") if p.endswith(".gz") else open(p)):
            if line.strip():
                r = json.loads(line)
                out.setdefault((r["design"], r["method"]), {})[r["rep"]] = r
    return {k: [v[i] for i in sorted(v)] for k, v in out.items()}


def predicted(rows: list, v: np.ndarray) -> pd.DataFrame:
    """Measured and predicted sd z and coverage of a cell's private fits at the code's
    inflation (:func:`interval_coverage._inflation`)."""
    ok = [r for r in rows if np.isfinite(r["z"]).any() and not ic.gated(r)]
    z = np.array([r["z"] for r in ok], dtype=float)
    c = np.array([ic._inflation(r) for r in ok])
    r = np.nanmedian(np.array([r["ratio"] for r in ok], dtype=float), axis=0)
    sd_pred = np.sqrt((r ** 2 - 1 + v) / r ** 2)
    cmed = float(np.median(c))
    return pd.DataFrame({"fits": len(ok), "r": r, "sd_z": np.nanstd(z, axis=0),
                         "sd_z_pred": sd_pred,
                         "coverage": np.nanmean(np.abs(z) <= Z * c[:, None], axis=0),
                         "coverage_pred": 2 * stats.norm.cdf(Z * cmed / sd_pred) - 1})


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cells", default="errors=hetero")
    ap.add_argument("--reps", type=int, default=4000)
    ap.add_argument("--raw", default="", help="comma list of interval_coverage.py --raw files")
    ap.add_argument("--v", default="", help="comma list of part 1's v per coefficient (one "
                                           "cell): skip the OLS runs")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    cells = dict(ic.cells(tails=True))
    raw = load_raw([p for p in a.raw.split(",") if p])
    tables = []
    for name in a.cells.split(","):
        if a.v:
            v = [float(x) for x in a.v.split(",")]
            t = pd.DataFrame({"coef": ["Intercept"] + [f"x{j}" for j in range(1, len(v))],
                              "v": v, "cell": name, "reps": 0})
        else:
            t = ols_cell(cells[name], a.reps).assign(cell=name, reps=a.reps)
        tables.append(t)
        print(f"\n{name}: non-private OLS over {a.reps} data sets")
        print(t.round(3).to_string(index=False))
        for (design, method), rows in raw.items():
            if design == name:
                pr = predicted(rows, t["v"].to_numpy())
                print(f"  {method}: private fits, measured vs predicted from v")
                print(pd.concat([t[["coef"]], pr], axis=1).round(3).to_string(index=False))
                tables.append(pd.concat([t[["coef"]], pr], axis=1).assign(cell=name,
                                                                          method=method))
    if a.out:
        pd.concat(tables, ignore_index=True).to_csv(a.out, index=False)
        print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
