"""Calibration of the bias plug-ins behind dp_glm's intervals (issue 16): objective
perturbation's ridge bias and logistic DP-GD's unfinished-descent bias.

Data-independent simulation (the cells of ``glm_coverage.py``). Every fit's inference inputs
are recorded (plausible curvatures, released coefficients, the linear map to the original
scale, the intercept's known shift) and the standard errors are recomputed offline under
variants of the bias plug-in, all from the same fits:

* ``old``: the rule before this session (bias averaged over plausible curvatures, unscaled);
* ``bc``: the parametric bootstrap's bias correction (``inference.glm.debias``);
* ``bc*k``: the corrected bias times ``k`` (DP-GD: ``BIAS_SCALE``).

It prints, per cell and variant, coverage of nominal 95% intervals of the model's coefficients
(mean, worst and best coefficient) and writes ``benchmarks/results/glm_bias_plugins.csv``.

    nice -n 10 python benchmarks/glm_bias_plugins.py --method glm-dpgd --cells 0,6 --reps 120 \\
        --scales 0.85,0.92,1.0
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import glm_coverage as gc  # noqa: E402

from dpstats.estimators.inference import dpgd as idg  # noqa: E402
from dpstats.estimators.inference import glm as ig  # noqa: E402
from dpstats.estimators.inference.ssp import _covariance  # noqa: E402

OUT = Path(__file__).parent / "results" / "glm_bias_plugins.csv"
Z = 1.959963984540054


def _record(cap: dict):
    """Spies on the inference internals; fills ``cap`` for the current fit."""
    gd, ed, rm = idg._gd_model, ig.error_draws, ig._ridge_model

    def gd_spy(Cs, theta, sigma2, **kw):
        cap.update(Cs=Cs, theta=theta, sigma2=sigma2,
                   kw={k: kw[k] for k in ("lr", "sigma_g", "T", "n_hat")})
        return gd(Cs, theta, sigma2, **kw)

    def rm_spy(Cs, ridge, theta, priv):
        cap.update(Cs=Cs, theta=theta, ridge=ridge, priv=priv)
        return rm(Cs, ridge, theta, priv)

    def ed_spy(bias, cov, M, shift, draws=ig.DRAWS):
        cap.update(M=M, shift=shift)
        return ed(bias, cov, M, shift, draws)

    idg._gd_model, ig._ridge_model, ig.error_draws, idg.error_draws = gd_spy, rm_spy, ed_spy, \
        ed_spy


def _bias_cov(rec: dict, corrected: bool):
    """Unit-scale bias draws and covariances of one recorded fit, with or without the
    bootstrap correction (and unscaled)."""
    Cs, theta = rec["Cs"], rec["theta"]
    if "kw" in rec:                                           # DP-GD
        bias, cov, _ = idg._gd_model(Cs, theta, rec["sigma2"], **rec["kw"],
                                     corrected=corrected)
        return bias, cov
    p = theta.size
    Hr_inv = np.linalg.inv(Cs + rec["ridge"] * np.eye(p))
    bias = -rec["ridge"] * (np.linalg.inv(Cs) @ theta)
    if corrected:
        bias = ig.debias(bias, -rec["ridge"] * np.linalg.solve(Cs.mean(axis=0), theta))
    return bias, Hr_inv @ Cs @ Hr_inv + rec["priv"](Hr_inv)


def variants(scales) -> dict:
    out = {"old": (False, 1.0)}
    out.update({f"bc*{k:g}": (True, k) for k in scales})
    return out


def run_cell(method: str, ci: int, reps: int, seed: int, scales) -> pd.DataFrame:
    cell, cap, rows = gc.CELLS[ci], {}, []
    _record(cap)
    rng = np.random.default_rng(seed)
    for r in range(reps):
        cap.clear()
        df, beta = gc.simulate(cell, method, rng)
        res = gc.fit(method, df, cell, seed * 1000 + r)
        if not (np.isfinite(res.bse).all() and "M" in cap):
            continue
        err = res.params.to_numpy() - beta
        for name, (corr, k) in variants(scales).items():
            bias, cov = _bias_cov(cap, corr)
            D = ig.error_draws(k * bias, cov, cap["M"], cap["shift"])
            se = np.sqrt(np.diag(_covariance(D)))
            rows += [{"method": method, **cell, "variant": name, "rep": r, "coef": j,
                      "z": err[j] / se[j]} for j in range(err.size)]
    return pd.DataFrame(rows)


def table(fits: pd.DataFrame) -> pd.DataFrame:
    fits = fits.assign(hit=(fits["z"].abs() <= Z).astype(float))
    per = fits.groupby(["method", "cov", "n", "p", "eps", "variant", "coef"], sort=False)
    per = per.agg(cover=("hit", "mean"), z_mean=("z", "mean"), z_sd=("z", "std"),
                  fits=("hit", "size")).reset_index()
    g = per.groupby(["method", "cov", "n", "p", "eps", "variant"], sort=False)
    return g.agg(fits=("fits", "first"), coverage=("cover", "mean"), worst=("cover", "min"),
                 best=("cover", "max"), z_bias=("z_mean", lambda v: v.abs().max()),
                 z_sd_max=("z_sd", "max")).reset_index()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--method", default="glm-dpgd", choices=["glm-dpgd", "glm-auto"])
    ap.add_argument("--cells", default="0,6", help="indices into glm_coverage.CELLS")
    ap.add_argument("--reps", type=int, default=120)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--scales", default="0.85,0.92,1.0")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    scales = [float(s) for s in a.scales.split(",")]
    frames, t0 = [], time.time()
    for ci in (int(c) for c in a.cells.split(",")):
        frames.append(run_cell(a.method, ci, a.reps, a.seed, scales))
        t = table(frames[-1])
        print(f"[{time.time() - t0:6.0f}s] {a.method} cell {ci} {gc.CELLS[ci]}", flush=True)
        print(t.round(3).to_string(index=False), flush=True)
        table(pd.concat(frames)).to_csv(a.out, index=False)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
