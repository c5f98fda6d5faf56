"""Data-independent simulation behind ``method="auto"`` and the automatic number of terms.

Simulates regression problems over a coarse grid of row counts n (1e3..1e6), numbers of
covariates p (1..40), eps (0.1..10), covariate types and noise levels, fits each with
``dp_lm(..., select=None)`` by ``tukey``, ``bas`` and ``adassp`` at delta = 1e-5, and records
the test R^2 on fresh rows from the same model (a withheld fit counts as -inf), whether the
Tukey PTR test passed, and the non-private OLS R^2 on the same data (the oracle). No real data
is read: this is where :mod:`dpstats.pipeline.auto` gets its constants (``--derive`` prints the
tables the rule was read from).

Covariate types (``p`` columns besides the intercept):

* ``gauss``: N(mu_j, s_j^2), means in (-3, 3), scales 10^U(-1, 1) (centring and scale matter);
* ``skewed``: log-normal(0, 1) columns (heavy right tail), scaled like ``gauss``;
* ``factor``: half of the columns are the 0/1 dummies of one factor whose levels have
  probabilities proportional to 1/(i + 1)^1.5 (the rarest ~1-3% of rows), the rest Gaussian;
* ``corr`` (``--corr``, a follow-up grid where Tukey is feasible, written to
  auto_rule_corr.csv): Gaussian columns with pairwise correlation 0.8 (collinear covariates).

Coefficients are N(0, 1) / sd(column); the noise is set so that the population R^2 is 0.2 or
0.8 (alternating through the grid with the covariate type), intercept 3. Every (n, p, eps)
cell is simulated ``--reps`` times with different types and noise levels.

Writes benchmarks/results/auto_rule.csv (one row per fit; appended as it goes, so a partial run
can be read).

    nice -n 10 python benchmarks/auto_rule.py [--reps 2] [--quick] [--derive]
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import dpstats as dp  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "auto_rule.csv"
NS = [1_000, 3_000, 10_000, 30_000, 100_000, 1_000_000]
PS = [1, 3, 10, 20, 40]
EPSS = [0.1, 0.3, 1.1, 3.0, 10.0]
TYPES = ["gauss", "skewed", "factor"]
R2S = [0.2, 0.8]
METHODS = ["tukey", "bas", "adassp"]
DELTA = 1e-5
N_TEST = 5_000


def covariates(kind: str, n: int, p: int, rng: np.random.Generator) -> np.ndarray:
    """``n x p`` covariates of one type (see the module docstring)."""
    mu, scale = rng.uniform(-3, 3, p), 10.0 ** rng.uniform(-1, 1, p)
    if kind == "skewed":
        return np.exp(rng.standard_normal((n, p))) * scale
    if kind == "corr":
        common = rng.standard_normal((n, 1))
        return (np.sqrt(0.8) * common + np.sqrt(0.2) * rng.standard_normal((n, p))) * scale + mu
    X = rng.standard_normal((n, p)) * scale + mu
    if kind == "factor" and p >= 1:
        n_dummy = max(1, p // 2)
        probs = 1.0 / (np.arange(n_dummy + 1) + 1.0) ** 1.5
        level = rng.choice(n_dummy + 1, size=n, p=probs / probs.sum())
        X[:, :n_dummy] = (level[:, None] == np.arange(1, n_dummy + 1)[None, :])
    return X


def problem(kind: str, r2: float, n: int, p: int, seed: int):
    """Training and test frames of one simulated problem."""
    rng = np.random.default_rng(seed)
    X = covariates(kind, n + N_TEST, p, rng)
    sd = X.std(axis=0)
    beta = rng.standard_normal(p) / np.where(sd > 0, sd, 1.0)
    signal = X @ beta
    sigma = math.sqrt(signal.var() * (1 - r2) / r2) if signal.var() > 0 else 1.0
    y = 3.0 + signal + sigma * rng.standard_normal(n + N_TEST)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    frame["y"] = y
    return frame.iloc[:n], frame.iloc[n:]


def ols_r2(train: pd.DataFrame, test: pd.DataFrame) -> float:
    def design(df):
        return np.column_stack([np.ones(len(df)), df.drop(columns="y").to_numpy()])
    beta = np.linalg.lstsq(design(train), train["y"].to_numpy(), rcond=None)[0]
    resid = test["y"].to_numpy() - design(test) @ beta
    yt = test["y"].to_numpy()
    return 1.0 - resid @ resid / ((yt - yt.mean()) @ (yt - yt.mean()))


def cells(reps: int, quick: bool):
    """The grid, in an order that reaches every region early (small n first)."""
    ns = NS[:4] if quick else NS
    for rep, n, p, eps in itertools.product(range(reps), ns, PS, EPSS):
        if n >= 1_000_000 and (p > 20 or eps not in (0.3, 3.0)):
            continue        # the largest problems: a sparser slice keeps the run short
        i = NS.index(n) + PS.index(p) + EPSS.index(eps) + 3 * rep
        yield rep, n, p, eps, TYPES[i % 3], R2S[(i // 3 + rep) % 2]


def corr_cells():
    """The follow-up grid: collinear Gaussian covariates where Tukey's PTR is feasible."""
    for i, (n, p, eps) in enumerate(itertools.product([10_000, 30_000, 100_000, 300_000],
                                                      [3, 10, 20], [0.3, 1.1, 3.0])):
        yield 0, n, p, eps, "corr", R2S[i % 2]


def simulate(reps: int, quick: bool, corr: bool = False) -> None:
    done = set()
    if OUT.exists():
        old = pd.read_csv(OUT)
        done = set(zip(old.rep, old.n, old.p, old.eps, strict=True))
    todo = [c for c in (corr_cells() if corr else cells(reps, quick)) if c[:4] not in done]
    print(f"{len(todo)} problems x {len(METHODS)} methods ({len(done)} done before)", flush=True)
    head = not OUT.exists()
    t0 = time.perf_counter()
    for i, (rep, n, p, eps, kind, r2) in enumerate(todo, 1):
        seed = 1_000_003 * rep + 7919 * n + 131 * p + int(100 * eps)
        train, test = problem(kind, r2, n, p, seed)
        base = {"rep": rep, "n": n, "p": p, "eps": eps, "type": kind, "r2_true": r2,
                "ols_r2": ols_r2(train, test)}
        rows = []
        for method in METHODS:
            t1 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = dp.dp_lm("y ~ .", train, eps=eps, delta=DELTA, select=None,
                               method=method, random_state=seed + 17)
            score = fit.score(test) if fit.released else -math.inf
            rows.append({**base, "method": method, "r2": score,
                         "released": bool(fit.released),
                         "ptr_passed": None if fit.ptr is None else bool(fit.ptr.passed),
                         "n_hat": fit.n_noisy, "m": fit.m,
                         "seconds": time.perf_counter() - t1})
        pd.DataFrame(rows).to_csv(OUT, mode="a", header=head, index=False)
        head = False
        got = " ".join(f"{r['method']}={r['r2']:.3f}" for r in rows)
        print(f"[{i}/{len(todo)} {time.perf_counter() - t0:6.0f}s] n={n:>7} p={p:>2} "
              f"eps={eps:<4} {kind:<6} R2={r2}: ols={base['ols_r2']:.3f} {got}", flush=True)


def derive() -> None:
    """Print the tables the rule of :mod:`dpstats.pipeline.auto` was read from."""
    from scipy.optimize import minimize

    from dpstats.pipeline.feasibility import count_needed

    res = pd.read_csv(OUT)
    res["loss"] = (res.ols_r2 - res.r2).clip(upper=1.0)     # withheld (-inf) -> loss 1
    eps_reg = res.eps * 0.95                                  # 5% for the row count
    n_hat = res.n_hat.fillna(res.n)
    res["ratio_t"] = n_hat / [count_needed(p + 1, e, DELTA, "tukey")
                              for p, e in zip(res.p, eps_reg, strict=True)]
    res["ratio_b"] = res.n / [count_needed(p + 1, e, DELTA, "bas")
                              for p, e in zip(res.p, eps_reg, strict=True)]
    bins = [0, 0.5, 0.75, 1, 2, 4, 16, 64, 1e12]
    tk = res[res.method == "tukey"].copy()
    print("Tukey PTR pass rate by n_hat / tukey_count (TUKEY_MARGIN):")
    print(tk.groupby(pd.cut(tk.ratio_t, bins), observed=True).ptr_passed.agg(["mean", "size"]))
    x = np.log(tk.ratio_t.clip(lower=1e-9)).to_numpy()
    y = tk.ptr_passed.fillna(False).astype(float).to_numpy()

    def nll(v):
        q = np.clip(1.0 / (1.0 + np.exp(-v[1] * (x - v[0]))), 1e-9, 1 - 1e-9)
        return -(y * np.log(q) + (1 - y) * np.log(1 - q)).sum()

    fit = minimize(nll, [0.0, 5.0], method="Nelder-Mead").x
    print(f"logistic pass probability: centre exp({fit[0]:.3f}) = {math.exp(fit[0]):.3f}, "
          f"slope {fit[1]:.2f} (PASS_CENTRE, PASS_SLOPE)")
    bd = res[res.method.isin(["bas", "adassp"])]
    print("\nBounded methods released, by n / bounded_count (BOUNDED_SPREAD):")
    print(bd.groupby([pd.cut(bd.ratio_b, bins), "method"], observed=True).released.mean()
          .unstack().round(2))
    wide = res.pivot_table(index=["rep", "n", "p", "eps", "type", "r2_true"],
                           columns="method", values="loss").reset_index()
    wide = wide.merge(tk[["rep", "n", "p", "eps", "ratio_t"]], on=["rep", "n", "p", "eps"])
    wide["bin"] = pd.cut(wide.ratio_t, bins)
    wide["tukey-bas"], wide["adassp-bas"] = wide.tukey - wide.bas, wide.adassp - wide.bas
    print("\nLoss of test R^2 against OLS (withheld = 1), by n_hat / tukey_count:")
    print(wide.groupby("bin", observed=True)[["tukey-bas", "adassp-bas"]]
          .agg(["mean", "median", "size"]).round(4))
    print(wide.groupby(["bin", "type"], observed=True)["tukey-bas"].mean().unstack().round(4))
    wide.to_csv(OUT.with_name(OUT.stem + "_wide.csv"), index=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="n up to 3e4 only")
    ap.add_argument("--derive", action="store_true", help="print the rule tables and stop")
    ap.add_argument("--corr", action="store_true",
                    help="the collinear follow-up grid (auto_rule_corr.csv)")
    args = ap.parse_args()
    global OUT
    if args.corr:
        OUT = OUT.with_name("auto_rule_corr.csv")
    if args.derive:
        derive()
    else:
        simulate(args.reps, args.quick, args.corr)


if __name__ == "__main__":
    main()
