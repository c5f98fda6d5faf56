"""How much of the logistic Tukey skewed intercept's over-coverage the weighted moments' clip
explains (issue 16; design note "dp_glm's Tukey intervals: 0/1 columns and factors").

No privacy, no noise: on data sets of ``glm_coverage.py``'s cells (n = 1e5, p = 5), the m = 1,663
median-bias-reduced group logistic fits are computed, and the models' empirical sign
correlations around their coordinate-wise medians (what the medians' covariance needs, Bahadur)
are set against the intervals' formula ``(2/pi) arcsin(corr V)`` with ``V`` the inverse of the
noise-free weighted moments of columns clipped at B = 3 (the mechanism's), 6 and unclipped.
Printed: the implied variance of the reported intercept (per-coordinate sds fixed at the
models' median absolute deviations) under the formula over the empirical one, per data set,
and the median.

    nice -n 10 python benchmarks/glm_tukey_skew_correlations.py skewed 4
    nice -n 10 python benchmarks/glm_tukey_skew_correlations.py gaussian 3
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy.special import expit

sys.path.insert(0, str(Path(__file__).resolve().parent))

import glm_coverage as gc  # noqa: E402

from dpstats._kernels.logistic import group_logistic  # noqa: E402
from dpstats.estimators.inference.tukey_cov import (  # noqa: E402
    correlation,
    floored_inverse,
    intercept_map,
)
from dpstats.estimators.tukey.glm_bias import median_bias_reduce  # noqa: E402
from dpstats.estimators.tukey.linear import partition_labels  # noqa: E402

BOUNDS = (3.0, 6.0, np.inf)


def one(cov: str, seed: int, m: int = 1663) -> list[float]:
    rng = np.random.default_rng(100 + seed)
    df, beta = gc.simulate({"n": 100_000, "p": 5, "eps": 1.0, "cov": cov}, "glm-tukey", rng)
    X = np.c_[np.ones(len(df)), gc.design(df)]
    y = df.y.to_numpy()
    labels = partition_labels(len(y), m, rng)
    B = median_bias_reduce(X, y, labels, m, group_logistic(X, y, labels, m, 1e-6))
    c = np.r_[0.0, np.median(X[:, 1:], axis=0)]
    B[:, 0] += B[:, 1:] @ c[1:]                       # the mechanism's coordinates
    med = np.median(B, axis=0)
    S = np.sign(B - med)
    sign_corr = S.T @ S / m
    D = np.diag(np.median(np.abs(B - med), axis=0) / 0.6744897501960817)
    A = intercept_map(c, 0, X.shape[1])
    w = expit(X @ beta)
    w *= 1.0 - w
    s = np.r_[1.0, np.median(np.abs(X[:, 1:] - c[1:]), axis=0)]

    def var0(C):
        return float((A @ D @ C @ D @ A.T)[0, 0])
    out = []
    for bound in BOUNDS:
        U = np.c_[np.ones(len(y)), np.clip((X[:, 1:] - c[1:]) / s[1:], -bound, bound)]
        V = floored_inverse((U * w[:, None]).T @ U / len(y)) / np.outer(s, s)
        out.append(var0(2.0 / np.pi * np.arcsin(correlation(V))) / var0(sign_corr))
    return out


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    cov, sets = argv[0], int(argv[1])
    rows = []
    for seed in range(sets):
        rows.append(one(cov, seed))
        print(f"{cov} data set {seed + 1}/{sets}: intercept variance, formula / empirical, at "
              f"B = 3, 6, inf: {np.round(rows[-1], 3).tolist()}", flush=True)
    print(f"median over {sets}: {np.round(np.median(rows, axis=0), 3).tolist()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
