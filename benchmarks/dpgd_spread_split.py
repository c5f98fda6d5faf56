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
  and with it: coverage (worst-best), per coefficient, median width, mean and sd of ``z``;
* with ``--selection``, also the symmetric interval calibrated and with the plug-ins' mean moved
  by the convergence gate's selection one level down (:func:`selection_shift`).

    nice -n 10 python benchmarks/dpgd_interval_variants.py --cells 0,5 --reps 200 \\
        --seed-offset 80 --save FILE.pkl
    nice -n 10 python benchmarks/dpgd_spread_split.py FILE.pkl [FILE2.pkl ...] [--selection]

Fits recorded before the released curvature was saved get it back from the plausible ones
(all 200 positive definite: ``C_k = C_rel - sigma E_k`` with the public draws ``E_k``).
Reads no real data.
"""

from __future__ import annotations

import pickle
import sys

import numpy as np

import dpstats.estimators.inference.dpgd as D
from dpstats.estimators.inference.dpgd_spread import descent_plugins, spread_scale
from dpstats.estimators.inference.glm import CURVATURE_DRAWS, SEED
from dpstats.estimators.inference.glm_spread import scale_spread
from dpstats.estimators.inference.mixture import (
    Z95,
    centred_mixture_covariance,
    mixture_covariance,
)
from dpstats.estimators.inference.simulate import symmetric_noise
from dpstats.mechanisms.simulation import released_seed, simulation_noise


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


def selection_shift(f: dict, draws: int = 200, inner: int = 60) -> tuple[np.ndarray, float]:
    """The gate's selection one level down: with ``C_rel`` as the truth, draws ``C_rel - E``
    kept where all of their own first ``inner`` plausible curvatures (the public draws) are
    positive definite with ``a^T`` at most ``MAX_LEFT``; the selected draws' mean plug-in minus
    all draws' (scaled as the model's), and the share kept."""
    Cs, th, s2, kw = f["model"]
    C, sig = released(f)
    p, k = th.size, dict(lr=kw["lr"], T=kw["T"], n_hat=kw["n_hat"])
    tri = simulation_noise({"t": (draws, p * (p + 1) // 2)},
                           seed=released_seed(C, sig, th, salt=41))["t"]
    Cp = C[None] - sig * symmetric_noise(tri, p)
    Ek = sig * symmetric_noise(simulation_noise({"tri": (CURVATURE_DRAWS, p * (p + 1) // 2)},
                                                seed=SEED)["tri"], p)[:inner]
    ok = np.linalg.eigvalsh(Cp)[:, 0] > 0
    lam = np.linalg.eigvalsh((Cp[:, None] - Ek[None]).reshape(-1, p, p)).reshape(draws, inner, p)
    left = np.max(np.abs(1.0 - k["lr"] * lam / k["n_hat"]) ** k["T"], axis=(1, 2))
    sel = ok & (lam[..., 0].min(axis=1) > 0) & (left <= D.MAX_LEFT["logistic"])
    if sel.sum() < 10:
        return np.zeros(p), float(sel.sum() / max(ok.sum(), 1))
    b_all, b_sel = (descent_plugins(Cp[m], th, **k).mean(axis=0) for m in (ok, sel))
    return kw.get("bias_scale", 1.0) * (b_sel - b_all), float(sel.sum() / ok.sum())


def intervals(f: dict, calibrated: bool, selection: bool = False) -> tuple[dict, np.ndarray]:
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
    if selection:
        bias = bias - selection_shift(f)[0]
    se = np.sqrt(np.diag(mixture_covariance(bias, cov, M, np.zeros(q))))
    out = {"sym": (-Z95 * se, Z95 * se)}
    covj = D._gd_model(Cs, th, s2, **{**kw, "replug": True, "corrected": False})[1]
    cc, c = centred_mixture_covariance(bias, covj, M, np.zeros(q))
    se = np.sqrt(np.diag(cc))
    out["mean+J"] = (c - Z95 * se, c + Z95 * se)
    return out, rho


def report(fits: list[dict], res: list, label: str) -> None:
    for rule in res[0][0]:
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
    argv = list(argv if argv is not None else sys.argv[1:])
    selection = "--selection" in argv
    for src in (a for a in argv if a != "--selection"):
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
            if selection:
                sel = [(intervals(f, True, True)[0], None) for f in fits]
                report(fits, [({"sym": o["sym"]}, r) for o, r in sel], "cal+select")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
