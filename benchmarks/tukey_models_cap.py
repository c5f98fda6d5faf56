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
excess ``p / n`` (about 1 for OLS on all rows); a withheld release counts as infinite. For
each (p, eps_tukey, n) it fits today's rule (``m = n / (3 p)``, at most 2^20) and
``choose_m``'s rule with ``CAP_MULTIPLE = C`` for C in a grid (where that caps m), and reports
the mean and median ratio and the mean relative to today's.

    nice -n 10 python benchmarks/tukey_models_cap.py [--reps 40] [--reps-today 20]
        [--settings 3:1,6:1,6:0.5,11:1] [--n 1e6,1e7,1e8,1e9] [--caps 16,64,256] [--check]

Writes benchmarks/results/tukey_models_cap.csv (one row per fit) and
tukey_models_cap_summary.csv, and prints the table.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dpstats.estimators.tukey.choose_m import MAX_MODELS, ROWS_PER_COLUMN, SAFETY, models_needed
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


def rule_m(n: int, p: int, eps: float, cap: int | None) -> int:
    """``choose_m`` with ``CAP_MULTIPLE = cap`` (None: today's rule, no cap but MAX_MODELS)."""
    need = math.ceil(SAFETY * models_needed(p, eps, DELTA))
    m = max(n / (ROWS_PER_COLUMN * p), min(need, n / p))
    return int(min(m, MAX_MODELS if cap is None else cap * need, MAX_MODELS))


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Mean and median err/OLS per setting and rule, and the mean relative to today's."""
    g = df.groupby(["p", "eps", "n", "rule", "m"], sort=False).err_ratio
    out = g.agg(["mean", "median", "sem", "count"]).reset_index()
    today = out[out.rule == "today"].set_index(["p", "eps", "n"])["mean"]
    out["vs_today"] = out["mean"] / today.reindex(list(zip(out.p, out.eps, out.n,
                                                           strict=True))).to_numpy()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--reps-today", type=int, default=20, help="reps of today's rule")
    ap.add_argument("--settings", default="3:1,6:1,6:0.5,11:1", help="p:eps pairs")
    ap.add_argument("--n", default="1e6,1e7,1e8,1e9")
    ap.add_argument("--caps", default="16,64,256", help="CAP_MULTIPLE values")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--check", action="store_true", help="compare with real-row fits")
    a = ap.parse_args()
    if a.check:
        check(max(a.reps, 40))
        return
    rows = []
    print("      n   p  eps    rule         m   mean err/OLS (se)   median  withheld  seconds",
          flush=True)
    for setting in a.settings.split(","):
        p, eps = int(setting.split(":")[0]), float(setting.split(":")[1])
        for n in [int(float(v)) for v in a.n.split(",")]:
            today = rule_m(n, p, eps, None)
            rules = [("today", today, a.reps_today)] + [
                (f"cap{c}", rule_m(n, p, eps, int(c)), a.reps) for c in a.caps.split(",")
                if rule_m(n, p, eps, int(c)) < today]
            for rule, m, reps in rules:
                t = time.perf_counter()
                errs = np.array([one_fit(n, p, eps, m, r) for r in range(reps)])
                sec = time.perf_counter() - t
                rows += [{"n": n, "p": p, "eps": eps, "rule": rule, "m": m, "rep": r,
                          "err_ratio": e} for r, e in enumerate(errs)]
                fin = errs[np.isfinite(errs)]
                print(f"{n:>7.0e} {p:3d} {eps:4.2f} {rule:>7s} {m:>9,d} {fin.mean():10.3f} "
                      f"({fin.std() / np.sqrt(max(fin.size, 1)):.3f}) {np.median(errs):9.3f} "
                      f"{np.mean(~np.isfinite(errs)):8.2f} {sec:8.1f}", flush=True)
            pd.DataFrame(rows).to_csv(a.out, index=False)
    table = summary(pd.DataFrame(rows))
    table.to_csv(Path(a.out).with_name(Path(a.out).stem + "_summary.csv"), index=False)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
