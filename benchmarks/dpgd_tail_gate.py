"""Derivation of DP-GD's skewed-tail gate (:data:`dpstats.estimators.inference.dpgd.TAIL_GATE`,
issue 16): which released boxes cut a long tail far enough to move the least-squares slope.

Data-independent simulation, on its own seeds (not the coverage benchmark's): one covariate
from a family of shapes (symmetric: Gaussian, t(5), uniform; skewed: log-normal of several
shape parameters, exponential, chi-square(3); 0/1 at several rates), standardised, label
``y = x + N(0, 1)``, ``dp_lm(method="dpgd")`` at eps 1 with private bounds. Per family and n it
reports the gate's statistics read from the fit's Gram matrix at the released box
(:func:`~dpstats.estimators.inference.dpgd.tail_reach`: the box edges' distance from the
column mean in column sd, far and near side; the exact Gram matrix here: the released one
differs by noise of sd about 1e-3 of its entries at these sizes) and the box's clipping bias:
the slope of ``y`` on the inputs clipped to the released box minus the true slope, relative,
and in units of the non-private OLS standard error (the size that breaks coverage).

    nice -n 10 python benchmarks/dpgd_tail_gate.py --reps 20
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd

import dpstats as dp
import dpstats.estimators.dpgd as est_dpgd
from dpstats.estimators.inference.dpgd import tail_reach


def _std(z):
    return (z - z.mean()) / z.std()


FAMILIES = {
    "gaussian": lambda r, n: r.normal(size=n),
    "t5": lambda r, n: r.standard_t(5, size=n),
    "uniform": lambda r, n: r.uniform(-1, 1, size=n),
    "lognormal0.25": lambda r, n: np.exp(0.25 * r.normal(size=n)),
    "lognormal0.5": lambda r, n: np.exp(0.5 * r.normal(size=n)),
    "lognormal0.75": lambda r, n: np.exp(0.75 * r.normal(size=n)),
    "lognormal1": lambda r, n: np.exp(1.0 * r.normal(size=n)),
    "exponential": lambda r, n: r.exponential(size=n),
    "chisq3": lambda r, n: r.chisquare(3, size=n),
    "binary0.5": lambda r, n: (r.uniform(size=n) < 0.5).astype(float),
    "binary0.3": lambda r, n: (r.uniform(size=n) < 0.3).astype(float),
    "binary0.1": lambda r, n: (r.uniform(size=n) < 0.1).astype(float),
}


def one(family: str, n: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    x = FAMILIES[family](rng, n)
    x = x if family.startswith("binary") else _std(x)
    y = x + rng.normal(size=n)
    got = {}
    orig = est_dpgd.dpgd_inference

    def capture(loss, plan, U, yy, theta, design, s, **kw):
        got.update(U=U[:, list(design.kept)], design=design)
        return orig(loss, plan, U, yy, theta, design, s, **kw)

    est_dpgd.dpgd_inference = capture
    try:
        res = dp.dp_lm("y ~ x", pd.DataFrame({"x": x, "y": y}), eps=1.0, delta=1e-5,
                       method="dpgd", select=None, random_state=seed)
    finally:
        est_dpgd.dpgd_inference = orig
    U = got["U"]
    near, far = tail_reach(U.T @ U, U.shape[1] - 1)
    lo, hi = (float(np.asarray(v, dtype=float)[1]) for v in res.clip)
    xc = np.clip(x, lo, hi)
    slope_box = np.cov(xc, y)[0, 1] / np.var(xc, ddof=1)
    slope = np.cov(x, y)[0, 1] / np.var(x, ddof=1)
    se = np.std(y - slope * x) / (np.std(x) * np.sqrt(n))
    return {"family": family, "n": n, "near": float(near[0]), "far": float(far[0]),
            "ratio": float(far[0] / near[0]), "cut": float(np.mean((x < lo) | (x > hi))),
            "bias_rel": slope_box / slope - 1.0, "bias_se": (slope_box - slope) / se,
            "with_interval": bool(np.isfinite(res.bse.iloc[1]))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--ns", default="5000,20000,100000")
    ap.add_argument("--seed", type=int, default=31_000)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    rows, t0 = [], time.time()
    ns = [int(v) for v in a.ns.split(",")]
    for i, fam in enumerate(FAMILIES):
        for n in ns:
            rows += [one(fam, n, a.seed + 1000 * i + r) for r in range(a.reps)]
            d = pd.DataFrame(rows[-a.reps:])
            print(f"[{time.time() - t0:5.0f}s] {fam:14s} n={n:>7,}: far {d.far.median():5.2f} "
                  f"near {d.near.median():5.2f} ratio {d.ratio.median():5.2f} (min "
                  f"{d.ratio.min():5.2f}) cut {d.cut.median():.4f} slope bias "
                  f"{d.bias_rel.median():+.4f} = {d.bias_se.median():+.2f} OLS se",
                  flush=True)
    d = pd.DataFrame(rows)
    if a.out:
        d.to_csv(a.out, index=False)
    g = d.groupby(["family", "n"], sort=False)
    print(g.agg(far=("far", "median"), near=("near", "median"), ratio_min=("ratio", "min"),
                ratio_med=("ratio", "median"), ratio_max=("ratio", "max"),
                cut=("cut", "median"), bias_rel=("bias_rel", "median"),
                bias_se=("bias_se", "median")).round(3).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
