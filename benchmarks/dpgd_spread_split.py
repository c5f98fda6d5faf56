"""Logistic DP-GD: which part of the interval's width exceeds the realised error, and the plug-in
spread's calibration (issue 16; design-notes.md, "Logistic DP-GD's plug-in spread calibrated").

Reads fits recorded by ``dpgd_interval_variants.py --save`` (each fit's released inference
inputs) and prints per cell, on the original scale, averaged over the fits (x 1e4):

* the error model's parts: the bias plug-in's mean squared (``bias^2``), the plug-ins' spread
  over the plausible curvatures (``spread^2``), sampling (``samp``) and privacy noise
  (``priv``), against the realised error's mean squared and variance over the fits and the
  variance of the bias plug-in over the fits (``var(bm)``: the plug-in's own error, the bias
  being nearly the same in every fit of a cell);
* ``spread^2 / plug-in MSE``: the modelled spread over the realised error of the plug-in
  (``var(bm)`` plus its mean's offset from the realised mean error squared);
* the calibration's factor (:func:`dpstats.estimators.inference.dpgd_spread.spread_scale`,
  10/50/90% over fits) and the symmetric (shipped) and centred (``mean+J``) intervals without
  and with it: coverage (worst-best), per coefficient, median width, mean and sd of ``z``.

    nice -n 10 python benchmarks/dpgd_interval_variants.py --cells 0,5 --reps 200 \\
        --seed-offset 80 --save FILE.pkl
    nice -n 10 python benchmarks/dpgd_spread_split.py FILE.pkl [FILE2.pkl ...]

Fits recorded before the released curvature was saved get it back from the plausible ones
(all 200 positive definite: ``C_k = C_rel - sigma E_k`` with the public draws ``E_k``).
Reads no real data.
"""

from __future__ import annotations

import pickle
import sys

import numpy as np

import dpstats.estimators.inference.dpgd as D
from dpstats.estimators.inference.dpgd_spread import spread_scale
from dpstats.estimators.inference.glm import CURVATURE_DRAWS, SEED
from dpstats.estimators.inference.glm_spread import scale_spread
from dpstats.estimators.inference.mixture import (
    Z95,
    centred_mixture_covariance,
    mixture_covariance,
)
from dpstats.estimators.inference.simulate import symmetric_noise
from dpstats.mechanisms.simulation import simulation_noise


def released(f: dict) -> tuple[np.ndarray, float]:
    """``(C_rel, sigma)`` of a recorded fit."""
    if f.get("released") is not None:
        return f["released"]
    Cs = f["model"][0]
    p = Cs.shape[1]
    if len(Cs) != CURVATURE_DRAWS:
        raise ValueError("fit recorded without its released curvature")
    E = symmetric_noise(simulation_noise({"tri": (CURVATURE_DRAWS, p * (p + 1) // 2)},
                                         seed=SEED)["tri"], p)
    dC, dE = Cs - Cs.mean(axis=0), E - E.mean(axis=0)
    sig = -float(np.sum(dC * dE) / np.sum(dE * dE))
    return (Cs + sig * E).mean(axis=0), sig


def parts(f: dict) -> dict:
    """The error model's parts on the original scale (diagonals, averaged over curvatures)."""
    Cs, th, s2, kw = f["model"]
    M = f["M"]
    bias = D._gd_model(Cs, th, s2, **kw)[0] @ M.T
    lam, Q = np.linalg.eigh(Cs)
    a = 1.0 - kw["lr"] * lam / kw["n_hat"]
    priv = (kw["lr"] * kw["sigma_g"] / kw["n_hat"]) ** 2 * (1 - a ** (2 * kw["T"])) / (1 - a * a)

    def diag(d):
        V = np.einsum("ij,kjl,ml->kim", M, np.einsum("kij,kj,klj->kil", Q, d, Q), M)
        return np.einsum("kii->ki", V).mean(axis=0)

    return dict(bm=bias.mean(0), b2=bias.var(0), samp=diag(s2[:, None] / lam), priv=diag(priv),
                err=f["est"] - f["beta"])


def intervals(f: dict, calibrated: bool) -> tuple[dict, np.ndarray]:
    """``{rule: (lo, hi)}`` of the error under the symmetric and the centred rule; the factor."""
    Cs, th, s2, kw = f["model"]
    M, q = f["M"], f["M"].shape[0]
    bias, cov, _ = D._gd_model(Cs, th, s2, **kw)
    rho = np.ones(th.size)
    if calibrated:
        C, sig = released(f)
        rho = spread_scale(C, Cs, th, sig, lr=kw["lr"], T=kw["T"], n_hat=kw["n_hat"],
                           gate=D.MAX_LEFT["logistic"])
        bias = scale_spread(bias, rho)
    se = np.sqrt(np.diag(mixture_covariance(bias, cov, M, np.zeros(q))))
    out = {"sym": (-Z95 * se, Z95 * se)}
    covj = D._gd_model(Cs, th, s2, **{**kw, "replug": True, "corrected": False})[1]
    cc, c = centred_mixture_covariance(bias, covj, M, np.zeros(q))
    se = np.sqrt(np.diag(cc))
    out["mean+J"] = (c - Z95 * se, c + Z95 * se)
    return out, rho


def report(fits: list[dict], res: list, label: str) -> None:
    for rule in ("sym", "mean+J"):
        hit, w, z = [], [], []
        for f, (o, _) in zip(fits, res, strict=True):
            lo, hi = o[rule]
            err = f["est"] - f["beta"]
            hit.append((lo <= err) & (err <= hi))
            w.append(hi - lo)
            z.append((err - (lo + hi) / 2) / ((hi - lo) / (2 * Z95)))
        hit, w, z = np.mean(hit, 0), np.median(w, 0), np.array(z)
        print(f"  {label:10s} {rule:7s} coverage {hit.mean():.3f} ({hit.min():.3f}-"
              f"{hit.max():.3f}) {hit.round(3).tolist()} width {w.round(4).tolist()} "
              f"mean z {z.mean(0).round(2).tolist()} sd z {z.std(0).round(2).tolist()}",
              flush=True)


def main(argv=None) -> int:
    for src in argv if argv is not None else sys.argv[1:]:
        for cell, fits in pickle.load(open(src, "rb")).items():
            if not fits:
                continue
            P = [parts(f) for f in fits]
            err, bm, b2, samp, priv = (np.array([p[k] for p in P])
                                       for k in ("err", "bm", "b2", "samp", "priv"))
            s = lambda x: (1e4 * x).round(2).tolist()  # noqa: E731
            Kw = fits[0]["model"][3]
            print(f"== {src} cell {cell}: {len(fits)} fits with intervals, n_hat "
                  f"{Kw['n_hat']:,.0f}, T {Kw['T']}")
            print(f"  model: bias^2 {s(bm.mean(0) ** 2)} spread^2 {s(b2.mean(0))} samp "
                  f"{s(samp.mean(0))} priv {s(priv.mean(0))}")
            print(f"  realised: mean^2 {s(err.mean(0) ** 2)} var {s(err.var(0))}; var(bm) "
                  f"{s(bm.var(0))}")
            plug_mse = bm.var(0) + (np.abs(bm.mean(0)) - np.abs(err.mean(0))) ** 2
            print(f"  spread^2 / plug-in MSE {np.round(b2.mean(0) / plug_mse, 2).tolist()}; "
                  f"var(err) / (samp + priv) {np.round(err.var(0) / (samp + priv).mean(0), 2)}"
                  .replace("\n", ""))
            before = [intervals(f, False) for f in fits]
            after = [intervals(f, True) for f in fits]
            rho = np.array([r[1] for r in after])
            print(f"  factor 10/50/90%: {np.quantile(rho, [0.1, 0.5, 0.9], 0).round(2).tolist()}")
            report(fits, before, "before")
            report(fits, after, "calibrated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
