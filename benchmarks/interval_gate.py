"""Derive the release gate of the AdaSSP / BAS intervals (dpstats.estimators.inference.gate)
by a data-independent simulation.

Every fit runs with the gate **open** (threshold 0) and records the gate's index
``n_hat * eps / k`` (released row count, public eps, fitted columns) and whether each
coefficient's 95% interval holds the generating coefficient (intercept 1, slopes +1, -1/2,
+1/3, ...; ``bounds="auto"``, delta 1e-5, ``select=None``). The gate is post-processing of the
index, so applying a threshold afterwards gives exactly the intervals the gated code releases.

Cells (n, eps, p) span the index from ~250 to ~1e5 over n 2e3..5e4, eps 0.25..4, p 1..10,
each with Gaussian and skewed (centred exponential) covariates, Gaussian errors. Output:
per-rep rows in benchmarks/results/coverage_gate_raw.csv, then for each method the smallest
threshold at which every cell covers >= 0.93 among the fits the gate lets through (cells with
fewer than 20 such fits are not judged; inf when no threshold up to the largest cell's
median index works), and the per-cell table at that threshold
(benchmarks/results/coverage_gate.csv). The threshold rule is in :func:`derive`.

    nice python benchmarks/interval_gate.py [--reps 100] [--methods adassp,bas] [--jobs 1]
    python benchmarks/interval_gate.py --summarise     # from the raw CSV
"""

from __future__ import annotations

import argparse
import time
import warnings
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import pandas as pd
from interval_coverage import simulate, truth

COMBOS = [(2000, 0.25, 1), (2000, 1.0, 5), (2000, 4.0, 1), (5000, 1.0, 10), (5000, 4.0, 5),
          (20000, 0.25, 5), (20000, 0.5, 1), (20000, 1.0, 10), (50000, 0.25, 10),
          (50000, 1.0, 5)]
#: Cells around and above the BAS threshold for the inflation's re-derivation with per-fit
#: seeds (session 14, ``--combos edge``): the two failing cells just below it, the cells
#: that set it, the lm centre (n*eps 20,000) and larger n*eps up to 100,000.
EDGE = [(2000, 4.0, 1), (20000, 0.5, 1), (50000, 0.25, 10), (20000, 1.0, 10), (5000, 4.0, 5),
        (20000, 1.0, 5), (50000, 1.0, 5), (20000, 4.0, 5), (100000, 1.0, 5)]
COVARIATES = ["gaussian", "skewed"]
TARGET = 0.93
MIN_FITS = 20
RES = Path(__file__).resolve().parent / "results"


def one_rep(args) -> dict:
    (n, eps, p, cov), method, rep = args
    import dpstats as dp
    from dpstats.estimators.inference import gate
    seen = []
    real = gate.passes

    def record(kind, n_hat, e, k):
        seen.append(gate.gate_index(n_hat, e, k))
        return True                                     # the gate open
    gate.passes = record
    try:
        cell = {"n": n, "p": p, "eps": eps, "covariates": cov, "errors": "gaussian"}
        rng = np.random.default_rng([rep, n, p, int(eps * 100), COVARIATES.index(cov), 7])
        df = simulate(cell, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = dp.dp_lm("y ~ .", df, eps=eps, delta=1e-5, method=method, select=None,
                           random_state=int(rng.integers(2**31)))
    finally:
        gate.passes = real
    se = fit.bse.to_numpy()
    row = {"method": method, "n": n, "eps": eps, "p": p, "covariates": cov, "rep": rep,
           "index": seen[0] if seen else np.nan, "released": fit.released}
    hit = np.abs(fit.params.to_numpy() - truth(p)) <= 1.959964 * se
    k = p + 1
    infl = gate.inflation(method, seen[0] * k / eps, eps, k) if seen else 1.0
    z = (fit.params.to_numpy() - truth(p)) / se * infl                     # before inflation
    for j in range(p + 1):
        row[f"hit{j}"] = float(hit[j]) if np.isfinite(se[j]) else np.nan
        row[f"z{j}"] = z[j]
    return row


def cell_table(raw: pd.DataFrame, threshold: float, factor: float | None = None) -> pd.DataFrame:
    """Per cell: share of fits with an interval, coverage among them, worst and best
    coefficient; intervals at the code's inflation (:func:`gate.inflation` of each fit's
    index), or at a constant ``factor``."""
    from dpstats.estimators.inference import gate
    zs = [c for c in raw.columns if c.startswith("z")]
    rows = []
    for key, g in raw.groupby(["method", "n", "eps", "p", "covariates"]):
        k = key[3] + 1
        idx = gate.method_index(key[0], g["index"] * k / key[2], key[2], k)   # the code's form
        gated = g[(idx >= threshold) & g[zs].notna().any(axis=1)]
        z = gated[zs].to_numpy(dtype=float)
        c = np.array([gate.inflation(key[0], i * k / key[2], key[2], k) if factor is None
                      else factor for i in gated["index"]])[:, None]
        h = np.where(np.isfinite(z), np.abs(z) <= 1.959964 * c, np.nan)
        rows.append({**dict(zip(["method", "n", "eps", "p", "covariates"], key, strict=True)),
                     "index_median": float(np.nanmedian(idx)),
                     "index_nominal": float(gate.method_index(key[0], key[1], key[2], k)),
                     "reps": len(g),
                     "with_interval": len(gated) / len(g),
                     "coverage": np.nanmean(h) if len(gated) else np.nan,
                     "coverage_min": np.nanmin(np.nanmean(h, axis=0)) if len(gated) else np.nan,
                     "coverage_max": np.nanmax(np.nanmean(h, axis=0)) if len(gated) else np.nan,
                     "threshold": threshold})
    return pd.DataFrame(rows)


def derive(raw: pd.DataFrame) -> tuple[float, pd.DataFrame]:
    """The gate's threshold. With cells judged over all their fits (gate open, the code's
    inflation) and placed at their median index: ``f`` the largest index of a cell covering
    < TARGET, ``m`` the smallest index of a cell above ``f``; the threshold is
    ``max(0.95 m, (f + m) / 2)`` (all of cell ``m`` passes despite the noise of ``n_hat``,
    no fit of cell ``f`` does); inf when no cell lies above ``f`` (nothing beyond the
    simulated range is certified). Returns it and the per-cell table at it (fits gated one by
    one, as the code does)."""
    open_ = cell_table(raw, -np.inf)
    open_ = open_[open_["with_interval"] > 0]
    fail = open_.loc[~(open_["coverage"] >= TARGET), "index_nominal"]
    f = fail.max() if len(fail) else 0.0
    above = open_.loc[open_["index_nominal"] > f, "index_nominal"]
    t = max(0.95 * above.min(), (f + above.min()) / 2) if len(above) else np.inf
    return float(t), cell_table(raw, t)


def summarise(raw: pd.DataFrame) -> pd.DataFrame:
    out = []
    for method, g in raw.groupby("method"):
        t, tab = derive(g)
        from dpstats.estimators.inference import gate
        print(f"\n{method}: threshold (every cell above it covers >= {TARGET}): {t:,.0f} "
              f"(the code's: {gate.THRESHOLDS[method]:,.0f}, inflation "
              f"{gate.INFLATION[method]:g} there, {gate.INFLATION_FLOOR[method]:g} from "
              f"{gate.INFLATION_FULL[method]:,.0f})")
        print(tab.drop(columns=["method", "threshold"]).round(3).to_string(index=False))
        print(factor_table(g).to_string(index=False))
        out.append(tab)
    return pd.concat(out)


def factor_table(raw: pd.DataFrame, factors=(1.0, 1.05, 1.1)) -> pd.DataFrame:
    """Per cell (gate open, fits with an interval): coverage (worst-best coefficient) at
    constant inflation ``factors`` and at the code's :func:`gate.inflation` (``code``):
    post-processing of the same fits (their ``z`` is recorded before the inflation)."""
    key = ["n", "eps", "p", "covariates"]
    tabs = {f: cell_table(raw, -np.inf, f) for f in factors}
    tabs["code"] = cell_table(raw, -np.inf)
    out = tabs["code"][key + ["index_nominal"]].copy()
    for f, t in tabs.items():
        out[f"{f}"] = [f"{c:.3f} ({lo:.3f}-{hi:.3f})" for c, lo, hi in
                       zip(t["coverage"], t["coverage_min"], t["coverage_max"], strict=True)]
    return out.sort_values("index_nominal")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--methods", default="adassp,bas")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--summarise", action="store_true")
    ap.add_argument("--raw", default=str(RES / "coverage_gate_raw.csv"),
                    help="per-rep CSV (written; with --summarise a comma list is read)")
    ap.add_argument("--table", default=str(RES / "coverage_gate.csv"))
    ap.add_argument("--combos", default="all",
                    help="all (COMBOS), edge (EDGE) or a list n:eps:p,n:eps:p,...")
    ap.add_argument("--part", default="1/1", help="i/N: every N-th cell from the i-th")
    a = ap.parse_args(argv)
    if not a.summarise:
        rows = []
        combos = {"all": COMBOS, "edge": EDGE}.get(a.combos) or [
            (int(c.split(":")[0]), float(c.split(":")[1]), int(c.split(":")[2]))
            for c in a.combos.split(",")]
        i0, parts = (int(v) for v in a.part.split("/"))
        cells = [(c + (cov,), m) for m in a.methods.split(",") for c in combos
                 for cov in COVARIATES][i0 - 1::parts]
        for i, (cell, method) in enumerate(cells, 1):
            t0 = time.perf_counter()
            tasks = [(cell, method, r) for r in range(a.reps)]
            if a.jobs > 1:
                with Pool(a.jobs) as pool:
                    res = pool.map(one_rep, tasks)
            else:
                res = [one_rep(t) for t in tasks]
            rows += res
            g = pd.DataFrame(res)
            h = g[[c for c in g.columns if c.startswith("hit")]].to_numpy(dtype=float)
            print(f"{method:7s} n={cell[0]:6d} eps={cell[1]:5.2f} p={cell[2]:2d} {cell[3]:8s} "
                  f"index~{g['index'].median():9.0f} coverage(open gate) {np.nanmean(h):.3f} "
                  f"{time.perf_counter() - t0:6.1f}s [{i}/{len(cells)}]", flush=True)
            pd.DataFrame(rows).to_csv(a.raw, index=False)
    raw = pd.concat([pd.read_csv(f) for f in a.raw.split(",")], ignore_index=True)
    summarise(raw).to_csv(a.table, index=False)
    print(f"wrote {a.table}")


if __name__ == "__main__":
    main()
