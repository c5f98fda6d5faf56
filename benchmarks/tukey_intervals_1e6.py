"""Coverage of the default fit's intervals at 1e6 x 20 (issue 16), with the non-private OLS
interval's coverage as the baseline in the same run, and a decomposition of the misses.

Data: ``speed_common.synthetic_frame(n, d, seed=rep)`` (``y = X[:, :5] @ BETA + N(0, 1)``, d
independent standard-normal columns), so the population least-squares coefficients are
``(0, BETA, 0...)``: the truth every interval (private and OLS) is checked against. Each
replication fits the default ``dp_lm("y ~ .", eps=--eps, random_state=rep)`` and records, per
coefficient, the estimate, its standard error, whether it has a finite interval and covers, the
z-score ``(estimate - truth) / se``, its width relative to the OLS interval, and the same for OLS
(``z_ols``, ``covers_ols``).

``--diag`` (a non-shipping diagnostic) also records, per fit and coordinate of the mechanism
(the prediction at the private centre in place of the intercept), what the inference stage saw
but does not release: the models' median and robust spread (MAD / 0.6745), the released
spread ``sigma`` and window share ``q``, ``f`` and ``m``; so the released standard error can be
set beside the point's actual spread over seeds and the point's bias beside the truth.

    nice -n 10 python benchmarks/tukey_intervals_1e6.py [--reps 50] [--start 0] [--n 1e6]
        [--d 20] [--eps 1] [--diag] [--root /tmp/base] [--out ...]
    python benchmarks/tukey_intervals_1e6.py --summarize FILE [FILE ...]

Writes benchmarks/results/tukey_intervals_1e6.csv (one row per fit and coefficient) and prints,
with progress, per-coefficient coverage, mean and sd of z (private and OLS), and the totals.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import speed_common as sc

OUT = Path(__file__).resolve().parent / "results" / "tukey_intervals_1e6.csv"
Z = 1.959963984540054
WILD = 10.0          # |z| above this: a broken interval (kept out of mean and sd of z)


def ols(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Non-private OLS estimate and classical standard errors (intercept first)."""
    n = len(df)
    X = np.column_stack([np.ones(n), df.drop(columns="y").to_numpy()])
    beta, rss = np.linalg.lstsq(X, df["y"].to_numpy(), rcond=None)[:2]
    se = np.sqrt(rss[0] / (n - X.shape[1]) * np.diag(np.linalg.inv(X.T @ X)))
    return beta, se


class Probe:
    """Records what the Tukey inference stage saw (``--diag``; wraps module functions of the
    imported dpstats, nothing else changes)."""

    def __init__(self, dp):
        from dpstats.estimators.inference import tukey as inf
        from dpstats.estimators.tukey import linear
        self.last: dict = {}
        orig_infer, orig_spread = linear.tukey_inference, inf.model_spread
        probe = self

        def infer(X, y, models, point, c, intercept_col, **kw):
            B = np.asarray(models, dtype=np.float64)
            med = np.median(B, axis=0)
            mad = np.median(np.abs(B - med), axis=0) / 0.6744897501960817
            probe.last = {"m": B.shape[0], "model_median": med, "model_sd": mad,
                          "model_sd_std": B.std(axis=0),
                          "theta": inf.mechanism_point(point, c, intercept_col)}
            return orig_infer(X, y, models, point, c, intercept_col, **kw)

        def spread(B, theta, w, eps, rng, ledger, ident=None):
            sigma, q = orig_spread(B, theta, w, eps, rng, ledger, ident)
            probe.last.update(sigma=sigma, q=q, w=w)
            return sigma, q

        linear.tukey_inference, inf.model_spread = infer, spread

    def rows(self, p: int) -> list[dict]:
        d = self.last
        if not d:
            return [{} for _ in range(p)]
        keys = ("model_median", "model_sd", "model_sd_std", "theta", "sigma", "q", "w")
        return [{"m": d["m"], **{k: float(d[k][j]) for k in keys if k in d}} for j in range(p)]


def one_rep(dp, rep: int, n: int, d: int, eps: float, probe: Probe | None) -> list[dict]:
    """One replication: the default fit, the OLS baseline, one row per coefficient."""
    df = sc.synthetic_frame(n, d, seed=rep)
    truth = np.r_[0.0, sc.BETA[:min(5, d)], np.zeros(max(d - 5, 0))]
    b_ols, se_ols = ols(df)
    t0 = time.perf_counter()
    fit = dp.dp_lm("y ~ .", df, eps=eps, random_state=rep)
    secs = time.perf_counter() - t0
    est, se = fit.params.to_numpy(), fit.bse.to_numpy()
    ci = fit.conf_int().to_numpy()
    diag = probe.rows(len(est)) if probe is not None else [{} for _ in est]
    out = []
    for j, name in enumerate(fit.params.index):
        lo, hi = ci[j]
        has = bool(np.isfinite(lo) and np.isfinite(hi))
        out.append({"rep": rep, "term": name, "method": fit.method.split(":")[0],
                    "released": fit.released, "seconds": secs, "truth": truth[j],
                    "estimate": est[j], "se": se[j], "has_interval": has,
                    "covers": bool(has and lo <= truth[j] <= hi),
                    "z": (est[j] - truth[j]) / se[j] if has else np.nan,
                    "width_vs_ols": (hi - lo) / (2 * Z * se_ols[j]) if has else np.nan,
                    "ols": b_ols[j], "se_ols": se_ols[j],
                    "z_ols": (b_ols[j] - truth[j]) / se_ols[j],
                    "covers_ols": bool(abs(b_ols[j] - truth[j]) <= Z * se_ols[j]),
                    **diag[j]})
    if probe is not None:
        probe.last = {}
    return out


def per_term(res: pd.DataFrame) -> pd.DataFrame:
    """Per coefficient: intervals, coverage, mean and sd of z (|z| <= WILD), the point's spread
    over seeds against its median standard error, and the OLS baseline."""
    rows = []
    order = list(dict.fromkeys(res["term"]))
    for term in order:
        g = res[res["term"] == term]
        h = g[g["has_interval"]]
        z = h["z"][h["z"].abs() <= WILD]
        err = g["estimate"] - g["truth"]
        rows.append({"term": term, "fits": len(g), "intervals": len(h),
                     "coverage": h["covers"].mean() if len(h) else np.nan,
                     "z_mean": z.mean(), "z_sd": z.std(ddof=1), "z_wild": int(len(h) - len(z)),
                     "bias_over_se": err.mean() / h["se"].median() if len(h) else np.nan,
                     "spread_over_se": err.std(ddof=1) / h["se"].median() if len(h) else np.nan,
                     "width_vs_ols": h["width_vs_ols"].median(),
                     "coverage_ols": g["covers_ols"].mean(), "z_ols_mean": g["z_ols"].mean(),
                     "z_ols_sd": g["z_ols"].std(ddof=1)})
    return pd.DataFrame(rows)


def summarize(res: pd.DataFrame) -> pd.DataFrame:
    """Print the per-coefficient table and the totals; return the table."""
    tab = per_term(res)
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(tab.round(3).to_string(index=False))
    has = res[res["has_interval"]]
    reps = res["rep"].nunique()
    lo, hi = tab["coverage"].min(), tab["coverage"].max()
    print(f"\n{reps} replications: intervals for {res['has_interval'].mean():.1%} of "
          f"coefficients; coverage {has['covers'].mean():.3f} of {len(has)} intervals "
          f"(per coefficient {lo:.3f}-{hi:.3f}); OLS {res['covers_ols'].mean():.3f} of "
          f"{len(res)} (per coefficient {tab['coverage_ols'].min():.3f}-"
          f"{tab['coverage_ols'].max():.3f}); median width / OLS "
          f"{has['width_vs_ols'].median():.2f}; methods {sorted(set(res['method']))}; "
          f"median fit {res.groupby('rep')['seconds'].first().median():.2f} s")
    return tab


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--diag", action="store_true", help="record the inference stage's inputs")
    ap.add_argument("--root", default=None, help="another checkout's dpstats")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--summarize", nargs="+", default=None, help="summarise result CSVs")
    a = ap.parse_args(argv)
    if a.summarize:
        summarize(pd.concat([pd.read_csv(f) for f in a.summarize], ignore_index=True))
        return
    if a.root:
        sys.path.insert(0, str(Path(a.root).resolve()))
    import dpstats as dp
    print(f"dpstats from {Path(dp.__file__).parent} ({sc.load_note()})", flush=True)
    warnings.simplefilter("ignore")
    probe = Probe(dp) if a.diag else None
    n, d = int(a.n), a.d
    rows, t0 = [], time.perf_counter()
    for rep in range(a.start, a.start + a.reps):
        got = one_rep(dp, rep, n, d, a.eps, probe)
        rows += got
        print(f"[{time.perf_counter() - t0:6.0f} s] rep {rep}: intervals for "
              f"{sum(r['has_interval'] for r in got)} of {len(got)}, covering "
              f"{sum(r['covers'] for r in got)}; OLS covering "
              f"{sum(r['covers_ols'] for r in got)} ({sc.load_note()})", flush=True)
        if (rep - a.start) % 5 == 4:          # keep what is done
            pd.DataFrame(rows).to_csv(a.out, index=False)
    res = pd.DataFrame(rows)
    Path(a.out).parent.mkdir(exist_ok=True)
    res.to_csv(a.out, index=False)
    summarize(res)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
