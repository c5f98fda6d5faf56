"""dp_glm(method="auto")'s switch from output to objective perturbation, derived on the
released coefficients' error (issue 16; :data:`dpstats.estimators.glm_auto.OBJPERT_CONSTANT`).

The switch was derived on classification accuracy (``glm_auto_rule.py --part obj``, design
note 28); a statistician reads the coefficients. This script re-derives it on coefficient
error, with accuracy as a guard. Everything below (grid, metric, rule, held-out set and the
test that confirms) was fixed and committed before any figure of this simulation was seen.

**Fits.** Every fit is the public ``dp_glm(formula, data, eps=eps, delta=1e-5, select=None,
random_state=seed)`` with ``method="auto"``, i.e. the whole pipeline (the released row count at
5% of eps, private bounds, the threshold, the inference share), with
``glm_auto.OBJPERT_CONSTANT`` set to 0 (always objective perturbation, "objpert") or to
1e12 (always output perturbation, "outpert"). Each rep draws one data set and fits it with
both methods at the same ``random_state``: a paired comparison, the same released row count
``n_hat`` (drawn first) for both.

**Derivation grid** (``--part derive``; data-independent synthetic logistic data, never the
shared files): n in {2,000, 3,000, 4,000, 5,000, 7,000, 10,000, 15,000, 20,000}, p in {1, 3,
5, 10} predictors, eps in {0.5, 1, 2, 4}, and 12 designs: covariates gaussian (N(0, 1)),
skewed (log-normal(0, 0.75), centred and scaled to sd 1) or binary (0/1, rate 0.3) x signal
sd(x . beta) in {0.8 "weak", 2.5 "strong"} x prevalence in {0.5, 0.2} (the intercept by
bisection on a 50,000-row population sample). Slope direction fixed: alternating signs,
decreasing size (as glm_coverage.py). 20 reps per cell: 1,536 cells, 61,440 fits.

**Metric.** Per fit: the RMSE of the released coefficients (intercept and slopes, as
``fit.params``, on the covariates' own scale: gaussian and skewed columns have population mean
0 and sd 1, binary ones are 0/1) against the true ones. Per cell and method: the median over
reps. A withheld fit counts as RMSE +inf. Accuracy (the guard): expected accuracy on a fixed
5,000-row test sample of the design's covariates, ``mean(pi if predict >= 0.5 else 1 - pi)``
with ``pi`` the true probability (no label noise); a withheld fit scores the majority class.

**Rule and decision.** Candidate rules: objective perturbation iff ``n_hat mu >= C (k/6)^b``
(``mu = gdp_mu(0.95 eps, delta)``, the regression stage's, as ``glm_auto.choose`` reads it;
``k = p + 1`` fitted columns), C in :data:`C_GRID`, b in :data:`B_GRID`, b = 0 being the
current form (current rule: C = 1500, b = 0). Applied per rep (its own ``n_hat``). Score of a
rule: the mean over cells of ``log(median RMSE of the chosen fits / the smaller of the two
methods' median RMSE)`` (0 is perfect). Guards, in every cell: (a) the chosen fits' median
expected accuracy at most :data:`ACC_GUARD` (0.005) below the better method's; (b) the
chosen fits' share of breakdowns (per-fit RMSE > 0.5, note 75's measure, or withheld) at most
:data:`BREAK_GUARD` (0.10) above the smaller of the two methods' shares. Among rules passing
both guards in every cell, the lowest score wins; ties (equal to 3 decimals) go to the C
closest to 1500 in ``|log(C / 1500)|``, then b = 0. If no rule passes, the fewest failing cells
decide, then the score. A p-dependent rule (b != 0) is adopted only if the best constant rule
fitted to each p's cells alone has C monotone in p over {1, 3, 5, 10} AND the best b != 0 rule
beats the best b = 0 rule's score by at least 0.01; otherwise b = 0.

**Held-out check** (``--part held``, other seeds, designs not in the grid, random coefficient
directions): n in {2,500, 3,500, 6,000, 8,500, 12,000}, p in {2, 4, 8}, eps in {0.75, 1.5, 3},
designs "t5" (t(5) covariates scaled to sd 1, signal 1.5, prevalence 0.35), "corr"
(equicorrelated gaussian, rho 0.5, signal 0.8, prevalence 0.5) and "mixbin" (half t(5), half
0/1 at rate 0.15, signal 2.5, prevalence 0.2); 20 reps (135 cells). Plus ``--part note75``:
glm_coverage.py's design at n = 5,000, p = 5, eps 1 (100 reps). The new rule is confirmed iff
its held-out score is lower than the old rule's, it fails the guards in no more held-out cells
than the old rule, and its median RMSE in the note 75 cell is not above the old rule's.
Otherwise nothing ships.

    nice -n 10 python benchmarks/glm_auto_switch.py --part derive --eps 0.5,1 \\
        --out benchmarks/results/glm_auto_switch_derive_a.csv
    nice -n 10 python benchmarks/glm_auto_switch.py --analyse FILES [--held FILES]

Per-rep rows (one row per data set: both methods' RMSE, accuracy and the released count).
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import dpstats as dp
from dpstats.estimators import glm_auto
from dpstats.mechanisms.gdp import gdp_mu

DELTA = 1e-5
#: The released row count's share of dp_glm's eps with select=None (pipeline GLM_DEFAULT_SPLIT).
N_SHARE = 0.05
KINDS = ("gaussian", "skewed", "binary")
SIGNALS = {"weak": 0.8, "strong": 2.5}
PREVALENCES = (0.5, 0.2)
GRID = {"n": (2000, 3000, 4000, 5000, 7000, 10_000, 15_000, 20_000), "p": (1, 3, 5, 10),
        "eps": (0.5, 1.0, 2.0, 4.0)}
HELD = {"n": (2500, 3500, 6000, 8500, 12_000), "p": (2, 4, 8), "eps": (0.75, 1.5, 3.0)}
#: Held-out designs: covariates, signal, prevalence (random coefficient directions).
HELD_DESIGNS = {"t5": (1.5, 0.35), "corr": (0.8, 0.5), "mixbin": (2.5, 0.2)}
C_GRID = (200, 250, 300, 350, 400, 450, 500, 600, 700, 800, 900, 1000, 1100, 1200, 1300, 1500,
          1700, 2000, 2300, 2600, 3000, 3500, 4000, 5000, 6000)
B_GRID = (-1.0, -0.5, 0.0, 0.5, 1.0)
OLD = (1500.0, 0.0)
ACC_GUARD = 0.005
BREAK = 0.5
BREAK_GUARD = 0.10
CELL = ["n", "p", "eps", "kind", "signal", "prev"]
SEEDS = {"derive": 17_000, "held": 27_000, "note75": 37_000}


def covariates(kind: str, n: int, p: int, rng: np.random.Generator) -> np.ndarray:
    """The design's covariates (no intercept): glm_coverage.py's gaussian, skewed and binary
    kinds (the same draws), and the held-out set's t5, corr and mixbin."""
    if kind in ("gaussian", "skewed", "binary"):
        import glm_coverage as gc
        return gc.covariates(kind, n, p, rng)
    if kind == "t5":
        return rng.standard_t(5, size=(n, p)) / np.sqrt(5 / 3)
    if kind == "corr":
        return np.sqrt(0.5) * rng.normal(size=(n, 1)) + np.sqrt(0.5) * rng.normal(size=(n, p))
    if kind == "mixbin":
        h = (p + 1) // 2
        return np.c_[rng.standard_t(5, size=(n, h)) / np.sqrt(5 / 3),
                     (rng.uniform(size=(n, p - h)) < 0.15).astype(float)]
    raise ValueError(kind)


def problem(kind: str, p: int, signal: float, prev: float, random_dir: bool, seed):
    """True ``(intercept, slopes)``, a 5,000-row test sample and its true probabilities."""
    rng = np.random.default_rng(seed)
    j = np.arange(p)
    beta = rng.normal(size=p) if random_dir else (-1.0) ** j * (1.0 - j / (2.0 * p))
    Z = covariates(kind, 50_000, p, rng)
    beta = beta * signal / np.std(Z @ beta)
    eta = Z @ beta
    lo, hi = -20.0, 20.0
    for _ in range(60):
        b0 = (lo + hi) / 2
        lo, hi = (b0, hi) if np.mean(1 / (1 + np.exp(-(b0 + eta)))) < prev else (lo, b0)
    test = covariates(kind, 5000, p, rng)
    return np.r_[b0, beta], test, 1 / (1 + np.exp(-(b0 + test @ beta)))


def _frame(X: np.ndarray, y=None) -> pd.DataFrame:
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    if y is not None:
        df["y"] = y
    return df


def fit_both(df: pd.DataFrame, eps: float, seed: int, truth, test, pi) -> dict:
    """Both methods through ``method="auto"`` with the switch forced; per-fit RMSE, expected
    accuracy and the released count."""
    formula = "y ~ " + " + ".join(c for c in df.columns if c != "y")
    out, keep = {}, glm_auto.OBJPERT_CONSTANT
    try:
        for name, const in (("obj", 0.0), ("out", 1e12)):
            glm_auto.OBJPERT_CONSTANT = const
            f = dp.dp_glm(formula, df, eps=eps, delta=DELTA, select=None, random_state=seed)
            if f.released:
                rmse = float(np.sqrt(np.mean((f.params.to_numpy() - truth) ** 2)))
                pred = f.predict(test).to_numpy() >= 0.5
                acc = float(np.mean(np.where(pred, pi, 1 - pi)))
            else:
                rmse, acc = np.inf, float(max(pi.mean(), 1 - pi.mean()))
            out.update({f"rmse_{name}": rmse, f"acc_{name}": acc, f"method_{name}": f.method})
            out["n_hat"] = f.n_noisy
    finally:
        glm_auto.OBJPERT_CONSTANT = keep
    return out


def cells(part: str, eps_list=None):
    """(n, p, eps, kind, signal name, signal, prevalence, random direction) of a part."""
    if part == "derive":
        for n, p, e, k, (s, v), pr in itertools.product(
                GRID["n"], GRID["p"], eps_list or GRID["eps"], KINDS, SIGNALS.items(),
                PREVALENCES):
            yield n, p, e, k, s, v, pr, False
    elif part == "held":
        for n, p, e, k in itertools.product(HELD["n"], HELD["p"], eps_list or HELD["eps"],
                                            HELD_DESIGNS):
            yield n, p, e, k, k, *HELD_DESIGNS[k], True
    else:
        yield 5000, 5, 1.0, "note75", "note75", 1.2, None, False


def run(part: str, reps: int, eps_list=None, out: Path | None = None) -> pd.DataFrame:
    rows, t0, grid = [], time.perf_counter(), list(cells(part, eps_list))
    import glm_coverage as gc
    for i, (n, p, e, kind, sname, sig, prev, rnd) in enumerate(grid):
        ki = (KINDS + tuple(HELD_DESIGNS) + ("note75",)).index(kind)
        design_key = [SEEDS[part], p, ki, int(10 * sig), int(100 * (prev or 0))]
        if part == "note75":
            truth = gc.coefficients(p)
            test = np.random.default_rng(design_key).normal(size=(5000, p))
            pi = 1 / (1 + np.exp(-(truth[0] + test @ truth[1:])))
        else:
            truth, test, pi = problem(kind, p, sig, prev, rnd, seed=design_key)
        test_df = _frame(test)
        for r in range(reps):
            rng = np.random.default_rng(design_key + [n, int(100 * e), r])
            X = (rng.normal(size=(n, p)) if part == "note75" else covariates(kind, n, p, rng))
            y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(truth[0] + X @ truth[1:])))).astype(float)
            res = fit_both(_frame(X, y), e, int(rng.integers(2**31)), truth, test_df, pi)
            rows.append({"n": n, "p": p, "eps": e, "kind": kind, "signal": sname,
                         "prev": prev if prev is not None else np.nan, "rep": r,
                         "mu": gdp_mu((1 - N_SHARE) * e, DELTA), **res})
        if (i + 1) % 16 == 0 or i + 1 == len(grid):
            print(f"  [{i + 1}/{len(grid)}] n={n} p={p} eps={e} {kind} "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
            if out is not None:
                pd.DataFrame(rows).to_csv(out, index=False)
    return pd.DataFrame(rows)


def with_ids(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with an integer ``cell_id`` (grouping by it is much faster than by the labels)."""
    if "cell_id" in df:
        return df
    return df.assign(cell_id=df.fillna({"prev": -1}).groupby(CELL, sort=True).ngroup())


def per_cell(df: pd.DataFrame, C: float, b: float, labels: bool = True) -> pd.DataFrame:
    """Per cell: the rule's chosen fits against the better method (module docstring)."""
    df = with_ids(df)
    obj = (df.n_hat * df.mu >= C * ((df.p + 1) / 6.0) ** b).to_numpy()
    d = pd.DataFrame({"cell_id": df.cell_id.to_numpy(), "obj": obj})
    for s in ("rmse", "acc"):
        for m in ("obj", "out"):
            d[f"{s}_{m}"] = df[f"{s}_{m}"].to_numpy()
        d[f"{s}_ch"] = np.where(obj, d[f"{s}_obj"], d[f"{s}_out"])
    for m in ("obj", "out", "ch"):
        d[f"brk_{m}"] = ~(d[f"rmse_{m}"] <= BREAK)
    g = d.groupby("cell_id")
    t = g[[f"{s}_{m}" for s in ("rmse", "acc") for m in ("obj", "out", "ch")]].median().join(
        g[["obj", "brk_obj", "brk_out", "brk_ch"]].mean()).rename(columns={"obj": "obj_share"})
    t["log_ratio"] = np.log(t.rmse_ch / np.minimum(t.rmse_obj, t.rmse_out))
    t["acc_fail"] = t.acc_ch < np.maximum(t.acc_obj, t.acc_out) - ACC_GUARD
    t["brk_fail"] = t.brk_ch > np.minimum(t.brk_obj, t.brk_out) + BREAK_GUARD
    if labels:
        t = df.groupby("cell_id")[CELL].first().join(t)
    return t.reset_index(drop=True)


def score(df: pd.DataFrame, C: float, b: float) -> dict:
    t = per_cell(df, C, b, labels=False)
    fails = t.acc_fail | t.brk_fail
    return {"C": C, "b": b, "score": float(t.log_ratio.replace(np.inf, 50).mean()),
            "fail_cells": int(fails.sum()), "acc_fail": int(t.acc_fail.sum()),
            "brk_fail": int(t.brk_fail.sum())}


def best(table: pd.DataFrame) -> pd.Series:
    """The decision rule of the module docstring on a table of :func:`score` rows."""
    t = table.assign(s3=table.score.round(3), far=np.abs(np.log(table.C / OLD[0])),
                     bz=table.b != 0)
    return t.sort_values(["fail_cells", "s3", "far", "bz"]).iloc[0]


def derive(df: pd.DataFrame) -> tuple[pd.Series, pd.DataFrame]:
    df = with_ids(df)
    table = pd.DataFrame([score(df, C, b) for C in C_GRID for b in B_GRID])
    const = best(table[table.b == 0])
    by_p = [best(pd.DataFrame([score(df[df.p == p], C, 0.0) for C in C_GRID])).C
            for p in GRID["p"]]
    monotone = bool(np.all(np.diff(by_p) >= 0) or np.all(np.diff(by_p) <= 0))
    pdep = best(table[table.b != 0])
    per_p = dict(zip(GRID["p"], by_p, strict=True))
    print(f"best C per p {per_p} (monotone: {monotone}); best b != 0: "
          f"C={pdep.C:g} b={pdep.b:g} score {pdep.score:.4f} fails {pdep.fail_cells}; "
          f"best b = 0: C={const.C:g} score {const.score:.4f} fails {const.fail_cells}")
    use_p = (monotone and pdep.fail_cells <= const.fail_cells
             and pdep.score <= const.score - 0.01)
    return (pdep if use_p else const), table


def main(argv=None) -> int:
    warnings.simplefilter("ignore")
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", choices=("derive", "held", "note75"), default="derive")
    ap.add_argument("--eps", default=None, help="comma-separated subset of the part's eps")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--analyse", default=None, help="derivation CSVs (comma-separated)")
    ap.add_argument("--held", default=None, help="held-out CSVs (comma-separated)")
    ap.add_argument("--rule", default=None, help="C,b of the new rule for --held (else derived)")
    a = ap.parse_args(argv)
    pd.set_option("display.width", 200)
    if a.analyse is None and a.held is None:
        eps = [float(e) for e in a.eps.split(",")] if a.eps else None
        reps = a.reps or (100 if a.part == "note75" else 20)
        out = Path(a.out or f"benchmarks/results/glm_auto_switch_{a.part}.csv")
        run(a.part, reps, eps, out).to_csv(out, index=False)
        return 0
    rule = tuple(float(v) for v in a.rule.split(",")) if a.rule else None
    if a.analyse:
        df = pd.concat([pd.read_csv(f) for f in a.analyse.split(",")], ignore_index=True)
        new, table = derive(df)
        rule = rule or (float(new.C), float(new.b))
        print(table.sort_values("score").head(15).round(4).to_string(index=False))
        for name, (C, b) in (("old", OLD), ("new", rule)):
            print(f"{name} C={C:g} b={b:g}: {score(df, C, b)}")
        flip = per_cell(df, *OLD).merge(per_cell(df, *rule), on=CELL, suffixes=("", "_new"))
        flip = flip[flip.obj_share != flip.obj_share_new]
        print(f"cells whose choice changes: {len(flip)}")
        print(flip.groupby(["eps", "n"])[["log_ratio", "log_ratio_new"]].mean().round(3))
    if a.held:
        h = pd.concat([pd.read_csv(f) for f in a.held.split(",")], ignore_index=True)
        for name, (C, b) in (("old", OLD), ("new", rule)):
            for part, d in (("held", h[h.kind != "note75"]), ("note75", h[h.kind == "note75"])):
                if len(d):
                    t = per_cell(d, C, b)
                    print(f"{part} {name} C={C:g} b={b:g}: {score(d, C, b)}; median RMSE of "
                          f"the chosen fits {t.rmse_ch.median():.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
