"""Where dp_glm's default centre (``params - bias``) sits against the non-private fit, part by
part (issue 16, design note 73): ``glm_intercept_design.py``'s design (n = 20,000, p = 5,
Gaussian covariates, slopes 1, -1/2, ...; intercept and eps as options), over the fits that
release intervals. All in the fit's released standard errors, means over fits:

* ``z``: centre minus the truth; ``z_vs_mle``: centre minus the non-private MLE;
* ``box``: the unpenalised fit on the clipped, unit-scaled rows minus the MLE (the box's move);
* ``ridge_resid``: what the first-order plug-in ``-r C^-1 t_r`` leaves of the ridge's exact
  bias ``t_r - t_0`` (noise-free ridge fit ``t_r``, exact ``C`` at it);
* ``plug_noise``: the plug-in at the exact information minus at the released one (both at the
  released coefficients);
* ``tail_est``: the cut tails' estimated move that the centre removes (:mod:`.glm_tail`,
  mean over the plausible informations), to set against ``box``;
* ``noise_2nd``: the second-order effect of the objective's noise ``b`` through the loss's
  third derivative, ``-1/2 Hr^-1 sum_i w3_i u_i u_i' S u_i`` (``S = s^2 Hr^-2``).

Reads the fit's internals (the unit-scaled rows, the released information) by wrapping
``objpert.perturbation_inference``: a diagnostic, nothing here is a release.

    nice -n 10 python benchmarks/glm_intercept_decompose.py --intercept 1 --eps 0.5 --reps 200
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import statsmodels.api as sm
from glm_intercept_design import P, design_fit

import dpstats.estimators.inference.glm as glm
import dpstats.estimators.objpert as objpert
from dpstats.estimators.inference.glm import fitted_map

KEYS = ("z", "z_vs_mle", "box", "tail_est", "ridge_resid", "plug_noise", "noise_2nd")


def _newton(U, y, r):
    t = np.zeros(U.shape[1])
    for _ in range(50):
        pr = 1 / (1 + np.exp(-U @ t))
        H = (U * (pr * (1 - pr))[:, None]).T @ U + r * np.eye(t.size)
        t = t - np.linalg.solve(H, U.T @ (pr - y) + r * t)
    return t


def _info(U, t):
    pr = 1 / (1 + np.exp(-U @ t))
    w = pr * (1 - pr)
    return (U * w[:, None]).T @ U, w * (1 - 2 * pr)


def one_fit(b0: float, eps: float, rep: int, cap: dict) -> dict | None:
    cap["tail"] = 0.0       # no cut tail's move (glm_tail gave none)
    X, y, beta, fit = design_fit(b0, eps, rep)
    se = fit.bse.to_numpy()
    if not np.isfinite(se).all():
        return None
    U, th, r, M, s = cap["U"], cap["theta"], cap["ridge"], cap["M"], cap["s"]
    tr, t0 = _newton(U, y, r), _newton(U, y, 0.0)
    C, _ = _info(U, tr)
    Ck, w3 = _info(U, th)
    Cr = (cap["C_rel"] + cap["C_rel"].T) / 2
    Hi = np.linalg.inv(Ck + r * np.eye(th.size))
    q = np.einsum("ij,jk,ik->i", U, s**2 * Hi @ Hi, U)
    mle = np.asarray(sm.Logit(y, sm.add_constant(X)).fit(disp=0).params)
    c = fit.params_bias_corrected.to_numpy()
    return {"z": (c - beta) / se, "z_vs_mle": (c - mle) / se, "box": (M @ t0 - mle) / se,
            "ridge_resid": M @ (tr - t0 + r * np.linalg.solve(C, tr)) / se,
            "plug_noise": M @ (r * np.linalg.solve(Cr, th) - r * np.linalg.solve(Ck, th)) / se,
            "tail_est": M @ (cap["tail"] * np.ones(th.size)) / se,
            "noise_2nd": M @ (-0.5 * Hi @ (U.T @ (w3 * q))) / se}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--intercept", type=float, default=1.0)
    ap.add_argument("--eps", type=float, default=0.5)
    ap.add_argument("--reps", type=int, default=200)
    a = ap.parse_args(argv)
    cap: dict = {}
    real, real_tail = objpert.perturbation_inference, glm.tail_bias

    def tail_spy(Cs, g):
        out = real_tail(Cs, g)
        cap["tail"] = out.mean(axis=0)
        return out

    def spy(kind, U, theta_k, design, kept, to_original, *args, release, **kw):
        def rel(V, w):
            C, sig = release(V, w)
            cap["C_rel"] = C
            return C, sig
        cap.update(U=U, theta=np.asarray(theta_k), ridge=kw["ridge"], s=kw["noise"]["s"],
                   M=fitted_map(to_original, list(kept), design.mid.size))
        return real(kind, U, theta_k, design, kept, to_original, *args, release=rel, **kw)
    objpert.perturbation_inference, glm.tail_bias = spy, tail_spy
    try:
        rows = [r for r in (one_fit(a.intercept, a.eps, i, cap) for i in range(a.reps)) if r]
    finally:
        objpert.perturbation_inference, glm.tail_bias = real, real_tail
    names = ["Intercept"] + [f"x{j + 1}" for j in range(P)]
    t = pd.DataFrame({k: np.mean([r[k] for r in rows], axis=0) for k in KEYS}, index=names)
    t["z_se"] = np.std([r["z"] for r in rows], axis=0, ddof=1) / np.sqrt(len(rows))
    print(f"intercept {a.intercept}, eps {a.eps}: {len(rows)} of {a.reps} fits with intervals")
    print(t.to_string(float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
