"""The default fit's intervals at 1e6 x 20 (issue 16): how many coefficients get one, and a
small seeded coverage probe (a handful of replications: a check, not a coverage estimate).

Data: ``speed_common.synthetic_frame(n, d, seed=rep)`` (``y = X[:, :5] @ BETA + N(0, 1)``, d
standard-normal columns), so the population least-squares coefficients are ``(0, BETA, 0...)``.
Each replication fits the default ``dp_lm("y ~ .", eps=--eps, random_state=rep)`` and records,
per coefficient, whether it has a finite interval, whether its 95% interval covers the truth,
and its width relative to the non-private OLS interval (``2 * 1.96 * se_OLS``, from the same
rows). ``--root`` runs another checkout's dpstats (e.g. the baseline of an A/B).

    nice -n 10 python benchmarks/tukey_intervals_1e6.py [--reps 5] [--n 1e6] [--d 20]
        [--eps 1] [--root /tmp/base] [--out ...]

Writes benchmarks/results/tukey_intervals_1e6.csv (one row per fit and coefficient) and prints
a summary with progress.
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


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--root", default=None, help="another checkout's dpstats")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    if a.root:
        sys.path.insert(0, str(Path(a.root).resolve()))
    import dpstats as dp
    print(f"dpstats from {Path(dp.__file__).parent} ({sc.load_note()})", flush=True)
    warnings.simplefilter("ignore")
    n, d = int(a.n), a.d
    truth = np.r_[0.0, sc.BETA[:min(5, d)], np.zeros(max(d - 5, 0))]
    rows, t0 = [], time.perf_counter()
    for rep in range(a.reps):
        df = sc.synthetic_frame(n, d, seed=rep)
        X = np.column_stack([np.ones(n), df.drop(columns="y").to_numpy()])
        beta, rss = np.linalg.lstsq(X, df["y"].to_numpy(), rcond=None)[:2]
        se_ols = np.sqrt(rss[0] / (n - d - 1) * np.diag(np.linalg.inv(X.T @ X)))
        fit = dp.dp_lm("y ~ .", df, eps=a.eps, random_state=rep)
        ci = fit.conf_int().to_numpy()
        for j, name in enumerate(fit.params.index):
            lo, hi = ci[j]
            has = bool(np.isfinite(lo) and np.isfinite(hi))
            rows.append({"rep": rep, "term": name, "method": fit.method.split(":")[0],
                         "released": fit.released, "has_interval": has,
                         "covers": bool(has and lo <= truth[j] <= hi),
                         "width_vs_ols": (hi - lo) / (2 * 1.959964 * se_ols[j]) if has
                         else np.nan})
        got = [r for r in rows if r["rep"] == rep]
        print(f"[{time.perf_counter() - t0:6.0f} s] rep {rep}: intervals for "
              f"{sum(r['has_interval'] for r in got)} of {len(got)}, covering "
              f"{sum(r['covers'] for r in got)} ({sc.load_note()})", flush=True)
    res = pd.DataFrame(rows)
    Path(a.out).parent.mkdir(exist_ok=True)
    res.to_csv(a.out, index=False)
    has = res[res["has_interval"]]
    print(f"\n{a.reps} seeded replications (a probe, not a coverage estimate): intervals for "
          f"{res['has_interval'].mean():.1%} of coefficients "
          f"(per fit {res.groupby('rep')['has_interval'].sum().tolist()} of {d + 1}); "
          f"coverage {has['covers'].mean():.3f} of {len(has)} intervals; median width / OLS "
          f"{has['width_vs_ols'].median():.2f}")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
