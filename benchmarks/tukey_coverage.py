"""Coverage and width of the Tukey mechanism's 95% intervals (issue 16), for ``method="tukey"``
and for the default call (``method="auto"``, which picks Tukey at large n).

Grid: a centre cell (n = 100,000, p = 5 predictors, eps = 1, Gaussian covariates and errors)
and one-factor-at-a-time arms around it: n in {20,000, 200,000}, p in {1, 10}, eps in {0.5, 4},
skewed covariates (centred exponential), correlated covariates (equicorrelated 0.5), a binary
factor (the last predictor a two-level factor, 30% in its second level), t(3) errors,
heteroscedastic errors (sd 0.5 + |x_1|). Besides the coefficients, the fitted mean's
interval (``get_prediction``) is checked at three public rows (:func:`prediction_points`; columns
``mean_*``).
Data: ``y = 1 + X beta + e`` with ``beta_j = 0.5 j``; every coefficient's interval is checked
against the true ``(1, beta)``. The baseline in the same run is non-private OLS (its classical
interval width).

The release gate (:func:`dpstats.estimators.inference.gate.tukey_passes`) is open during the
runs (``TUKEY_THRESHOLD = 0``) and each fit records its gate index ``m * eps / p`` (public), so
the threshold is derived from the same runs (:func:`derive`). Where the default chose Tukey,
its fit *is* the ``method="tukey"`` fit (same pipeline, same seed; checked on the first
replication of every cell by :func:`_same`), so it is run once and counted for both. The
columns ``*_gated`` apply the committed threshold afterwards (the gated fit releases its
point with 5% more eps, a small change not simulated here).

Usage::

    nice -n 10 python benchmarks/tukey_coverage.py --reps 200 --arm-reps 60

Writes ``benchmarks/results/tukey_coverage.csv`` (one row per method and cell) and
``benchmarks/results/tukey_coverage_fits.csv`` (one row per fit and coefficient).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import dpstats as dp
from dpstats.estimators.inference import gate

RESULTS = Path(__file__).resolve().parent / "results"
CENTRE = {"n": 100_000, "p": 5, "eps": 1.0, "covariates": "gaussian", "errors": "gaussian"}
ARMS = {"n": [20_000, 200_000], "p": [1, 10], "eps": [0.5, 4.0],
        "covariates": ["skewed", "correlated", "binary"],
        "errors": ["t3", "hetero"]}
Z = 1.959963984540054


def cells() -> list[dict]:
    """The centre cell and the one-factor arms."""
    out = [dict(CENTRE, cell="centre")]
    for key, values in ARMS.items():
        for v in values:
            out.append(dict(CENTRE, **{key: v}, cell=f"{key}={v}"))
    return out


def simulate(cell: dict, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """A data set of the cell and its true coefficients (intercept first)."""
    rng = np.random.default_rng(seed)
    n, p = int(cell["n"]), int(cell["p"])
    if cell["covariates"] == "skewed":
        X = rng.exponential(1.0, size=(n, p)) - 1.0
    elif cell["covariates"] == "correlated":        # equicorrelated 0.5
        X = (rng.normal(size=(n, p)) + rng.normal(size=(n, 1))) / np.sqrt(2.0)
    else:
        X = rng.normal(size=(n, p))
    beta = 0.5 * np.arange(1, p + 1)
    if cell["errors"] == "t3":
        e = rng.standard_t(3, size=n)
    elif cell["errors"] == "hetero":
        e = rng.normal(size=n) * (0.5 + np.abs(X[:, 0]))
    else:
        e = rng.normal(size=n)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    if cell["covariates"] == "binary":     # the last predictor a two-level factor (30% "b")
        b = rng.random(n) < 0.3
        X[:, -1] = b
        df = df.drop(columns=f"x{p - 1}")
        df["g"] = np.where(b, "b", "a")
    df["y"] = 1.0 + X @ beta + e
    return df, np.r_[1.0, beta]


def ols_se(df: pd.DataFrame, points: np.ndarray | None = None) -> np.ndarray:
    """Classical OLS standard errors (intercept first); with ``points`` (rows with a leading
    1), those of the fitted means there."""
    X = np.c_[np.ones(len(df)), df.drop(columns="y").replace({"a": 0.0, "b": 1.0})
              .to_numpy(dtype=float)]
    y = df["y"].to_numpy()
    G = X.T @ X
    b = np.linalg.solve(G, y @ X)
    r = y - X @ b
    s2 = r @ r / (len(y) - X.shape[1])
    Gi = np.linalg.inv(G)
    if points is not None:
        return np.sqrt(s2 * np.einsum("ij,jk,ik->i", points, Gi, points))
    return np.sqrt(s2 * np.diag(Gi))


def prediction_points(p: int) -> dict[str, np.ndarray]:
    """Public rows (no intercept) where the fitted mean's interval is checked: every x at 1,
    alternating +-1, and 2 at the first column."""
    alt = np.where(np.arange(p) % 2 == 0, 1.0, -1.0)
    return {"mean@ones": np.ones(p), "mean@alt": alt, "mean@2e0": np.r_[2.0, np.zeros(p - 1)]}


def one_fit(df, truth, method: str, eps: float, seed: int) -> list[dict]:
    """Rows (one per coefficient) of one fit."""
    kwargs = {} if method == "auto" else {"method": method}
    res = dp.dp_lm("y ~ .", df, eps=eps, delta=1e-5, random_state=seed, **kwargs)
    se_ols = ols_se(df)
    inf = res.inference
    method_used = getattr(res, "method", method)
    m = res.m
    p_cols = len(res.params)
    index = gate.tukey_index(m, eps * 0.95, p_cols) if m else np.nan
    rows = []
    for j, name in enumerate(res.params.index):
        se = float(res.bse.iloc[j]) if res.released else np.nan
        est = float(res.params.iloc[j])
        rows.append({"coef": name, "truth": truth[j], "estimate": est, "se": se,
                     "covered": abs(est - truth[j]) <= Z * se if np.isfinite(se) else np.nan,
                     "width_ratio": se / se_ols[j] if np.isfinite(se) else np.nan,
                     "released": bool(res.released), "has_se": bool(np.isfinite(se)),
                     "index": index, "m": m, "method_used": str(method_used),
                     "reason": (inf.reason or "") if inf is not None else ""})
    pts = prediction_points(len(truth) - 1)
    new = pd.DataFrame(np.array(list(pts.values())),
                       columns=[f"x{j}" for j in range(len(truth) - 1)])
    if "g" in df:                          # the factor's row: level "b" where x is 1
        new["g"] = np.where(new.pop(new.columns[-1]) > 0.5, "b", "a")
    frame = res.get_prediction(new).summary_frame() if res.released else None
    se_ols_pts = ols_se(df, np.c_[np.ones(len(pts)), np.array(list(pts.values()))])
    for i, (name, x) in enumerate(pts.items()):
        t = truth[0] + x @ truth[1:]
        est = float(frame["mean"].iloc[i]) if frame is not None else np.nan
        se = float(frame["mean_se"].iloc[i]) if frame is not None else np.nan
        rows.append({**rows[0], "coef": name, "truth": t, "estimate": est, "se": se,
                     "covered": abs(est - t) <= Z * se if np.isfinite(se) else np.nan,
                     "width_ratio": se / se_ols_pts[i] if np.isfinite(se) else np.nan,
                     "has_se": bool(np.isfinite(se))})
    return rows


def _same(a: list[dict], b: list[dict]) -> None:
    """Check that the default's fit, when it chose Tukey, is the ``method="tukey"`` fit."""
    if a[0]["method_used"] == "tukey":
        ea, eb = [r["estimate"] for r in a], [r["estimate"] for r in b]
        sa, sb = [r["se"] for r in a], [r["se"] for r in b]
        assert ea == eb and np.allclose(sa, sb, equal_nan=True), (ea, eb)


def summarise(fits: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """One row per (method, cell): coverage (overall, worst coefficient), median width ratio,
    shares released / with intervals; ``*_gated`` with the gate at ``threshold``."""
    out = []
    is_mean = fits["coef"].astype(str).str.startswith("mean@")
    means, fits = fits[is_mean], fits[~is_mean]
    for (method, cell), g in fits.groupby(["method", "cell"], sort=False):
        fit = g.groupby("rep").first()
        row = {"method": method, "cell": cell, **{k: g[k].iloc[0] for k in
                                                  ("n", "p", "eps", "covariates", "errors")},
               "reps": len(fit), "released": fit["released"].mean(),
               "median_m": float(np.nanmedian(fit["m"].astype(float))),
               "median_index": float(np.nanmedian(fit["index"].astype(float)))}
        for suffix, keep in (("", g["has_se"]), ("_gated", g["has_se"] & (g["index"] >=
                                                                          threshold))):
            h = g[keep]
            cov = h.groupby("coef")["covered"].mean() if len(h) else pd.Series(dtype=float)
            row["with_intervals" + suffix] = keep.groupby(g["rep"]).any().mean()
            row["coverage" + suffix] = float(h["covered"].mean()) if len(h) else np.nan
            row["worst_coef" + suffix] = float(cov.min()) if len(cov) else np.nan
            row["best_coef" + suffix] = float(cov.max()) if len(cov) else np.nan
            row["width_ratio" + suffix] = (float(np.nanmedian(h["width_ratio"])) if len(h)
                                           else np.nan)
        h = means[(means["method"] == method) & (means["cell"] == cell) & means["has_se"]]
        cov = h.groupby("coef")["covered"].mean() if len(h) else pd.Series(dtype=float)
        row["mean_coverage"] = float(h["covered"].mean()) if len(h) else np.nan
        row["mean_worst"] = float(cov.min()) if len(cov) else np.nan
        row["mean_width_ratio"] = float(np.nanmedian(h["width_ratio"])) if len(h) else np.nan
        out.append(row)
    return pd.DataFrame(out)


def failing(summary: pd.DataFrame, low: float = 0.935) -> pd.Series:
    """Cells (open gate) whose coverage is below ``low``, or whose worst coefficient is below
    0.95 by more than 3 binomial standard errors of its replications (the minimum of up to 11
    coefficients' coverage: at 40 replications it is ~0.90 for exact intervals, and below
    0.85 with probability ~0.25 for six coefficients at 2.5 standard errors)."""
    slack = 3.0 * np.sqrt(0.95 * 0.05 / summary["reps"])
    return (summary["coverage"] < low) | (summary["worst_coef"] < 0.95 - slack)


def derive(summary: pd.DataFrame) -> float:
    """The gate threshold: the smallest index of a covering cell above every failing cell
    (rounded down to 50), as for the BAS gate (design note 26)."""
    s = summary[summary["coverage"].notna()]
    bad = failing(s)
    top_bad = s.loc[bad, "median_index"].max() if bad.any() else 0.0
    good = s.loc[~bad & (s["median_index"] > top_bad), "median_index"]
    return float(np.floor(good.min() / 50) * 50) if len(good) else float("inf")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200, help="replications at the centre cell")
    ap.add_argument("--arm-reps", type=int, default=60, help="replications in the other cells")
    ap.add_argument("--methods", default="auto,tukey")
    ap.add_argument("--cells", default="", help="comma list of cell names (default: all)")
    ap.add_argument("--start", type=int, default=0,
                    help="first replication (more replications of a cell in another process)")
    ap.add_argument("--tag", default="", help="fits file suffix (runs in parallel processes)")
    ap.add_argument("--merge", action="store_true",
                    help="only summarise every tukey_coverage_fits*.csv into the results CSV "
                         "(a fit in several files: the most recently written file's)")
    args = ap.parse_args(argv)
    committed = gate.TUKEY_THRESHOLD
    if args.merge:
        files = sorted(RESULTS.glob("tukey_coverage_fits*.csv"),
                       key=lambda f: (f.stat().st_mtime, f.name))
        fits = pd.concat([pd.read_csv(f) for f in files])    # the newest run of a fit wins
        fits = fits.drop_duplicates(["method", "cell", "rep", "coef"], keep="last")
        return _report(summarise(fits, committed), committed)
    gate.TUKEY_THRESHOLD = 0.0        # open: every fit records its index (see module doc)
    chosen = [c for c in cells() if not args.cells or c["cell"] in args.cells.split(",")]
    rows = []
    t0 = time.time()
    for cell in chosen:
        reps = args.reps if cell["cell"] == "centre" else args.arm_reps
        for rep in range(args.start, args.start + reps):
            df, truth = simulate(cell, 1_000_000 + rep)
            done = {}
            for method in args.methods.split(","):
                if method == "tukey" and done.get("auto", [{}])[0].get("method_used") == \
                        "tukey" and rep > 0:
                    fit = done["auto"]        # the same fit (same seed): see module doc
                else:
                    fit = one_fit(df, truth, method, float(cell["eps"]), 7_000 + rep)
                    if method == "tukey" and rep == 0 and "auto" in done:
                        _same(done["auto"], fit)
                done[method] = fit
                rows += [{**r, **cell, "method": method, "rep": rep} for r in fit]
            if rep % 20 == 19 or rep == args.start + reps - 1:
                print(f"  {cell['cell']}: {rep + 1 - args.start}/{reps} reps, "
                      f"{time.time() - t0:,.0f} s",
                      file=sys.stderr, flush=True)
        fits = pd.DataFrame(rows)
        RESULTS.mkdir(exist_ok=True)
        fits.to_csv(RESULTS / f"tukey_coverage_fits{args.tag}.csv", index=False)
        summary = summarise(fits, committed)
    return _report(summary, committed, write=not args.tag)


def _report(summary: pd.DataFrame, committed: float, write: bool = True) -> int:
    """Print the table (and write the results CSV)."""
    if write:
        summary.to_csv(RESULTS / "tukey_coverage.csv", index=False)
    cols = ["method", "cell", "reps", "median_m", "median_index", "with_intervals", "coverage",
            "worst_coef", "width_ratio", "with_intervals_gated", "coverage_gated",
            "worst_coef_gated", "mean_coverage", "mean_worst", "mean_width_ratio"]
    cols = [c for c in cols if c in summary.columns]
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(summary[cols].round(3).to_string(index=False))
    print(f"failing cells (open gate): {list(summary.loc[failing(summary), 'cell'].unique())}; "
          f"derived threshold {derive(summary):,.0f}; committed {committed:,.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
