"""Reproduce 001 Section 4: can a private screening rule tell true zeros from true non-zeros?

Synthetic design of 001 (after Raj et al.): n x d standard normal, scaled by its largest |entry|
so that every |x_ij| <= 1; a true weight vector with k entries +1 and k entries -1 (001:
n = 3000, d = 600, k = 35); y = X w* (linear) or 1{X w* > 0} (logistic). Budget as in 001:
eps1 = eps2 = 2.5 (Frank-Wolfe / screening), delta1 = delta2 = 1/6000, lambda = 5, T = 1000,
screening after every iteration, every 50th, or only the last.

For the squared loss y is divided by max|y| (dpstats needs |y| <= 1 for its sensitivities; the
scale is treated as public here, like 001's own scaling of X). No intercept.

Rows of the table (each a mean over repetitions):

* ``dpstats``        private FW + dpstats' private rule (noisy components, sound accounting);
* ``001``            private FW + the rule as printed in 001 (Eq. 1) with Gaussian noise of
                     001's Eq. (2)/(3) sensitivity and 001's per-iteration budget. **Not a valid
                     DP guarantee** (see dpstats.estimators.screening); shown to reproduce 001;
* ``A``              001's experiment A: private FW + non-private rule (dpstats' safe form);
* ``B dpstats``      001's experiment B: non-private FW + dpstats' private rule;
* ``B 001``          experiment B with 001's noisy rule;
* ``nonprivate``     non-private FW + non-private safe rule (001's sanity check);
* ``nonprivate Eq1`` non-private FW + Eq. (1) exactly as printed (no factor lambda; not safe for
                     lambda != 1).

Columns: ``zero_flag`` / ``nonzero_flag``: share of true zeros / true non-zeros flagged by the
rule at the last screening; ``zero_ever`` / ``nonzero_ever``: flagged at least once;
``zero_final`` share of true zeros that are 0 in the final w; ``nonzero_kept`` share of true
non-zeros that are non-zero in the final w; ``support`` final number of non-zeros; ``gap``
final Wolfe gap in 001's mean form (G / n). A rule discriminates when ``zero_flag`` clearly
exceeds ``nonzero_flag``.

Usage: ``python benchmarks/screening_001.py [--quick] [--reps R]``; writes
``benchmarks/results/screening_001.csv`` (``--quick``: ``screening_001_quick.csv``).
"""

from __future__ import annotations

import argparse
import math
import pathlib
import time

import numpy as np
import pandas as pd

from dpstats._kernels.frank_wolfe import loss_gradient
from dpstats.estimators.fw import (
    estimate,
    frank_wolfe,
    fw_iteration_eps,
    score_sensitivity,
    screen_iterations,
)
from dpstats.estimators.screening import (
    ExactScreener,
    PrivateScreener,
    curvature,
    paper_iteration_budget,
    paper_sensitivity,
    screen_plan,
)
from dpstats.mechanisms import exponential, gaussian
from dpstats.mechanisms.accountant import Ledger

EPS1 = EPS2 = 2.5
DELTA1 = DELTA2 = 1 / 6000
RADIUS = 5.0
VARIANTS = [  # (name, private FW?, rule)
    ("dpstats", True, "dpstats"), ("001", True, "paper"), ("A", True, "exact"),
    ("B dpstats", False, "dpstats"), ("B 001", False, "paper"),
    ("nonprivate", False, "exact"), ("nonprivate Eq1", False, "printed"),
]


def make_data(n: int, d: int, k: int, loss: str, rng: np.random.Generator):
    X = rng.standard_normal((n, d))
    X /= np.abs(X).max()
    w = np.zeros(d)
    idx = rng.choice(d, 2 * k, replace=False)
    w[idx[:k]], w[idx[k:]] = 1.0, -1.0
    z = X @ w
    t = np.where(z > 0, 1.0, -1.0) if loss == "logistic" else z / np.abs(z).max()
    return X, np.ascontiguousarray(X.T), t, w


class PrintedRule:
    """001's Eq. (1) as printed, sum form: |a_i| + B + L (||x_i|| + ||u||) sqrt(G / mu); with
    ``noise`` Gaussian noise of 001's sensitivity at 001's per-iteration budget."""

    def __init__(self, Xt, loss, k, rng, noise: bool):
        self.c = np.sqrt(np.einsum("ij,ij->i", Xt, Xt))
        self.L, self.mu = curvature(loss, RADIUS)
        self.s = paper_sensitivity(loss, RADIUS, Xt.shape[0])
        self.e, self.dl = paper_iteration_budget(EPS2, DELTA2, k)
        self.rng, self.noise = rng, noise

    def __call__(self, u, g, r):
        B = float(u @ r)
        G = max(B + RADIUS * np.abs(g).max(), 0.0)
        R = np.abs(g) + B + self.L * (self.c + math.sqrt(u @ u)) * math.sqrt(G / self.mu)
        return gaussian(R, self.s, self.e, self.dl, self.rng, None) if self.noise else R


class Recorder:
    """Wraps a screener and records which features were ever flagged."""

    def __init__(self, inner, d):
        self.inner, self.ever = inner, np.zeros(d, dtype=bool)

    def __call__(self, u, g, r):
        R = np.asarray(self.inner(u, g, r))
        self.ever |= R < 0
        return R


def run_one(X, Xt, t, w_true, loss, schedule, variant, T, rng):
    _, private_fw, rule = variant
    d = Xt.shape[0]
    at = screen_iterations(schedule, T)
    if private_fw:
        e_it, _ = fw_iteration_eps(EPS1, DELTA1, T)
        sens = score_sensitivity(loss, RADIUS)
        def choose(s):
            return exponential(-s, sens, e_it, rng, None)
    else:
        choose = np.argmin
    if rule == "dpstats":
        inner = PrivateScreener(Xt, loss, RADIUS, screen_plan(EPS2, DELTA2, len(at), loss,
                                                              RADIUS, d), rng, None)
    elif rule == "exact":
        inner = ExactScreener(Xt, loss, RADIUS)
    else:
        inner = PrintedRule(Xt, loss, len(at), rng, noise=(rule == "paper"))
    rec = Recorder(inner, d)
    w, mask = frank_wolfe(Xt, t, loss=loss, radius=RADIUS, T=T, choose=choose, screen_at=at,
                          screener=rec)
    u = X @ w
    g, r = loss_gradient(Xt, u, t, loss)
    gap = (float(u @ r) + RADIUS * np.abs(g).max()) / X.shape[0]
    z, nz = w_true == 0, w_true != 0
    return {"zero_flag": mask[z].mean(), "nonzero_flag": mask[nz].mean(),
            "zero_ever": rec.ever[z].mean(), "nonzero_ever": rec.ever[nz].mean(),
            "zero_final": (w[z] == 0).mean(), "nonzero_kept": (w[nz] != 0).mean(),
            "support": int((w != 0).sum()), "gap": gap}


def noise_table(X, Xt, t, loss, T, schedules):
    """Noise scale of each rule against the spread of the exact statistic at a FW solution."""
    w, _ = frank_wolfe(Xt, t, loss=loss, radius=RADIUS, T=T, choose=np.argmin)
    u = X @ w
    g, r = loss_gradient(Xt, u, t, loss)
    R = ExactScreener(Xt, loss, RADIUS)(u, g, r)
    d = Xt.shape[0]
    rows = []
    for sched in schedules:
        k = len(screen_iterations(sched, T))
        plan = screen_plan(EPS2, DELTA2, k, loss, RADIUS, d)
        e, dl = paper_iteration_budget(EPS2, DELTA2, k)
        s001 = paper_sensitivity(loss, RADIUS, d)
        rows.append({"loss": loss, "schedule": str(sched), "releases": k,
                     "dpstats_eps_iter": plan.eps_iter, "dpstats_sigma": plan.sigma,
                     "dpstats_composition": plan.composition, "001_eps_iter": e,
                     "001_sigma": s001 * math.sqrt(2 * math.log(1.25 / dl)) / e,
                     "R_exact_median_abs": float(np.median(np.abs(R))),
                     "R_exact_spread": float(R.max() - R.min())})
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n=600, d=120, k=7, T=200, 1 rep")
    ap.add_argument("--reps", type=int, default=None, help="repetitions (default 3, quick 1)")
    args = ap.parse_args()
    n, d, k, T = (600, 120, 7, 200) if args.quick else (3000, 600, 35, 1000)
    schedules = ("every", 50 if not args.quick else 10, "last")
    reps = args.reps or (1 if args.quick else 3)
    rows, noise = [], []
    t0 = time.perf_counter()
    for loss in ("squared", "logistic"):
        for rep in range(reps):
            X, Xt, t, w_true = make_data(n, d, k, loss, np.random.default_rng(1000 + rep))
            if rep == 0:
                noise.append(noise_table(X, Xt, t, loss, T, schedules))
            for j, sched in enumerate(schedules):
                for i, variant in enumerate(VARIANTS):
                    rng = np.random.default_rng([rep, i, j, loss == "logistic"])
                    res = run_one(X, Xt, t, w_true, loss, sched, variant, T, rng)
                    rows.append({"loss": loss, "schedule": str(sched), "variant": variant[0],
                                 "rep": rep, **res})
    df = pd.DataFrame(rows)
    # the library entry point spends exactly the stated budget
    X, Xt, t, _ = make_data(n, d, k, "squared", np.random.default_rng(0))
    led = Ledger()
    estimate(X, t, eps=EPS1 + EPS2, delta=DELTA1 + DELTA2, rng=np.random.default_rng(1),
             ledger=led, radius=RADIUS, T=T, screen=schedules[1], bounds=(-1.0, 1.0))
    out = pathlib.Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    name = "screening_001_quick.csv" if args.quick else "screening_001.csv"
    df.to_csv(out / name, index=False)
    pd.set_option("display.width", 160)
    cols = ["zero_flag", "nonzero_flag", "zero_ever", "nonzero_ever", "zero_final",
            "nonzero_kept", "support", "gap"]
    order = {v[0]: i for i, v in enumerate(VARIANTS)}
    for loss in ("squared", "logistic"):
        tab = (df[df.loss == loss].groupby(["schedule", "variant"], sort=False)[cols].mean()
               .reset_index())
        tab = tab.sort_values(["schedule", "variant"], key=lambda s: s.map(order)
                              if s.name == "variant" else s, kind="stable")
        print(f"\n== {loss} loss: n={n}, d={d}, {2 * k} true non-zeros, lambda={RADIUS:g}, "
              f"T={T}, eps1=eps2={EPS1}, delta1=delta2=1/6000, {reps} rep(s) ==")
        print(tab.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print("\n== noise of one screening release vs the exact rule statistic (sum form) ==")
    print(pd.concat(noise).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    e, dl = led.spent
    print(f"\nledger of dpstats' estimate(screen={schedules[1]!r}): eps={e:.6g}, "
          f"delta={dl:.6g} (asked {EPS1 + EPS2}, {DELTA1 + DELTA2:.6g}); "
          f"{time.perf_counter() - t0:.0f} s; CSV: {out / name}")


if __name__ == "__main__":
    main()
