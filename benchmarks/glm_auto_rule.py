"""Data-independent simulation behind dp_glm's ``method="auto"`` (dpstats.estimators.glm_auto)
and its defaults: which method, from how many rows, and the budget shares.

Synthetic logistic data only (never the shared files): ``p`` features, half N(0, 1), a quarter
log-normal (skewed, heavy right tail), a quarter 0/1 indicators with rates 0.1-0.5; a random
coefficient direction scaled to a signal strength ``|beta| sd(x beta)`` in {0.8 ("weak", Bayes
accuracy about 0.65-0.7), 2.5 ("strong", about 0.85-0.9)}; the intercept sets the prevalence at
0.5 or 0.2. Every fit is ``dp_glm`` with ``select=None`` (the method alone) at ``delta = 1e-5``;
accuracy is measured on 5,000 fresh rows of the same distribution, beside non-private logistic
regression (statsmodels) and the majority class.

Parts (``--part``):

* ``methods``: outpert, fw, dpgd and tukey at eps 1, p in {4, 16}, n from 300 to 30,000;
* ``rows``: outpert on a grid of n from 50 to 1,600, p in {2, 4, 8, 16} and eps in
  {0.5, 1, 2}: the smallest n from which it beats the majority class on the easiest problem
  (strong signal, balanced classes) gives ``rows_needed``, printed as ``C = n_hat mu``
  (:func:`rows_rule`);
* ``rows_sep``: the same rule on the easiest problem of all, a nearly separable one (signal 8,
  balanced classes), n from 50 to 800: the rule ``dp_glm`` uses (below it no private fit
  beats the majority class even when the classes hardly overlap);
* ``kappa``: outpert's noise norm 1/kappa and threshold share, at n in {1,000, 10,000};
* ``obj``: objective against output perturbation (and objpert's bounds share), n from 1,000
  to 30,000, p in {4, 16}, eps 1;
* ``split``: the selection share of dp_glm's budget (``select="auto"``, k = 5 of 12 features,
  4 of them informative) against no selection, at n in {2,000, 10,000}.

    nice -n 10 python benchmarks/glm_auto_rule.py --part methods [--reps 3]

Writes benchmarks/results/glm_auto_rule_<part>.csv and prints tables with progress.
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm

from dpstats.api.glm import dp_glm
from dpstats.mechanisms.gdp import gdp_mu

OUT = Path(__file__).resolve().parent / "results"
SIGNALS = {"weak": 0.8, "strong": 2.5, "separable": 8.0}
PREVALENCE = (0.5, 0.2)


def features(n: int, p: int, rng: np.random.Generator) -> np.ndarray:
    """The synthetic design (no intercept): normal, log-normal and indicator columns."""
    n_norm = max(p // 2, 1)
    n_log = (p - n_norm + 1) // 2
    n_bin = p - n_norm - n_log
    cols = [rng.normal(size=(n, n_norm)), rng.lognormal(0.0, 0.75, size=(n, n_log)),
            (rng.uniform(size=(n, n_bin)) < np.linspace(0.1, 0.5, n_bin)).astype(float)]
    return np.hstack(cols)[:, :p]


def problem(p: int, signal: float, prevalence: float, seed: int,
            informative: int | None = None):
    """A fixed coefficient vector and intercept for (p, signal, prevalence); only the first
    ``informative`` features (every other one: normal, log-normal, indicator) when given."""
    rng = np.random.default_rng(seed)
    Z = features(50_000, p, rng)
    beta = rng.normal(size=p)
    if informative is not None:
        beta[rng.permutation(p)[informative:]] = 0.0
    beta *= signal / np.std(Z @ beta)
    eta = Z @ beta
    lo, hi = -20.0, 20.0                      # intercept giving the prevalence, by bisection
    for _ in range(60):
        b0 = (lo + hi) / 2
        if np.mean(1 / (1 + np.exp(-(b0 + eta)))) < prevalence:
            lo = b0
        else:
            hi = b0
    return b0, beta


def draw(n: int, b0: float, beta: np.ndarray, rng) -> pd.DataFrame:
    Z = features(n, beta.size, rng)
    y = rng.uniform(size=n) < 1 / (1 + np.exp(-(b0 + Z @ beta)))
    df = pd.DataFrame(Z, columns=[f"x{j}" for j in range(beta.size)])
    df["y"] = y
    return df


def baselines(train: pd.DataFrame, test: pd.DataFrame) -> tuple[float, float]:
    """Non-private logistic regression's test accuracy and the majority-class rate (of the
    training data's majority class, on the test rows)."""
    X = sm.add_constant(train.drop(columns="y").to_numpy(), has_constant="add")
    Xt = sm.add_constant(test.drop(columns="y").to_numpy(), has_constant="add")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            b = sm.Logit(train.y.to_numpy(float), X).fit(disp=0, maxiter=100).params
            acc = float(np.mean((Xt @ b >= 0) == test.y.to_numpy()))
        except Exception:                      # separable tiny samples
            acc = np.nan
    major = train.y.mean() >= 0.5
    return acc, float(np.mean(test.y.to_numpy() == major))


def fit_acc(method: str, train, test, eps: float, seed: int, **opts) -> float:
    opts = {"select": None, **opts}
    fit = dp_glm("y ~ .", train, eps=eps, delta=1e-5, method=method, random_state=seed,
                 **opts)
    return fit.score(test) if fit.released else np.nan


def run(part: str, reps: int) -> pd.DataFrame:
    usual = ("weak", "strong")
    if part == "methods":
        grid = list(itertools.product((300, 1000, 3000, 10_000, 30_000), (4, 16), (1.0,),
                                      usual, PREVALENCE))
        methods = ("outpert", "fw", "dpgd", "tukey")
    elif part == "rows":
        grid = list(itertools.product((50, 100, 200, 400, 800, 1600), (2, 4, 8, 16),
                                      (0.5, 1.0, 2.0), usual, PREVALENCE))
        methods = ("outpert",)
    elif part == "rows_sep":
        grid = list(itertools.product((50, 100, 200, 400, 800), (2, 4, 8, 16),
                                      (0.5, 1.0, 2.0), ("separable",), (0.5,)))
        methods = ("outpert",)
    elif part == "obj":
        grid = list(itertools.product((1000, 3000, 10_000, 30_000), (4, 16), (1.0,), usual,
                                      PREVALENCE))
        methods = ("outpert", "objpert", "objpert:0.25")
    elif part == "split":
        grid = list(itertools.product((2000, 10_000), (12,), (1.0,), usual, PREVALENCE))
        methods = tuple(f"split:{s}" for s in (0.05, 0.10, 0.15, 0.25)) + ("split:none",)
    else:
        grid = list(itertools.product((1000, 10_000), (4, 16), (1.0,), usual, PREVALENCE))
        methods = tuple(f"outpert:{k}:{t}" for k in (0.5, 1.0, 2.0, 4.0) for t in (0.1, 0.2))
    rows, t0 = [], time.perf_counter()
    for i, (n, p, eps, sig, prev) in enumerate(grid):
        b0, beta = problem(p, SIGNALS[sig], prev, seed=1000 * p + int(10 * prev),
                           informative=4 if part == "split" else None)
        for r in range(reps):
            rng = np.random.default_rng([n, p, r, int(100 * prev), int(10 * SIGNALS[sig])])
            train, test = draw(n, b0, beta, rng), draw(5000, b0, beta, rng)
            logit, major = baselines(train, test)
            base = dict(n=n, p=p, eps=eps, signal=sig, prevalence=prev, rep=r, logit=logit,
                        majority=major)
            for m in methods:
                name, opts = m, {}
                if m.startswith("outpert:"):
                    _, k, t = m.split(":")
                    name, opts = "outpert", {"kappa": float(k), "threshold_share": float(t)}
                elif m.startswith("objpert:"):
                    name, opts = "objpert", {"bounds_share": float(m.split(":")[1])}
                elif m.startswith("split:"):
                    share = m.split(":")[1]
                    name, opts = "auto", (
                        {"select": "auto", "split": {"n": 0.05, "selection": float(share),
                                                     "regression": 0.95 - float(share)}}
                        if share != "none" else {"select": None})
                seed = 7 + 1000 * r + i
                rows.append({**base, "method": m, "accuracy": fit_acc(name, train, test, eps,
                                                                      seed, **opts)})
        print(f"  [{i + 1}/{len(grid)}] n={n} p={p} eps={eps} {sig} prev={prev} "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    return pd.DataFrame(rows)


def rows_rule(res: pd.DataFrame) -> pd.DataFrame:
    """Per (p, eps): the smallest n on the grid from which outpert's median test accuracy beats
    the majority class by more than 0.005 on the easiest problem (strong signal, balanced
    classes): below it not even that signal gets through, so the fit is withheld. Expressed as
    ``C = n_hat mu``, with ``n_hat = n - ln(5000) / (0.05 eps)`` (the released lower-bound row
    count at dp_glm's 5% share) and ``mu`` the Gaussian-DP parameter of the regression stage,
    as :func:`dpstats.estimators.glm_auto.rows_needed` reads them; the rule's constant is the
    median of ``C``, the worst case and the catastrophic tail (min gap) are shown beside."""
    res = res.assign(gap=res.accuracy.fillna(0.0) - res.majority)
    out = []
    for (p, eps), g in res.groupby(["p", "eps"]):
        easiest = "separable" if (g.signal == "separable").any() else "strong"
        easy = g[(g.signal == easiest) & (g.prevalence == 0.5)]
        good = easy.groupby("n").gap.median() > 0.005
        bad_ns = [n for n, v in good.items() if not v]
        n_min = min([n for n in good.index if n > max(bad_ns, default=0)], default=np.nan)
        mu = gdp_mu(0.95 * eps, 1e-5)       # as glm_auto.rows_needed: the regression stage
        n_hat = n_min - np.log(5000.0) / (0.05 * eps)
        below = g[g.n < n_min]
        out.append({"p": p, "eps": eps, "n_min": n_min, "C": n_hat * mu,
                    "min gap below": below.gap.min() if len(below) else np.nan})
    out = pd.DataFrame(out)
    print(f"median C = {out.C.median():.1f}")
    return out


def main() -> None:
    warnings.simplefilter("ignore", UserWarning)         # grid-edge notes of failed bounds
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", choices=("methods", "rows", "rows_sep", "kappa", "split", "obj"),
                    default="methods")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    res = run(args.part, args.reps)
    OUT.mkdir(exist_ok=True)
    res.to_csv(OUT / f"glm_auto_rule_{args.part}.csv", index=False)
    pd.set_option("display.width", 200)
    keys = ["n", "p", "eps", "signal", "prevalence"]
    med = res.pivot_table(index=keys, columns="method", values="accuracy", aggfunc="median")
    base = res.groupby(keys)[["logit", "majority"]].median()
    print("\nMedian test accuracy (NaN: withheld)")
    print(med.join(base).round(3).to_string())
    if args.part.startswith("rows"):
        print("\nrows_needed rule:")
        print(rows_rule(res).to_string())
    else:
        gap = med.sub(base.majority, axis=0)
        print("\nMedian gap to the majority class, over the grid:")
        print(gap.median().round(4).to_string())
        print("\nMedian gap to non-private logistic regression, n >= 3000:")
        rich = med[med.index.get_level_values("n") >= 3000]
        print(rich.sub(base.loc[rich.index].logit, axis=0).median().round(4).to_string())


if __name__ == "__main__":
    main()
