"""The tables the ``method="auto"`` / ``select="auto"`` rule is read from (simulation only).

Reads the CSVs of ``benchmarks/auto_rule_real.py`` (real-data-like synthetic designs; never
real data) and prints, by bins of public quantities (computed from the row count, p and eps
exactly as :mod:`dpstats.pipeline.auto` computes them from the released count):

1. Tukey against BAS on every term where Tukey's PTR is predicted to pass
   (``n / tukey_count >= 1``), by error type and by ``rows per column``;
2. the loss of BAS with every term and with k selected terms, by ``n eps_reg / p``;
3. candidate (select-below, rows-per-term) rules scored on the simulation;
4. AdaSSP against BAS by ``n eps_reg / p`` (the faster method where they tie).

    python benchmarks/auto_rule_real.py --derive
"""

from __future__ import annotations

import glob
import math
from pathlib import Path

import numpy as np
import pandas as pd

from dpstats.pipeline.feasibility import tukey_count

DELTA = 1e-5
BINS = [0, 30, 100, 300, 1000, 3000, 10000, 1e12]


def load(out: Path) -> pd.DataFrame:
    files = sorted(glob.glob(str(out.with_name(out.stem + "*.csv"))))
    files = [f for f in files if not f.endswith("_wide.csv")]
    res = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    res["loss"] = (res.ols_r2 - res.r2).clip(upper=1.0)
    return res


def wide(res: pd.DataFrame) -> pd.DataFrame:
    key = ["cell", "rep", "n", "p", "terms", "eps", "corr", "levels", "coef", "error",
           "r2_true", "ols_r2"]
    w = res.pivot_table(index=key, columns="config", values="loss").reset_index()
    w["cols"] = w.p + 1
    w["ratio"] = w.n * 0.95 * w.eps / w.cols
    w["t_ratio"] = [n / tukey_count(int(c), 0.95 * e, DELTA)
                    for n, c, e in zip(w.n, w.cols, w.eps, strict=True)]
    w["rbin"] = pd.cut(w.ratio, BINS)
    return w


def tukey_vs_bas(w: pd.DataFrame) -> None:
    ok = w[w.t_ratio >= 1].copy()
    ok["d"] = ok.tukey_all - ok.bas_all
    print(f"\n1. Tukey - BAS loss (all terms) where n >= tukey_count: {len(ok)} problems; "
          f"Tukey better (by > 0.005) in {(ok.d < -0.005).sum()}, worse (by > 0.005) in "
          f"{(ok.d > 0.005).sum()}; mean {ok.d.mean():.4f}, median {ok.d.median():.4f}")
    print("PTR withheld:", int((ok.tukey_all >= 1).sum()))
    for by in ("error", "levels", "rbin", "corr"):
        print(ok.groupby(by, observed=True).d.agg(["mean", "median", "max", "size"]).round(4))
    ok["tbin"] = pd.cut(ok.t_ratio, [1, 2, 4, 16, 64, 1e12])
    print(ok.groupby(["tbin", "error"], observed=True).d.mean().unstack().round(4))


def k_tables(w: pd.DataFrame) -> None:
    cols = [c for c in ("bas_all", "bas_k1", "bas_k2", "bas_k5", "bas_k10") if c in w]
    print("\n2. BAS loss against OLS by n eps_reg / p (mean; median in the second table):")
    print(w.groupby("rbin", observed=True)[cols].mean().round(3).assign(
        size=w.groupby("rbin", observed=True).size()))
    print(w.groupby("rbin", observed=True)[cols].median().round(3))
    best = w[cols].idxmin(axis=1)
    print(pd.crosstab(w.rbin, best))


def rule_choice(n: float, terms: int, cols: int, eps: float, below: float,
                per_term: float) -> str:
    """BAS configuration a (select-below, rows-per-term) rule picks, among the simulated k."""
    if n * 0.95 * eps / cols >= below:
        return "bas_all"
    k = int(n * 0.90 * eps / per_term) - 1
    ks = [kk for kk in (1, 2, 5, 10) if kk < terms and kk <= max(k, 1)]
    return f"bas_k{ks[-1]}" if ks else "bas_all"


def rule_scores(w: pd.DataFrame) -> None:
    print("\n3. Rules (select when n eps_reg / p < below; k = largest with "
          "n eps_sel_reg / (k + 1) >= per_term): mean / 90th pct loss, share within 0.03 of "
          "the best BAS config")
    cols = [c for c in ("bas_all", "bas_k1", "bas_k2", "bas_k5", "bas_k10") if c in w]
    best = w[cols].min(axis=1)
    rows = []
    for below in (0, 30, 50, 100, 150, 200, 300):
        for per_term in (30, 100, 300, 600, 1000):
            pick = [rule_choice(n, t, c, e, below, per_term) for n, t, c, e in
                    zip(w.n, w.terms, w.cols, w.eps, strict=True)]
            loss = np.array([w[c].iat[i] for i, c in enumerate(pick)])
            ok = ~np.isnan(loss)      # a configuration not simulated (k >= terms, n = 1e6)
            rows.append({"below": below, "per_term": per_term, "mean": loss[ok].mean(),
                         "p90": np.quantile(loss[ok], 0.9),
                         "within_0.03": float(np.mean(loss[ok] - best[ok] <= 0.03)),
                         "n": int(ok.sum())})
    print(pd.DataFrame(rows).round(4).to_string(index=False))


def adassp_vs_bas(w: pd.DataFrame) -> None:
    d = w.adassp_all - w.bas_all
    print("\n4. AdaSSP - BAS loss (all terms) by n eps_reg / p:")
    print(d.groupby(w.rbin, observed=True).agg(["mean", "median", "max", "size"]).round(4))


def derive(out: Path) -> None:
    pd.set_option("display.width", 200)
    res = load(out)
    w = wide(res)
    print(f"{len(w)} problems, {len(res)} fits")
    tk = res[res.config == "tukey_all"].merge(w[["cell", "rep", "t_ratio"]], on=["cell", "rep"])
    tk["tbin"] = pd.cut(tk.t_ratio, [0, 0.5, 0.75, 1, 2, 4, 16, 1e12])
    print("Tukey PTR pass rate by n / tukey_count:")
    print(tk.groupby("tbin", observed=True).ptr_passed.agg(
        lambda s: s.fillna(False).astype(float).mean()).round(2).to_frame("pass").assign(
        size=tk.groupby("tbin", observed=True).size()))
    tukey_vs_bas(w)
    k_tables(w)
    rule_scores(w)
    adassp_vs_bas(w)
    w.to_csv(out.with_name(out.stem + "_wide.csv"), index=False)
    _ = math
