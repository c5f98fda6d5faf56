"""Coverage of dpstats' nominal 95% intervals, their width against non-private OLS/logistic
intervals, and the share of fits that give no interval.

Design: the full factorial n x p x eps x covariates x errors is too big for two cores, so the
grid is a **centre point plus one-factor-at-a-time arms** (column ``design`` in the CSV):

* centre: n = 20,000, p = 5 predictors (plus intercept), eps = 1, Gaussian covariates,
  Gaussian errors;
* arms (one factor moved, the others at the centre): n in {2,000, 200,000}; p in {1, 10};
  eps in {0.5, 4}; covariates skewed (centred exponential) or a binary factor (first
  predictor 0/1 with P = 0.3); errors t(3) or heteroscedastic (sd 0.5 + |x_1|).

Every cell runs ``dp_lm(..., select=None)`` for the default method and for each method
(``--methods bas+select``: with ``select="auto", k=3``; coverage then counts the selected
terms, conditional on the selection: with independent covariates the selected model's
coefficients equal the generating ones) (and a
logistic-regression cell per arm of n and eps through ``dp_glm``), with ``bounds="auto"``
(what a user gets), delta = 1e-5. The truth is the generating coefficients
(intercept 1, slopes +1, -1/2, +1/3, ...). Reported per cell and method: ``reps`` used,
``released`` (share of fits releasing coefficients), ``with_interval`` (share of fits with
finite standard errors: 1 - the withholding share), ``coverage`` (share of 95% intervals
holding the true coefficient, over coefficients and fits with an interval), ``coverage_min``
(the worst coefficient), ``width_ratio`` (median over fits and coefficients of the private
interval width divided by the classical non-private interval's on the same data), seconds.

**Release gate.** AdaSSP/BAS fits run with the gate of
:mod:`dpstats.estimators.inference.gate` open and record its index (``n_hat * eps / k``, from
released and public values); the row then applies the code's thresholds, which is exactly what
the gated code releases (the gate is post-processing: no released value changes). Fits the gate
withholds count as "no interval" (column ``gated``). ``--raw`` keeps the per-rep rows so that
``--from-raw`` re-summarises them at new thresholds without re-fitting.

**Tails** (``--cells tails``, or by name such as ``n=200000/errors=hetero``): two-factor cells
where AdaSSP's release gate opens, n = 100,000 or 200,000 (eps 1) or eps = 4 (n = 20,000),
crossed with skewed and binary covariates and t(3) and heteroscedastic errors: the private
box or the label's range cuts a tail there, so they measure how far AdaSSP's intervals (which
centre on the clipped problem's coefficients) cover the model's. ``--start`` runs a cell's
replications from that seed index on (a long cell in chunks; ``--raw`` collects them).

``method:HC1`` (e.g. ``bas:HC1``) runs with ``cov_type="HC1"`` (the private sandwich);
``bas@clipped`` (also ``bas@clipped:HC1``) with ``residuals="clipped"``.
``--selection`` runs only the selection arm: equicorrelated (0.5) Gaussian covariates, p = 5,
``select="auto", k=3``, methods ``default+select``, ``bas+select``, ``adassp+select``; besides
``coverage`` (of the full model's coefficients of the selected terms) it reports
``coverage_conditional`` (of the selected model's coefficients: the population least-squares
projection onto the selected terms).

Prints a table with progress; writes benchmarks/results/coverage.csv (``--out``). (Not named
``coverage.py``: run from ``benchmarks/``, that name would shadow the ``coverage`` package that
numba imports, breaking every benchmark script there.)

    nice python benchmarks/interval_coverage.py [--reps 500] [--cells all|centre,n=2000,...]
        [--methods default,adassp,bas,...] [--jobs 1] [--fast]

``--fast``: 20 reps, the centre cell and n = 2,000 only, AdaSSP and BAS (a smoke test).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
import zlib
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm

CENTRE = {"n": 20_000, "p": 5, "eps": 1.0, "covariates": "gaussian", "errors": "gaussian"}
ARMS = {"n": [2_000, 200_000], "p": [1, 10], "eps": [0.5, 4.0],
        "covariates": ["skewed", "binary"], "errors": ["t3", "hetero"]}
METHODS = ["default", "adassp", "bas", "tukey", "fw", "dpgd"]
#: The selection arm: correlated covariates (so a model without some terms has other
#: coefficients), select="auto" with k = 3 of p = 5.
SELECTION = ("select", {**{"n": 20_000, "p": 5, "eps": 1.0, "covariates": "correlated",
                           "errors": "gaussian"}})
SELECTION_METHODS = ["default+select", "bas+select", "adassp+select"]
#: Correlation of the "correlated" covariates.
RHO = 0.5
DELTA = 1e-5
OUT = Path(__file__).resolve().parent / "results" / "coverage.csv"


#: Two-factor cells at large n*eps (AdaSSP's release gate) crossed with the tails (``--cells
#: tails`` or by name, e.g. ``n=200000/covariates=skewed``): the clipping box cuts a tail
#: there, so they test what AdaSSP's intervals cover.
TAIL_BASES = {"n=200000": {"n": 200_000}, "eps=4.0": {"eps": 4.0}, "n=100000": {"n": 100_000},
              "n=200000&eps=2.0": {"n": 200_000, "eps": 2.0}}
TAILS = {"covariates": ["skewed", "binary"], "errors": ["t3", "hetero"]}


def cells(tails: bool = False) -> list[tuple[str, dict]]:
    """``(design, settings)``: the centre, then each arm (``tails``: then the two-factor
    :data:`TAILS` cells)."""
    out = [("centre", dict(CENTRE))]
    for factor, values in ARMS.items():
        for v in values:
            out.append((f"{factor}={v}", {**CENTRE, factor: v}))
    if tails:
        out += [(f"{b}/{f}={v}", {**CENTRE, **base, f: v}) for b, base in TAIL_BASES.items()
                for f, values in TAILS.items() for v in values]
        out += [(b, {**CENTRE, **base}) for b, base in TAIL_BASES.items()    # bases that are
                if b not in dict(out)]                                       # not arms
    return out


def truth(p: int) -> np.ndarray:
    return np.r_[1.0, [(-1) ** j / (j + 1) for j in range(p)]]


def covariance(cell: dict) -> np.ndarray | None:
    """Covariance of the Gaussian covariates (None for other designs)."""
    p = cell["p"]
    if cell["covariates"] == "gaussian":
        return np.eye(p)
    if cell["covariates"] == "correlated":
        return (1 - RHO) * np.eye(p) + RHO * np.ones((p, p))
    return None


def conditional_truth(cell: dict, kept: np.ndarray) -> np.ndarray:
    """The coefficients of the model with the ``kept`` terms (intercept first): the population
    least-squares projection ``beta_S + Sigma_SS^-1 Sigma_SO beta_O`` (mean-zero Gaussian
    covariates, so the intercept stays); NaN where not kept or not Gaussian."""
    beta = truth(cell["p"])
    out = np.full(beta.size, np.nan)
    S = covariance(cell)
    if S is None:
        return beta.copy() if kept.all() else out
    k = kept[1:]
    o = ~k
    slopes = beta[1:][k] + np.linalg.solve(S[np.ix_(k, k)], S[np.ix_(k, o)] @ beta[1:][o]) \
        if k.any() else np.array([])
    out[0] = beta[0] if kept[0] else np.nan
    out[1:][k] = slopes
    return out


def simulate(cell: dict, rng, logistic: bool = False) -> pd.DataFrame:
    n, p = cell["n"], cell["p"]
    if cell["covariates"] == "skewed":
        X = rng.exponential(size=(n, p)) - 1.0
    elif cell["covariates"] == "correlated":       # equicorrelated Gaussian (RHO)
        X = (np.sqrt(1 - RHO) * rng.normal(size=(n, p))
             + np.sqrt(RHO) * rng.normal(size=(n, 1)))
    else:
        X = rng.normal(size=(n, p))
    if cell["covariates"] == "binary":
        X[:, 0] = (rng.random(n) < 0.3).astype(float)
    eta = truth(p)[0] + X @ truth(p)[1:]
    if logistic:
        y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    else:
        e = {"gaussian": lambda: rng.normal(size=n),
             "t3": lambda: rng.standard_t(3, size=n),
             "hetero": lambda: rng.normal(size=n) * (0.5 + np.abs(X[:, 0]))}[cell["errors"]]()
        y = eta + e
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(p)])
    df["y"] = y
    return df


def _classical_se(df: pd.DataFrame, logistic: bool) -> np.ndarray:
    X = sm.add_constant(df.drop(columns="y").to_numpy(), has_constant="add")
    model = sm.Logit(df["y"].to_numpy(), X) if logistic else sm.OLS(df["y"].to_numpy(), X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = model.fit(disp=0) if logistic else model.fit()
    return np.asarray(fit.bse)


def one_rep(args) -> dict:
    cell, method, rep, logistic = args
    import dpstats as dp
    from dpstats.estimators.inference import gate
    rng = np.random.default_rng([rep, cell["n"], cell["p"], int(cell["eps"] * 10),  # stable
                                 zlib.crc32(cell["covariates"].encode()) % 997,  # (not hash():
                                 zlib.crc32(cell["errors"].encode()) % 991])    # per-process)
    df = simulate(cell, rng, logistic)
    name, _, sel = method.partition("+")
    name, _, cov_type = name.partition(":")         # "bas:HC1": cov_type="HC1"
    name, _, residuals = name.partition("@")        # "bas@clipped": residuals="clipped"
    kw = {} if name == "default" else {"method": name}
    if residuals:
        kw["residuals"] = residuals
    if cov_type:
        kw["cov_type"] = cov_type
    kw.update({"select": "auto", "k": 3} if sel else {"select": None})
    seen, real = [], gate.passes

    def record(kind, n_hat, e, k):      # the gate open; its index recorded (see module doc)
        seen.append((kind, gate.gate_index(n_hat, e, k)))
        return True
    gate.passes = record
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn = dp.dp_glm if logistic else dp.dp_lm
            fit = fn("y ~ .", df, eps=cell["eps"], delta=DELTA,
                     random_state=int(rng.integers(2**31)), **kw)
    finally:
        gate.passes = real
    sec = time.perf_counter() - t0
    se = fit.bse.to_numpy()
    beta = truth(cell["p"])
    out = {"released": float(fit.released), "sec": sec,
           "kind": seen[0][0] if seen else "", "index": seen[0][1] if seen else np.nan,
           "hit": [np.nan] * len(beta), "ratio": [np.nan] * len(beta),
           "z": [np.nan] * len(beta)}
    # the intervals' centre: params minus the released bias where the inference estimates one
    # (dp_glm's objective perturbation, DP-GD), as conf_int (params alone missed it: note 73)
    centre = fit.params_bias_corrected.to_numpy()
    if fit.released and np.isfinite(se).any():  # terms without an interval count as NaN
        hit = (np.abs(centre - beta) <= 1.959964 * se).astype(float)
        out["hit"] = np.where(np.isfinite(se), hit, np.nan).tolist()
        cond = conditional_truth(cell, np.isfinite(se))     # the selected model's coefficients
        out["cell"] = cell
        infl = _inflation(out)                          # z and ratio before the inflation
        del out["cell"]
        out["z_cond"] = ((centre - cond) / se * infl).tolist()
        out["z"] = ((centre - beta) / se * infl).tolist()
        out["ratio"] = (se / infl / _classical_se(df, logistic)).tolist()
    return out


def gated(r: dict) -> bool:
    """Whether the release gate (at the code's thresholds) withholds this fit's intervals."""
    from dpstats.estimators.inference import gate
    if not r["kind"]:
        return False
    k = r["cell"]["p"] + 1          # r["index"] is n_hat * eps / k: the gate's own index from it
    n_hat = r["index"] * k / r["cell"]["eps"]
    return not gate.passes(r["kind"], n_hat, r["cell"]["eps"], k)


def run_cell(design: str, cell: dict, method: str, reps: int, jobs: int,
             logistic: bool = False, raw: list | None = None, start: int = 0) -> dict:
    tasks = [(cell, method, r, logistic) for r in range(start, start + reps)]
    if jobs > 1:
        with Pool(jobs) as pool:
            res = pool.map(one_rep, tasks)
    else:
        res = [one_rep(t) for t in tasks]
    for r in res:
        r["cell"] = cell
    if raw is not None:
        raw += [{"design": design, "method": method, "logistic": logistic, "rep": i, **r}
                for i, r in enumerate(res, start)]
    return summarise(design, cell, method, res, logistic)


def _inflation(r: dict) -> float:
    """The code's inflation of a rep's fit (its ``z`` and ``ratio`` are recorded before it):
    :func:`~dpstats.estimators.inference.gate.inflation` at the recorded gate index
    (``n_hat * eps / k``, so ``n_hat = index * k / eps``)."""
    from dpstats.estimators.inference import gate
    if not r["kind"]:
        return 1.0
    k, eps = r["cell"]["p"] + 1, r["cell"]["eps"]
    return gate.inflation(r["kind"], r["index"] * k / eps, eps, k)


def _hits(r: dict, key: str = "z") -> list:
    """Hits of a rep's intervals at the code's inflation (z is recorded before inflation);
    ``key="z_cond"``: of the selected model's coefficients."""
    if key not in r:
        return [np.nan] * len(r["hit"])
    if not r["kind"]:
        return r["hit"]
    z = np.asarray(r[key], dtype=float)
    c = _inflation(r)
    return np.where(np.isfinite(z), np.abs(z) <= 1.959964 * c, np.nan).tolist()


def summarise(design: str, cell: dict, method: str, res: list, logistic: bool) -> dict:
    """One CSV row; fits the gate withholds count as "no interval"."""
    ok = [r for r in res if np.isfinite(r["hit"]).any() and not gated(r)]
    hits = np.array([_hits(r) for r in ok], dtype=float)
    cond = np.array([_hits(r, "z_cond") for r in ok], dtype=float)
    ratios = np.array([np.asarray(r["ratio"], dtype=float) * _inflation(r) for r in ok],
                      dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {"design": design, **cell, "model": "logistic" if logistic else "linear",
                "method": method, "reps": len(res),
                "released": np.mean([r["released"] for r in res]),
                "with_interval": len(ok) / len(res),
                "gated": np.mean([gated(r) for r in res]),
                "coverage": np.nanmean(hits) if hits.size else np.nan,
                "coverage_min": np.nanmin(np.nanmean(hits, axis=0)) if hits.size else np.nan,
                "coverage_conditional": np.nanmean(cond) if cond.size else np.nan,
                "coverage_conditional_min": (np.nanmin(np.nanmean(cond, axis=0))
                                             if cond.size else np.nan),
                "width_ratio": np.nanmedian(ratios) if ratios.size else np.nan,
                "sec_median": np.median([r["sec"] for r in res])}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--cells", default="all",
                    help="'all' (centre and arms), 'tails' (the TAILS cells) or a comma list")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--logistic", action="store_true", help="also the logistic cells")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--start", type=int, default=0,
                    help="first replication's seed index (run a cell in chunks with --raw)")
    ap.add_argument("--fast", action="store_true")
    ap.add_argument("--selection", action="store_true",
                    help="only the selection arm (correlated covariates, select='auto', k=3)")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--raw", default=None, help="also write per-rep rows (JSON lines) here")
    ap.add_argument("--from-raw", default=None,
                    help="only re-summarise per-rep rows (comma list of files; at the code's "
                         "gate thresholds unless --gate)")
    ap.add_argument("--gate", default=None,
                    help="with --from-raw: thresholds other than the code's, e.g. adassp=47500")
    a = ap.parse_args(argv)
    if a.gate:
        from dpstats.estimators.inference import gate
        for item in a.gate.split(","):
            kind, _, value = item.partition("=")
            gate.THRESHOLDS[kind] = float(value)
    if a.from_raw:
        resummarise(a.from_raw, a.out)
        return
    todo = cells(tails=True)
    methods = a.methods.split(",")
    if a.fast:
        a.reps, methods = 20, ["adassp", "bas"]
        todo = [c for c in todo if c[0] in ("centre", "n=2000")]
    elif a.cells != "all":
        want = set(a.cells.split(","))
        todo = [c for c in todo if c[0] in want or ("tails" in want and "/" in c[0])]
    else:
        todo = cells()
    jobs = [(d, c, m, False) for d, c in todo for m in methods]
    if a.selection:
        methods = a.methods.split(",") if a.methods != ",".join(METHODS) else SELECTION_METHODS
        jobs = [(SELECTION[0], SELECTION[1], m, False) for m in methods]
    if a.logistic:
        jobs += [(d, c, "default", True) for d, c in todo
                 if d in ("centre", "n=2000", "n=200000", "eps=0.5", "eps=4.0")]
    rows = []
    print(f"{'design':14s} {'model':8s} {'method':8s} {'reps':>5s} {'rel':>5s} {'int':>5s} "
          f"{'cover':>6s} {'min':>6s} {'cond':>6s} {'width':>7s} {'sec':>6s}", flush=True)
    for i, (design, cell, method, logistic) in enumerate(jobs, 1):
        raw = []
        row = run_cell(design, cell, method, a.reps, a.jobs, logistic, raw, a.start)
        rows.append(row)
        if a.raw:
            with open(a.raw, "a") as fh:
                fh.writelines(json.dumps(r) + "\n" for r in raw)
        print(f"{design:14s} {row['model']:8s} {method:8s} {row['reps']:5d} "
              f"{row['released']:5.2f} {row['with_interval']:5.2f} {row['coverage']:6.3f} "
              f"{row['coverage_min']:6.3f} {row['coverage_conditional']:6.3f} "
              f"{row['width_ratio']:7.2f} {row['sec_median']:6.3f}"
              f"   [{i}/{len(jobs)}]", flush=True)
        pd.DataFrame(rows).to_csv(a.out, index=False)      # partial results survive a kill
    print(f"wrote {a.out}")


def resummarise(path: str, out: str) -> None:
    """The CSV from per-rep rows, the release gate applied at the code's thresholds."""
    rows = [json.loads(line) for p in path.split(",") for line in open(p)]
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["design"], r["method"], r["logistic"]), []).append(r)
    table = [summarise(d, groups[(d, m, lg)][0]["cell"], m, groups[(d, m, lg)], lg)
             for (d, m, lg) in groups]
    pd.DataFrame(table).to_csv(out, index=False)
    print(pd.DataFrame(table)[["design", "method", "reps", "with_interval", "gated",
                               "coverage", "coverage_min", "width_ratio"]]
          .round(3).to_string(index=False))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
