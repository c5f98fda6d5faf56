"""The logistic Tukey group fits' median bias, without privacy (issue 16).

The released point of ``dp_glm(method="tukey")`` is about the coordinate-wise median of m
median-bias-reduced group fits (:mod:`dpstats.estimators.tukey.glm_bias`); its standard error
is about ``sqrt(pi/2 / m)`` times the fits' spread (plus the mechanism's noise). A residual
median bias that is a fixed share of the fits' spread therefore moves z as ``sqrt(m)``. For
each data set of a :mod:`glm_coverage` cell this script fits the m groups once and, for each
correction (``mle``: none; ``s1``, ``s2``, ...: that many quasi-Fisher steps), records the
share of group fits below the truth per coordinate. Pooled over data sets, ``0.5 - share``
is the fits' median bias in probability; ``z_med = 2 sqrt(m) (0.5 - share)`` is the median's
shift in its own standard deviations (sign: towards the truth's sign positive).

    nice -n 10 python benchmarks/glm_tukey_median_bias.py --n 200000 --m 3158 --reps 20

Prints per coordinate and correction the mean ``z_med`` (the bias the intervals see) and
its standard error over the data sets. Data: Gaussian (or ``--cov``) covariates and the
coefficients of ``glm_coverage.coefficients(p)``, no centring (slopes are unchanged by it).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
import glm_coverage as gc  # noqa: E402

from dpstats._kernels.logistic import group_logistic  # noqa: E402
from dpstats.estimators.tukey.glm_bias import median_bias_reduce  # noqa: E402


def run(n: int, m: int, p: int, cov: str, reps: int, steps: list[int], seed: int,
        scale: float = 1.0):
    rng = np.random.default_rng(seed)
    beta = gc.coefficients(p)
    beta[1:] *= scale
    rows = []
    for r in range(reps):
        X = np.c_[np.ones(n), gc.covariates(cov, n, p, rng)]
        y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-X @ beta))).astype(float)
        labels = rng.integers(0, m, size=n).astype(np.int64)
        mle = group_logistic(X, y, labels, m, 1e-6)
        fits = {"mle": mle}
        for s in steps:
            fits[f"s{s}"] = median_bias_reduce(X, y, labels, m, mle, steps=s)
        for name, B in fits.items():
            below = (B < beta).mean(axis=0)
            sign = np.where(beta >= 0, 1.0, -1.0)
            z = 2.0 * np.sqrt(m) * (below - 0.5) * -sign     # + : median away from 0
            for j in range(p + 1):
                rows.append({"rep": r, "fit": name, "coef": j, "truth": beta[j],
                             "below": below[j], "z_away": z[j]})
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--m", type=int, default=3158)
    ap.add_argument("--p", type=int, default=5)
    ap.add_argument("--cov", default="gaussian")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--steps", default="1,2,4")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--scale", type=float, default=1.0, help="the slopes times this")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    t0 = time.time()
    d = run(a.n, a.m, a.p, a.cov, a.reps, [int(s) for s in a.steps.split(",")], a.seed,
            a.scale)
    if a.out:
        d.to_csv(a.out, index=False)
    g = d.groupby(["fit", "coef"])["z_away"]
    t = g.mean().unstack("coef").round(3)
    se = (g.std() / np.sqrt(g.size())).unstack("coef").round(3)
    k = a.n / (a.m * (a.p + 1))         # rows per column (intercept included)
    print(f"n={a.n:,} m={a.m:,} p={a.p} cov={a.cov} scale={a.scale}: {a.reps} data sets, "
          f"{time.time() - t0:.0f} s; mean z of the fits' median away from 0 (coef 0: the "
          f"intercept, uncentred)")
    print(t.to_string())
    print("standard error of the mean")
    print(se.to_string())
    print(f"slope: z_away k / sqrt(m) ({k:.3g} rows per column), the shift's BIAS_SLOPE")
    print((t * k / np.sqrt(a.m)).round(3).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
