"""Data-independent simulation of Tukey's bias under misspecification (issue 15, design note 39).

``benchmarks/auto_rule_real.py`` drew *linear* conditional means only, so it could not show a
bias of subsample-and-aggregate when the linear model is wrong: each of Tukey's small groups
fits OLS on ``n / m`` rows, which under a nonlinear mean (or heteroscedastic errors with skewed
covariates) estimates a leverage-weighted small-sample version of the population projection,
and the (Tukey) median of skewed group estimates is not their mean. This script draws
misspecified problems, **never reading real data**, and measures Tukey against BAS and OLS.

The family and its shares were fixed before any result was seen:

* covariates: ``x0`` log-normal (log-sd 0.8-1.2, right-skewed, like a size or a count of
  locations); the other ``p - 1`` columns cycle through Gaussian, 0/1 (rate 0.05-0.5), Poisson
  count, Student t3 and log-normal, shifted and scaled at random;
* conditional mean (one sixth of the problems each): ``quad`` (linear part plus a quadratic in
  ``x0``), ``threshold`` (plus a step at ``x0``'s 80th percentile), ``log`` (the mean is linear in
  ``log x0``, the model sees ``x0``), ``interact`` (plus ``x0 * x1``), ``censored`` (a linear mean,
  the response clipped above at its 85th percentile, like a score bounded at 100), ``rare``
  (a linear mean with a 0/1 column at rate 0.01-0.03 and an effect 3 signal sds, errors
  heteroscedastic in ``x0``). In the first four the nonlinear part carries half of the
  signal's variance;
* errors Gaussian or skewed (centred log-normal, alternately), at a population R^2 (of the
  true mean) in {0.05, 0.2, 0.5};
* n in {5e3, 2e4, 1e5, 4e5}, p (design columns besides the intercept) in {2, 5, 10, 20},
  eps in {ln 3, 3}, delta 1e-5.

A *control* run (``--control``, written to ``auto_rule_misspec_control*.csv``, not part of the
misspecified family's shares) draws the same grid with a **linear** mean (family ``linear``;
errors Gaussian or t3 alternately), to check that larger groups do not cost Tukey accuracy
where the model is right. A second pass (``--extra``) adds ``tukey_r100`` (groups of up to 100
rows per column: ``m`` at the PTR need until ``n / tukey_count`` reaches 100) to every problem.

Fits (``dp_lm("y ~ .", select=None)``): ``tukey`` (default ``m``: about 3 rows per model per
column), ``tukey_r10`` and ``tukey_r30`` (``m = max(PTR need, n / (R p))``: larger groups
where the rows allow, option (a) of the brief), ``bas``; test R^2 on 5,000 fresh rows beside
non-private OLS on every term (loss = OLS - method; a withheld fit loses 1). Tables by
``n / tukey_count`` and by rows per model per column ``n / (m p)``: ``--derive``.

    nice -n 10 python benchmarks/auto_rule_misspec.py [--shard 0/2] [--derive]

Writes benchmarks/results/auto_rule_misspec[_s<i>].csv (one row per fit, appended as it goes).
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
from dpstats.estimators.tukey.choose_m import SAFETY, models_needed  # noqa: E402
from dpstats.pipeline.feasibility import tukey_count  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "auto_rule_misspec.csv"
NS = [5_000, 20_000, 100_000, 400_000]
PS = [2, 5, 10, 20]
EPSS = [round(math.log(3), 4), 3.0]
FAMILIES = ["quad", "threshold", "log", "interact", "censored", "rare"]
R2S = [0.05, 0.2, 0.5]
RPCS = [10, 30]
DELTA = 1e-5
N_TEST = 5_000
EPS_REG = 0.95  # share of eps for the regression without selection (DEFAULT_SPLIT)


def _col(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "binary":
        return (rng.random(n) < rng.uniform(0.05, 0.5)).astype(float)
    if kind == "count":
        return rng.poisson(rng.uniform(0.5, 10.0), n).astype(float)
    if kind == "t3":
        return rng.standard_t(3, n)
    if kind == "lognormal":
        return np.exp(rng.standard_normal(n) * rng.uniform(0.5, 1.2))
    return rng.standard_normal(n)


def draw(n: int, p: int, family: str, error: str, r2: float,
         rng: np.random.Generator) -> pd.DataFrame:
    """One misspecified problem: p predictor columns and the response ``y``."""
    kinds = ["gauss", "binary", "count", "t3", "lognormal"]
    x0 = np.exp(rng.standard_normal(n) * rng.uniform(0.8, 1.2))
    cols = {"x0": x0}
    for j in range(1, p):
        cols[f"x{j}"] = _col(kinds[(j - 1) % len(kinds)], n, rng)
    if family == "rare" and p >= 2:
        cols["x1"] = (rng.random(n) < rng.uniform(0.01, 0.03)).astype(float)
    Z = np.column_stack([(v - v.mean()) / (v.std() or 1.0) for v in cols.values()])
    lin = Z @ rng.standard_normal(p)
    lin = lin / (lin.std() or 1.0)
    z0 = Z[:, 0]
    extra = {"quad": lambda: z0 ** 2,
             "threshold": lambda: (x0 > np.quantile(x0, 0.8)).astype(float),
             "log": lambda: np.log(x0),
             "interact": lambda: z0 * (Z[:, 1] if p >= 2 else z0)}.get(family)
    if family == "log":
        signal = -0.3 * lin + extra()          # mostly log-linear in x0
    elif extra is not None:
        e = extra() - extra().mean()
        signal = lin + e / (e.std() or 1.0)     # half the signal's variance nonlinear
    elif family == "rare" and p >= 2:
        signal = lin + 3.0 * cols["x1"] * rng.choice([-1.0, 1.0])
    else:
        signal = lin
    sd = signal.std() or 1.0
    if error == "skewed":
        e = (np.exp(rng.standard_normal(n)) - math.exp(0.5)) / math.sqrt((math.e - 1) * math.e)
    else:
        e = rng.standard_normal(n)
    if error == "t3":
        e = rng.standard_t(3, n)
    if family == "rare":
        e = e * np.exp(0.5 * np.clip(z0, -4, 4)) / math.exp(0.125)
    y = 50.0 + 10.0 * (signal + sd * math.sqrt((1 - r2) / r2) * e / (e.std() or 1.0))
    if family == "censored":
        y = np.minimum(y, np.quantile(y, 0.85))
    cols = {k: v * 10.0 ** rng.uniform(-1, 1) for k, v in cols.items()}
    return pd.DataFrame({**cols, "y": y})


def problems(control: bool = False):
    fams = ["linear"] if control else FAMILIES
    errors = ["gauss", "t3"] if control else ["gauss", "skewed"]
    for i, (n, p, eps, fam) in enumerate(itertools.product(NS, PS, EPSS, fams)):
        yield i, n, p, eps, fam, errors[i % 2], R2S[(i // 2) % 3]


def ols_r2(train: pd.DataFrame, test: pd.DataFrame) -> float:
    def mat(df):
        return np.column_stack([np.ones(len(df)), df.drop(columns="y").to_numpy()])
    beta = np.linalg.lstsq(mat(train), train["y"].to_numpy(), rcond=None)[0]
    yt = test["y"].to_numpy()
    r = yt - mat(test) @ beta
    return 1.0 - r @ r / ((yt - yt.mean()) @ (yt - yt.mean()))


def simulate(shard: tuple[int, int], control: bool = False, extra: bool = False) -> None:
    stem = OUT.stem + ("_control" if control else "") + ("_extra" if extra else "")
    out = OUT.with_name(f"{stem}_s{shard[0]}.csv" if shard[1] > 1 else f"{stem}.csv")
    done = set(pd.read_csv(out).cell) if out.exists() else set()
    todo = [c for c in problems(control) if c[0] % shard[1] == shard[0] and c[0] not in done]
    todo.sort(key=lambda c: c[1])
    print(f"{len(todo)} problems ({len(done)} done before)", flush=True)
    head, t0 = not out.exists(), time.perf_counter()
    for j, (i, n, p, eps, fam, error, r2) in enumerate(todo, 1):
        seed = 9_100_003 + 7919 * n + 131 * p + int(1000 * eps) + 17 * i
        rng = np.random.default_rng(seed)
        X = draw(n + N_TEST, p, fam, error, r2, rng)
        train, test = X.iloc[:n].reset_index(drop=True), X.iloc[n:].reset_index(drop=True)
        cols = p + 1
        tc = tukey_count(cols, EPS_REG * eps, DELTA)
        need = math.ceil(SAFETY * models_needed(cols, EPS_REG * eps, DELTA))
        base = {"cell": i, "n": n, "p": p, "eps": eps, "family": fam, "error": error,
                "r2_true": r2, "t_ratio": n / tc, "need": need, "ols_r2": ols_r2(train, test)}
        fits = [("tukey", "tukey", "auto"), ("bas", "bas", "auto")]
        fits += [(f"tukey_r{r}", "tukey", max(need, int(n / (r * cols)))) for r in RPCS]
        if extra:
            fits = [("tukey_r100", "tukey", max(need, int(n / (100 * cols))))]
        rows = []
        for label, method, m in fits:
            t1 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    fit = dp.dp_lm("y ~ .", train, eps=eps, delta=DELTA, select=None,
                                   method=method, m=m, random_state=seed + 17)
                    score = fit.score(test) if fit.released else -math.inf
                    m_used = getattr(fit, "m", None)
                except Exception as exc:  # recorded, never hidden
                    print(f"   {label}: {type(exc).__name__}: {exc}", flush=True)
                    score, m_used = float("nan"), None
            rows.append({**base, "config": label, "r2": score, "m": m_used,
                         "seconds": round(time.perf_counter() - t1, 3)})
        pd.DataFrame(rows).to_csv(out, mode="a", header=head, index=False)
        head = False
        got = " ".join(f"{r['config']}={r['r2']:.3f}" for r in rows)
        print(f"[{j}/{len(todo)} {time.perf_counter() - t0:5.0f}s] n={n} p={p} eps={eps} {fam} "
              f"{error} R2={r2} n/tc={n / tc:.1f}: ols={base['ols_r2']:.3f} {got}", flush=True)


def derive(control: bool = False) -> None:
    """Loss (OLS - method) tables by n / tukey_count and by rows per model per column."""
    stem = OUT.stem + ("_control" if control else "")
    files = [f for f in sorted(OUT.parent.glob(f"{stem}*.csv"))
             if control or "_control" not in f.name]
    res = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    res["loss"] = (res.ols_r2 - res.r2.replace(-math.inf, np.nan)).fillna(1.0).clip(upper=1.0)
    w = res.pivot_table(index=["cell", "n", "p", "eps", "family", "error", "r2_true", "t_ratio"],
                        columns="config", values="loss").reset_index()
    ms = res[res.config == "tukey"].set_index("cell").m
    w["rpm"] = w.n / (w.cell.map(ms) * (w.p + 1))
    w["tb"] = pd.cut(w.t_ratio, [0, 1, 2, 4, 8, 16, 32, 1e12])
    w["d"] = w.tukey - w.bas
    pd.set_option("display.width", 200)
    print(f"{len(w)} problems. Tukey - BAS loss by n / tukey_count (mean, median, count):")
    print(w.groupby("tb", observed=True).d.agg(["mean", "median", "max", "size"]).round(4))
    print("\nMean loss by n / tukey_count (OLS - method):")
    cfg = [c for c in ["tukey", "tukey_r10", "tukey_r30", "tukey_r100", "bas"] if c in w]
    print(w.groupby("tb", observed=True)[cfg].mean().round(4))
    print("\nTukey - BAS by family x n / tukey_count (mean):")
    print(w.pivot_table(index="tb", columns="family", values="d", observed=True).round(4))
    w["rb"] = pd.cut(w.rpm, [0, 2, 3.5, 10, 30, 1e12])
    print("\nTukey - BAS by rows per model per column n / (m p) (mean, count):")
    print(w.groupby("rb", observed=True).d.agg(["mean", "median", "size"]).round(4))
    big = [c for c in cfg if c.startswith("tukey_r")]
    for c in big:
        w[f"d_{c}"] = w[c] - w.bas
    print("\nTukey with larger groups - BAS by n / tukey_count (mean; max in the second table):")
    print(w.groupby("tb", observed=True)[[f"d_{c}" for c in big]].mean().round(4))
    print(w.groupby("tb", observed=True)[[f"d_{c}" for c in big]].max().round(4))
    best = w[cfg].min(axis=1)
    for tk in ["tukey"] + big:
        for thr in (4, 8, 12, 16, 24, 32):
            pick = np.where(w.t_ratio >= thr, w[tk], w.bas)
            print(f"rule {tk:>10} from {thr:>2} x tukey_count: mean loss {pick.mean():.4f}, "
                  f"within 0.03 of the best config {np.mean(pick <= best + 0.03):.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shard", default="0/1", help="i/k: every k-th problem from the i-th")
    ap.add_argument("--derive", action="store_true", help="print the tables and stop")
    ap.add_argument("--control", action="store_true", help="linear means (the control run)")
    ap.add_argument("--extra", action="store_true", help="only the tukey_r100 fits")
    args = ap.parse_args()
    if args.derive:
        derive(args.control)
        return
    i, k = (int(v) for v in args.shard.split("/"))
    simulate((i, k), args.control, args.extra)


if __name__ == "__main__":
    main()
