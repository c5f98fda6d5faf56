"""Data-independent simulation with real-data-like designs: the Tukey/BAS boundary and the k rule.

The first simulation (``benchmarks/auto_rule.py``) drew Gaussian, log-normal or dummy
covariates with Gaussian errors and every coefficient of the same size. Real data differ in
ways that matter to the methods: skewed and heavy-tailed errors (the median of Tukey's
small-group fits is not their mean), heteroscedastic errors, heavy-tailed and collinear
columns (clipping and the noisy Gram), many weak terms beside a few strong ones (selection),
factors. This script draws problems with those features, **never reading real data**:

* covariates: each numeric column is Gaussian, log-normal, Student t3, 0/1 (rate 0.05-0.5)
  or a Poisson count, shifted and scaled at random; with probability 1/2 the columns share a
  latent factor (pairwise correlation about 0.5-0.8); with probability 1/3 one factor of 3-8
  levels with Zipf frequencies (its dummies count in p);
* coefficients: ``sparse`` (3 strong terms, the rest 10x weaker) or ``dense`` (all N(0, 1)),
  per standardised column;
* errors: Gaussian, t3, skewed (centred log-normal, sd 1) or heteroscedastic (Gaussian with
  sd growing exponentially in the first column), scaled to a population R^2 in
  {0.05, 0.2, 0.5, 0.9};
* n in {2e3, 5e3, 2e4, 1e5} (and a few 1e6), p (design columns besides the intercept) in
  {2, 5, 10, 20, 40}, eps in {0.3, ln 3, 3}, delta 1e-5.

Each problem is fitted with ``dp_lm("y ~ .", ...)`` by ``tukey``, ``bas`` and ``adassp`` on
every term (``select=None``), by ``bas`` with ``k`` in {1, 2, 5, 10} selected terms (fewer
than the candidates; ``select="auto"``) and ``tukey`` with k = 5; test R^2 on 5,000 fresh
rows of the same model (withheld = -inf) beside non-private OLS on every term.

Writes benchmarks/results/auto_rule_real.csv (one row per fit, appended as it goes).

    nice -n 10 python benchmarks/auto_rule_real.py [--reps 2] [--shard 0/2] [--derive]
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

OUT = ROOT / "benchmarks" / "results" / "auto_rule_real.csv"
NS = [2_000, 5_000, 20_000, 100_000]
PS = [2, 5, 10, 20, 40]
EPSS = [0.3, round(math.log(3), 4), 3.0]
R2S = [0.05, 0.2, 0.5, 0.9]
ERRORS = ["gauss", "t3", "skewed", "hetero"]
KS = [1, 2, 5, 10]
DELTA = 1e-5
N_TEST = 5_000


def _column(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "t3":
        return rng.standard_t(3, n)
    if kind == "binary":
        return (rng.random(n) < rng.uniform(0.05, 0.5)).astype(float)
    if kind == "count":
        return rng.poisson(rng.uniform(0.5, 10.0), n).astype(float)
    return rng.standard_normal(n)


def design(n: int, p: int, spec: dict, rng: np.random.Generator) -> pd.DataFrame:
    """The predictor frame: numeric columns and at most one factor (its dummies count in p)."""
    n_levels = spec["levels"] if spec["levels"] and p >= spec["levels"] else 0
    n_num = p - (n_levels - 1 if n_levels else 0)
    cols = {}
    latent = rng.standard_normal(n) if spec["corr"] else None
    for j in range(n_num):
        kind = spec["xkinds"][j % len(spec["xkinds"])]
        z = _column("gauss" if kind == "lognormal" else kind, n, rng)
        if latent is not None and kind in ("gauss", "t3", "lognormal"):
            z = (z - z.mean()) / (z.std() or 1.0)
            z = spec["corr"] * latent + math.sqrt(1 - spec["corr"] ** 2) * z
        if kind == "lognormal":
            z = np.exp(z * rng.uniform(0.5, 1.2))
        cols[f"x{j}"] = z * 10.0 ** rng.uniform(-1, 2) + rng.uniform(-5, 5)
    if n_levels:
        probs = 1.0 / (np.arange(n_levels) + 1.0) ** 1.2
        lev = rng.choice(n_levels, size=n, p=probs / probs.sum())
        names = [f"l{i}" for i in range(n_levels)]
        cols["g"] = pd.Categorical.from_codes(lev, categories=names)
    return pd.DataFrame(cols)


def response(X: pd.DataFrame, spec: dict, rng: np.random.Generator) -> np.ndarray:
    """Linear signal with sparse or dense coefficients plus errors at the population R^2."""
    D = pd.get_dummies(X, drop_first=True, dtype=float).to_numpy()
    Z = (D - D.mean(0)) / np.where(D.std(0) > 0, D.std(0), 1.0)
    p = Z.shape[1]
    beta = rng.standard_normal(p)
    if spec["coef"] == "sparse" and p > 3:
        beta[3:] *= 0.1
    signal = Z @ beta
    e = {"gauss": lambda: rng.standard_normal(len(Z)),
         "t3": lambda: rng.standard_t(3, len(Z)) / math.sqrt(3.0),
         "skewed": lambda: (np.exp(rng.standard_normal(len(Z))) - math.exp(0.5))
         / math.sqrt((math.e - 1) * math.e),
         "hetero": lambda: rng.standard_normal(len(Z)) * np.exp(0.5 * np.clip(Z[:, 0], -4, 4))
         / math.exp(0.125)}[spec["error"]]()
    sigma = math.sqrt(signal.var() * (1 - spec["r2"]) / spec["r2"]) / (e.std() or 1.0)
    return 3.0 + signal + sigma * e


def problem_spec(i: int, rng: np.random.Generator) -> dict:
    kinds = ["gauss", "lognormal", "t3", "binary", "count"]
    return {"xkinds": list(rng.permutation(kinds)),
            "corr": float(rng.choice([0.0, 0.0, 0.6, 0.85])),
            "levels": int(rng.choice([0, 0, 3, 8])),
            "coef": ["sparse", "dense"][i % 2],
            "error": ERRORS[(i // 2) % 4],
            "r2": R2S[(i // 8 + i) % 4]}


def cells(reps: int):
    for i, (rep, n, p, eps) in enumerate(itertools.product(range(reps), NS, PS, EPSS)):
        yield i, rep, n, p, eps
    for i, (rep, p) in enumerate(itertools.product(range(reps), (5, 20))):
        yield 10_000 + i, rep, 1_000_000, p, EPSS[1]   # a few of the largest problems


def configs(n_terms: int, n: int, methods_only: bool = False):
    """(label, method, select, k) of the fits of one problem."""
    out = [("tukey_all", "tukey", None, None), ("bas_all", "bas", None, None),
           ("adassp_all", "adassp", None, None)]
    if n >= 1_000_000 or methods_only:
        return out
    out += [(f"bas_k{k}", "bas", "auto", k) for k in KS if k < n_terms]
    if 5 < n_terms:
        out.append(("tukey_k5", "tukey", "auto", 5))
    return out


def ols_r2(train: pd.DataFrame, test: pd.DataFrame) -> float:
    def mat(df):
        D = pd.get_dummies(df.drop(columns="y"), drop_first=True, dtype=float).to_numpy()
        return np.column_stack([np.ones(len(df)), D])
    beta = np.linalg.lstsq(mat(train), train["y"].to_numpy(), rcond=None)[0]
    yt = test["y"].to_numpy()
    resid = yt - mat(test) @ beta
    return 1.0 - resid @ resid / ((yt - yt.mean()) @ (yt - yt.mean()))


def simulate(reps: int, shard: tuple[int, int], first_rep: int = 0, ns=None,
             methods_only: bool = False, tag: str = "") -> None:
    out = OUT.with_name(f"{OUT.stem}{tag}_s{shard[0]}.csv") if shard[1] > 1 else OUT
    done = set()
    if out.exists():
        old = pd.read_csv(out)
        done = set(zip(old.rep, old.n, old.p, old.eps.round(4), strict=True))
    todo = [c for c in cells(reps) if c[0] % shard[1] == shard[0] and c[1] >= first_rep
            and (ns is None or c[2] in ns) and (c[1], c[2], c[3], round(c[4], 4)) not in done]
    todo.sort(key=lambda c: c[2])            # small n first: every region early
    print(f"{len(todo)} problems ({len(done)} done before)", flush=True)
    head, t0 = not out.exists(), time.perf_counter()
    for j, (i, rep, n, p, eps) in enumerate(todo, 1):
        seed = 7_000_003 * rep + 7919 * n + 131 * p + int(1000 * eps)
        rng = np.random.default_rng(seed)
        spec = problem_spec(i, rng)
        X = design(n + N_TEST, p, spec, rng)
        X["y"] = response(X, spec, rng)
        train, test = X.iloc[:n].reset_index(drop=True), X.iloc[n:].reset_index(drop=True)
        n_terms = X.shape[1] - 1
        base = {"cell": i, "rep": rep, "n": n, "p": p, "terms": n_terms, "eps": eps,
                "xkinds": "|".join(spec["xkinds"][:max(1, n_terms)]), "corr": spec["corr"],
                "levels": spec["levels"] if "g" in X else 0, "coef": spec["coef"],
                "error": spec["error"], "r2_true": spec["r2"], "ols_r2": ols_r2(train, test)}
        rows = []
        for label, method, select, k in configs(n_terms, n, methods_only):
            t1 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    fit = dp.dp_lm("y ~ .", train, eps=eps, delta=DELTA, select=select, k=k,
                                   method=method, random_state=seed + 17)
                    score = fit.score(test) if fit.released else -math.inf
                    released, n_hat = bool(fit.released), fit.n_noisy
                    ptr = None if fit.ptr is None else bool(fit.ptr.passed)
                except Exception as exc:  # recorded, never hidden
                    print(f"   {label}: {type(exc).__name__}: {exc}", flush=True)
                    score, released, n_hat, ptr = float("nan"), False, None, None
            rows.append({**base, "config": label, "r2": score, "released": released,
                         "ptr_passed": ptr, "n_hat": n_hat,
                         "seconds": round(time.perf_counter() - t1, 3)})
        pd.DataFrame(rows).to_csv(out, mode="a", header=head, index=False)
        head = False
        got = " ".join(f"{r['config']}={r['r2']:.3f}" for r in rows)
        print(f"[{j}/{len(todo)} {time.perf_counter() - t0:5.0f}s] n={n} p={p} eps={eps} "
              f"{spec['error']} {spec['coef']} R2={spec['r2']}: ols={base['ols_r2']:.3f} "
              f"{got}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--shard", default="0/1", help="i/k: every k-th problem from the i-th")
    ap.add_argument("--derive", action="store_true", help="print the rule tables and stop")
    ap.add_argument("--first-rep", type=int, default=0, help="skip the reps before this one")
    ap.add_argument("--ns", help="comma-separated row counts only (default: the grid)")
    ap.add_argument("--methods-only", action="store_true",
                    help="Tukey, BAS and AdaSSP on every term only (no selection fits)")
    ap.add_argument("--tag", default="", help="suffix of the output file")
    args = ap.parse_args()
    if args.derive:
        from auto_rule_derive import derive
        derive(OUT)
        return
    i, k = (int(v) for v in args.shard.split("/"))
    ns = None if not args.ns else [int(float(v)) for v in args.ns.split(",")]
    simulate(args.reps, (i, k), args.first_rep, ns, args.methods_only, args.tag)


if __name__ == "__main__":
    main()
