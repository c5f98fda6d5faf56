"""How many Tukey models at large n: test error of the released point against the number of
models m, by a data-independent simulation (no data file is read).

The public model: rows ``x = (1, z)``, ``z ~ N(0, I_{p-1})``, ``y = x'beta + N(0, 1)``; rows get
iid uniform labels in {0..m-1} (the group sizes are multinomial). A group of ``n_g >= p + 1``
rows has the OLS model ``beta + L^{-T} u`` with ``L L' = X_g'X_g`` and ``u ~ N(0, I)``, and
``X_g'X_g = [[n_g, s'], [s, W + s s' / n_g]]`` with ``s ~ N(0, n_g I)`` and ``W`` a
Wishart(n_g - 1, I) scatter (Bartlett): the exact distribution of the group fits of such rows,
drawn in O(m p^3) without the rows, so n can be 1e8 or 1e9. Smaller groups (rare) are fitted
from real rows (minimum-norm least squares, as the kernel does). The models go through the
package's own Tukey mechanism (:func:`dpstats.estimators.tukey.linear.estimate` with an engine
that supplies them; centre None: the public design is centred at 0 already).

Test error: ``||b - beta||^2`` (the excess test MSE, as E[xx'] = I) divided by the OLS
excess ``p / n``; a withheld release counts as infinite (medians are reported). For each
(p, eps_tukey, n) it fits today's rule ``m = min(n / (3 p), 2^20)`` and ``m = C *
models_needed(p, eps, delta)`` for C in a grid (only where that is below ``n / (3 p)``).

    nice -n 10 python benchmarks/tukey_models_cap.py [--reps 8] [--p 3,6,11] [--eps 0.5,1]
        [--n 1e6,1e7,1e8] [--mult 4,16,64,256]

Writes benchmarks/results/tukey_models_cap.csv (one row per fit) and prints the medians.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dpstats.estimators.tukey.choose_m import MAX_MODELS, ROWS_PER_COLUMN, models_needed
from dpstats.estimators.tukey.linear import estimate

OUT = Path(__file__).resolve().parent / "results" / "tukey_models_cap.csv"
DELTA = 1e-5
_BLOCK = 1 << 16


def _small_groups(sizes: np.ndarray, beta: np.ndarray, rng) -> np.ndarray:
    """Models of groups too small for the Wishart draw: least squares on real rows."""
    p = beta.size
    out = np.zeros((sizes.size, p))
    for g, k in enumerate(sizes):
        if k == 0:
            continue
        X = np.column_stack([np.ones(k), rng.standard_normal((k, p - 1))])
        y = X @ beta + rng.standard_normal(k)
        out[g] = np.linalg.lstsq(X, y, rcond=1e-12)[0]
    return out


def _wishart_groups(sizes: np.ndarray, beta: np.ndarray, rng) -> np.ndarray:
    """OLS models of groups of ``sizes`` (each >= p + 1) Gaussian rows (module docstring)."""
    g, p = sizes.size, beta.size
    k = p - 1
    n = sizes.astype(np.float64)
    A = np.zeros((g, k, k))
    for i in range(k):          # Bartlett: W = A A', A lower triangular
        A[:, i, i] = np.sqrt(rng.chisquare(n - 1.0 - i))
        A[:, i, :i] = rng.standard_normal((g, i))
    W = A @ A.transpose(0, 2, 1)
    s = rng.standard_normal((g, k)) * np.sqrt(n)[:, None]
    G = np.empty((g, p, p))
    G[:, 0, 0] = n
    G[:, 0, 1:] = G[:, 1:, 0] = s
    G[:, 1:, 1:] = W + s[:, :, None] * s[:, None, :] / n[:, None, None]
    L = np.linalg.cholesky(G)
    u = rng.standard_normal((g, p, 1))
    return beta + np.linalg.solve(L.transpose(0, 2, 1), u)[:, :, 0]


def group_models(n: int, m: int, beta: np.ndarray, rng) -> np.ndarray:
    """The (m, p) OLS models of n Gaussian rows under iid uniform labels."""
    sizes = rng.multinomial(n, np.full(m, 1.0 / m)) if m < 4096 else rng.poisson(n / m, m)
    models = np.empty((m, beta.size))
    small = sizes < beta.size + 1
    models[small] = _small_groups(sizes[small], beta, rng)
    big = np.flatnonzero(~small)
    for lo in range(0, big.size, _BLOCK):
        idx = big[lo:lo + _BLOCK]
        models[idx] = _wishart_groups(sizes[idx], beta, rng)
    return models


class SimEngine:
    """Supplies simulated group models to the Tukey estimator (its ``engine=`` hook)."""

    def __init__(self, n: int, beta: np.ndarray, rng):
        self.n, self.beta, self.rng = n, beta, rng

    def fit_models(self, X, y, m, rng):
        return group_models(self.n, int(m), self.beta, self.rng)

    def cells(self, j):        # not used: centre=None
        raise NotImplementedError


def one_fit(n: int, p: int, eps: float, m: int, seed: int) -> float:
    rng = np.random.default_rng([seed, n % 1_000_003, p, int(eps * 1000), m])
    beta = np.linspace(1.0, -1.0, p)
    est = estimate(np.empty((0, p)), np.empty(0), eps=eps, delta=DELTA, rng=rng, m=m,
                   intercept_col=0, centre=None, engine=SimEngine(n, beta, rng))
    if not est.released:
        return np.inf
    return float(np.sum((est.params - beta) ** 2) / (p / n))


def rows_fit(n: int, p: int, eps: float, m: int, seed: int) -> float:
    """The same fit from real rows (the package's group OLS): the check of the draw."""
    rng = np.random.default_rng([seed, 7, n % 1_000_003, p, m])
    beta = np.linspace(1.0, -1.0, p)
    X = np.column_stack([np.ones(n), rng.standard_normal((n, p - 1))])
    y = X @ beta + rng.standard_normal(n)
    est = estimate(X, y, eps=eps, delta=DELTA, rng=rng, m=m, intercept_col=0, centre=None,
                   identify="off")
    return float(np.sum((est.params - beta) ** 2) / (p / n)) if est.released else np.inf


def check(reps: int) -> None:
    """Medians of the simulated and the real-row fits side by side (n = 1e5)."""
    print("check: n=1e5 p=6 eps=1, median err/OLS: simulated vs rows", flush=True)
    for m in (5555, 2400, 600):
        sim = np.median([one_fit(100_000, 6, 1.0, m, r) for r in range(reps)])
        real = np.median([rows_fit(100_000, 6, 1.0, m, r) for r in range(reps)])
        print(f"  m={m:6d}: {sim:.3f} vs {real:.3f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--p", default="3,6,11")
    ap.add_argument("--eps", default="0.5,1")
    ap.add_argument("--n", default="1e6,1e7,1e8")
    ap.add_argument("--mult", default="4,16,64,256")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--check", action="store_true", help="compare with real-row fits")
    a = ap.parse_args()
    if a.check:
        check(max(a.reps, 40))
        return
    rows = []
    print("      n   p  eps   rule           m   median err/OLS   withheld   seconds", flush=True)
    for p in [int(v) for v in a.p.split(",")]:
        for eps in [float(v) for v in a.eps.split(",")]:
            need = models_needed(p, eps, DELTA)
            for n in [int(float(v)) for v in a.n.split(",")]:
                today = int(min(n / (ROWS_PER_COLUMN * p), MAX_MODELS))
                rules = [("today", today)] + [(f"{c}x", c * need)
                                              for c in map(int, a.mult.split(","))
                                              if c * need < today]
                for rule, m in rules:
                    t = time.perf_counter()
                    errs = [one_fit(n, p, eps, m, r) for r in range(a.reps)]
                    sec = time.perf_counter() - t
                    rows += [{"n": n, "p": p, "eps": eps, "needed": need, "rule": rule, "m": m,
                              "rep": r, "err_ratio": e} for r, e in enumerate(errs)]
                    print(f"{n:>7.0e} {p:3d} {eps:4.2f} {rule:>6s} {m:>11,d} "
                          f"{np.median(errs):12.3f} {np.mean(np.isinf(errs)):10.2f} "
                          f"{sec:9.1f}", flush=True)
                pd.DataFrame(rows).to_csv(a.out, index=False)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
