"""Coverage of dp_glm's default intervals (output / objective perturbation) and of DP-GD's
(dp_glm and dp_lm), issue 16.

Data-independent simulation: a logistic (or linear, for ``lm-dpgd``) model with known
coefficients, covariates Gaussian, skewed (centred log-normal), binary (0/1, rate 0.3) or
Gaussian with the last a declared two-level factor (``pd.Categorical``, 30% in level 1), a
sub-grid around n = 20,000, p = 5, eps = 1 (delta 1e-5, ``select=None``: the formula is fitted
as written, private bounds). For every cell and method it reports, per coefficient, the share
of nominal 95% intervals that cover the model's coefficient (over the fits that released
intervals), the median interval width relative to the non-private statsmodels interval
(Logit / OLS on the same data, the baseline in the same run) and the share of fits whose
intervals were withheld.

    nice -n 10 python benchmarks/glm_coverage.py --methods glm-auto,lm-dpgd --reps 100 \\
        --centre-reps 200

Writes ``benchmarks/results/glm_coverage.csv`` (one row per cell, method and coefficient;
``--out`` changes it) and prints a table with progress.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm

import dpstats as dp

OUT = Path(__file__).parent / "results" / "glm_coverage.csv"
CENTRE = {"n": 20_000, "p": 5, "eps": 1.0, "cov": "gaussian"}
#: The sub-grid: the centre, then one argument moved at a time.
CELLS = [dict(CENTRE)] + [
    {**CENTRE, "n": 5_000}, {**CENTRE, "n": 100_000},
    {**CENTRE, "p": 1}, {**CENTRE, "p": 10},
    {**CENTRE, "eps": 0.5}, {**CENTRE, "eps": 4.0},
    {**CENTRE, "cov": "skewed"}, {**CENTRE, "cov": "binary"},
    {**CENTRE, "n": 100_000, "cov": "skewed"},     # the logistic Tukey's skewed cell
    # the logistic Tukey's arms around n = 100,000 (appended: the cells above keep their seeds)
    {**CENTRE, "n": 100_000, "eps": 4.0}, {**CENTRE, "n": 100_000, "cov": "binary"},
    {**CENTRE, "n": 200_000}, {**CENTRE, "n": 100_000, "eps": 0.5},
    {**CENTRE, "n": 200_000, "eps": 0.5}, {**CENTRE, "n": 100_000, "cov": "factor"},
]
METHODS = ("glm-auto", "glm-dpgd", "lm-dpgd", "glm-tukey")
DELTA = 1e-5
#: Fits between progress lines of :func:`run_cell`.
PROGRESS = 50


def coefficients(p: int) -> np.ndarray:
    """Intercept -0.5, slopes alternating in sign with decreasing size, norm 1.2."""
    j = np.arange(p)
    slopes = (-1.0) ** j * (1.0 - j / (2.0 * p))
    return np.r_[-0.5, 1.2 * slopes / np.linalg.norm(slopes)]


def covariates(kind: str, n: int, p: int, rng) -> np.ndarray:
    if kind == "gaussian":
        return rng.normal(size=(n, p))
    if kind == "skewed":
        z = np.exp(0.75 * rng.normal(size=(n, p)))
        return (z - np.exp(0.75**2 / 2)) / np.sqrt((np.exp(0.75**2) - 1) * np.exp(0.75**2))
    if kind == "binary":
        return (rng.uniform(size=(n, p)) < 0.3).astype(float)
    if kind == "factor":        # the last column a factor's 0/1 coding (simulate declares it)
        X = rng.normal(size=(n, p))
        X[:, -1] = rng.uniform(size=n) < 0.3
        return X
    raise ValueError(kind)


def design(df: pd.DataFrame) -> np.ndarray:
    """The covariates as floats (a declared factor's 0/1 coding)."""
    return df.drop(columns="y").to_numpy(dtype=float)


def simulate(cell: dict, method: str, rng):
    n, p = cell["n"], cell["p"]
    X = covariates(cell["cov"], n, p, rng)
    beta = coefficients(p)
    eta = beta[0] + X @ beta[1:]
    if method.startswith("glm"):
        y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-eta))).astype(float)
    else:
        y = eta + rng.normal(size=n)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    if cell["cov"] == "factor":
        df[f"x{p - 1}"] = pd.Categorical(X[:, -1], categories=[0.0, 1.0])
    df["y"] = y
    return df, beta


def fit(method: str, df: pd.DataFrame, cell: dict, seed: int):
    formula = "y ~ " + " + ".join(c for c in df.columns if c != "y")
    kind, m = method.split("-")
    fn = dp.dp_glm if kind == "glm" else dp.dp_lm
    return fn(formula, df, eps=cell["eps"], delta=DELTA, method=m, select=None,
              random_state=seed)


def baseline_width(method: str, df: pd.DataFrame) -> np.ndarray:
    X = sm.add_constant(design(df))
    model = sm.Logit(df["y"], X) if method.startswith("glm") else sm.OLS(df["y"], X)
    r = model.fit(disp=0) if method.startswith("glm") else model.fit()
    ci = np.asarray(r.conf_int(0.05))
    return ci[:, 1] - ci[:, 0]


def box_truth(method: str, df: pd.DataFrame, res) -> np.ndarray:
    """The non-private fit of the same model on the inputs clipped to the fit's released box
    (``res.clip``): what the intervals say they cover (the label's clipping is not applied).
    NaN when the fit released no box."""
    X = design(df)
    if res.clip is None:
        return np.full(X.shape[1] + 1, np.nan)
    lo, hi = (np.asarray(v, dtype=float)[1:] for v in res.clip)
    Xc = sm.add_constant(np.clip(X, lo, hi), has_constant="add")
    try:
        model = sm.Logit(df["y"], Xc) if method.startswith("glm") else sm.OLS(df["y"], Xc)
        return np.asarray(model.fit(disp=0).params if method.startswith("glm")
                          else model.fit().params, dtype=float)
    except Exception:       # a separated or singular clipped design: no box truth
        return np.full(X.shape[1] + 1, np.nan)


def run_cell(cell: dict, method: str, reps: int, baseline_reps: int, seed: int,
             raw: list | None = None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = cell["p"]
    cover = np.zeros((reps, p + 1))
    width = np.full((reps, p + 1), np.nan)
    base = []
    released = np.zeros(reps, dtype=bool)
    chosen = []
    for r in range(reps):
        df, beta = simulate(cell, method, rng)
        res = fit(method, df, cell, seed * 1000 + r)
        chosen.append(res.method)
        ci = res.conf_int().to_numpy()
        ok = bool(res.released) and np.isfinite(ci).all()
        released[r] = ok
        if ok:
            cover[r] = (ci[:, 0] <= beta) & (beta <= ci[:, 1])
            width[r] = ci[:, 1] - ci[:, 0]
        if raw is not None:
            n_hat = float("nan") if res.n_noisy is None else float(res.n_noisy)
            boxed = box_truth(method, df, res) if ok else np.full(p + 1, np.nan)
            mid = (ci[:, 0] + ci[:, 1]) / 2 if ok else res.params.to_numpy()
            raw.extend({**cell, "method": method, "rep": r, "coef": j, "truth": beta[j],
                        "estimate": float(res.params.iloc[j]), "bse": float(res.bse.iloc[j]),
                        "centre": float(mid[j]),
                        "n_noisy": n_hat, "released": ok, "box_truth": boxed[j]}
                       for j in range(p + 1))
        if r < baseline_reps:
            base.append(baseline_width(method, df))
        if (r + 1) % PROGRESS == 0 and released.any():
            print(f"    {method} {cell['cov']} n={cell['n']:,}: {r + 1}/{reps} fits, intervals "
                  f"{released[:r + 1].mean():.2f}, coverage so far "
                  f"{cover[:r + 1][released[:r + 1]].mean():.3f}", flush=True)
    base_w = np.median(np.array(base), axis=0)
    names = ["Intercept"] + [f"x{j}" for j in range(p)]
    rows = []
    for j, name in enumerate(names):
        rows.append({**cell, "method": method, "chosen": "/".join(sorted(set(chosen))),
                     "coef": name, "reps": reps, "released": int(released.sum()),
                     "withheld_share": 1.0 - released.mean(),
                     "coverage": cover[released, j].mean() if released.any() else np.nan,
                     "median_width_ratio": (np.nanmedian(width[released, j]) / base_w[j]
                                            if released.any() else np.nan)})
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby(["method", "cov", "n", "p", "eps"], sort=False)
    return g.agg(chosen=("chosen", "first"), reps=("reps", "first"),
                 withheld=("withheld_share", "first"), coverage=("coverage", "mean"),
                 worst=("coverage", "min"), width=("median_width_ratio", "median")).reset_index()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--centre-reps", type=int, default=200)
    ap.add_argument("--baseline-reps", type=int, default=20)
    ap.add_argument("--cells", default="all", help="'all' or comma-separated cell indices")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--raw", default=None, help="also write one row per fit and coefficient")
    args = ap.parse_args(argv)
    idx = range(len(CELLS)) if args.cells == "all" else [int(i) for i in args.cells.split(",")]
    frames, raw = [], ([] if args.raw else None)
    t0 = time.time()
    for method in args.methods.split(","):
        for i in idx:
            cell = CELLS[i]
            reps = args.centre_reps if i == 0 else args.reps
            out = run_cell(cell, method, reps, args.baseline_reps, seed=1000 + 17 * i, raw=raw)
            frames.append(out)
            s = summary(out).iloc[0]
            print(f"[{time.time() - t0:7.0f}s] {method:9s} {cell['cov']:8s} n={cell['n']:>7,} "
                  f"p={cell['p']:>2} eps={cell['eps']:<4} ({s.chosen}) reps={reps}: coverage "
                  f"{s.coverage:.3f} (worst {s.worst:.3f}), width x{s.width:.2f}, withheld "
                  f"{s.withheld:.2f}", flush=True)
            pd.concat(frames).to_csv(args.out, index=False)
            if raw is not None:
                pd.DataFrame(raw).to_csv(args.raw, index=False)
    print(summary(pd.concat(frames)).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
