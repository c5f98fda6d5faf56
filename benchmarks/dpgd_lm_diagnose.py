"""Where dp_lm DP-GD's intervals lose coverage, split by error component (issue 16).

Reads fits recorded by ``dpgd_interval_variants.py --method lm-dpgd --save FILE.pkl`` (each
fit's released inference inputs and, for diagnosis only, the exact Gram matrix ``C`` of its
scaled rows, the fixed point ``t_0`` of its descent: the least-squares fit of the clipped label
on the clipped inputs, and its residual sums of squares). The error of the released
coefficients splits on the original scale (``M`` the fit's map) into

* sampling (and the label clipping's bias): ``orig(t_0) - beta``, against the model's sampling
  sd ``s_0 (M C^-1 M')^(1/2)`` (``s_0^2`` the exact residual variance at ``t_0``);
* the unfinished descent's bias ``b = -M A^T t_0`` (exact ``A = I - (lr / n_hat) C``);
* the propagated gradient noise ``M (t_T - t_0) - b``, against its sd from the exact ``C``.

Per coefficient it prints the released intervals' coverage (``code``: from the recorded
released intervals), mean and sd of ``z``, each component's mean and sd in its predicted sd,
and the coverage of intervals rebuilt with one released input replaced by its exact value
(``oracle-C``: the exact Gram matrix for every plausible one; ``oracle-s``: the exact residual
variance; both are diagnostics, not rules), and the label clip's attenuation estimated from
released values (:mod:`dpstats.estimators.inference.dpgd_label`) against the sampling part's
realised mean.

    python benchmarks/dpgd_lm_diagnose.py FILE.pkl [--only 8,5]

Reads no real data.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import dpstats.estimators.inference.dpgd as D  # noqa: E402
from dpstats.estimators.inference.dpgd_label import clip_bias, label_clip_bias  # noqa: E402
from dpstats.estimators.inference.mixture import Z95, mixture_covariance  # noqa: E402


def _priv_cov(C, kw) -> np.ndarray:
    """Covariance of the propagated gradient noise for the exact ``C`` (unit scale)."""
    lam, Q = np.linalg.eigh(C)
    a = 1.0 - kw["lr"] * lam / kw["n_hat"]
    geo = (1.0 - a ** (2 * kw["T"])) / (1.0 - a * a)
    return (Q * ((kw["lr"] * kw["sigma_g"] / kw["n_hat"]) ** 2 * geo)) @ Q.T


def _se(Cs, theta, sigma2, kw, M) -> np.ndarray:
    """The symmetric interval's standard errors from the given inputs (the code's rule)."""
    bias, cov, _ = D._gd_model(Cs, theta, sigma2, **kw)
    return np.sqrt(np.diag(mixture_covariance(bias, cov, M, np.zeros(M.shape[0]))))


def descent_parts(f: dict) -> SimpleNamespace:
    """A recorded fit's model inputs and the exact descent's pieces: the unit-scale Gram
    matrix ``C``'s eigen-decomposition ``lam, Q``, the contraction ``aT`` after ``T`` steps,
    the descent's exact bias ``b_unit`` and the exact residual variance ``s0``."""
    Cs, theta, sigma2, kw = f["model"]
    ex = f["exact"]
    C, t0 = ex["C"], ex["t0"]
    lam, Q = np.linalg.eigh(C)
    aT = (1.0 - kw["lr"] * lam / kw["n_hat"]) ** kw["T"]
    return SimpleNamespace(Cs=Cs, theta=theta, sigma2=sigma2, kw=kw, ex=ex, M=f["M"],
                           beta=f["beta"], est=f["est"], C=C, t0=t0, lam=lam, Q=Q, aT=aT,
                           b_unit=-(Q * aT) @ Q.T @ t0,
                           s0=ex["rss0"] / max(kw["n_hat"] - len(t0), 1.0))


def split(f: dict) -> dict:
    """One fit's error components and predicted sds (original scale)."""
    d0 = descent_parts(f)
    Cs, theta, sigma2, kw, M, beta, est = d0.Cs, d0.theta, d0.sigma2, d0.kw, d0.M, d0.beta, d0.est
    C, t0, aT, b_unit, s0 = d0.C, d0.t0, d0.aT, d0.b_unit, d0.s0
    lo, hi = (f["ci"][:, 0], f["ci"][:, 1])
    se = (hi - lo) / (2 * Z95)
    b_k = D._gd_model(Cs, theta, sigma2, **kw)[0]
    bias_k = b_k @ M.T
    label = label_clip_bias(Cs, theta[None] - b_k, sigma2, len(theta) - 1) @ M.T
    both = label
    if f.get("design"):
        d = SimpleNamespace(**f["design"])
        both = clip_bias(Cs, theta, b_k, sigma2, d, list(d.kept)) @ M.T
    return {
        "z": ((lo + hi) / 2 - beta) / se, "hit": (lo <= beta) & (beta <= hi),
        "samp": est - M @ (theta - t0) - beta,
        "sd_samp": np.sqrt(np.diag(s0 * M @ np.linalg.inv(C) @ M.T)),
        "bias": M @ b_unit, "plug": bias_k.mean(axis=0), "priv": M @ (theta - t0 - b_unit),
        "sd_priv": np.sqrt(np.diag(M @ _priv_cov(C, kw) @ M.T)), "se": se,
        "s2_ratio": float(np.mean(sigma2) / s0), "aT": float(aT.max()),
        "se_oracle_C": _se(np.repeat(C[None], len(sigma2), 0), theta, sigma2, kw, M),
        "se_oracle_s": _se(Cs, theta, np.full(len(sigma2), s0), kw, M),
        "err": est - beta, "label": label.mean(axis=0), "both": both.mean(axis=0),
        "both_sd": both.std(axis=0),
    }


def report(fits: list[dict]) -> None:
    rows = [split(f) for f in fits]
    g = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    r3 = lambda v: np.round(v, 3).tolist()      # noqa: E731
    print(f"  fits {len(rows)}; max a^T (exact C) median {np.median(g['aT']):.3f}; released "
          f"s^2 / exact (mean) {g['s2_ratio'].mean():.4f}")
    print(f"  code coverage     {r3(g['hit'].mean(0))}  mean {g['hit'].mean():.3f}")
    print(f"  mean z            {r3(g['z'].mean(0))}")
    print(f"  sd z              {r3(g['z'].std(0))}")
    samp = g["samp"] / g["sd_samp"]
    print(f"  sampling / sd: mean {r3(samp.mean(0))} sd {r3(samp.std(0))}")
    priv = g["priv"] / g["sd_priv"]
    print(f"  label clip plug-in / sampling sd: mean {r3((g['label'] / g['sd_samp']).mean(0))}")
    print(f"  label and box plug-in / sampling sd: mean {r3((g['both'] / g['sd_samp']).mean(0))}"
          f" sd over fits {r3((g['both'] / g['sd_samp']).std(0))}, over plausible "
          f"curvatures (median) {r3(np.median(g['both_sd'] / g['sd_samp'], axis=0))}")
    print(f"  gradient noise / sd: mean {r3(priv.mean(0))} sd {r3(priv.std(0))}")
    print(f"  descent bias / se: mean {r3((g['bias'] / g['se']).mean(0))}; plug-in minus "
          f"bias / se: mean {r3(((g['plug'] - g['bias']) / g['se']).mean(0))} sd "
          f"{r3(((g['plug'] - g['bias']) / g['se']).std(0))}")
    tot = np.sqrt(g["sd_samp"] ** 2 + g["sd_priv"] ** 2)
    resid = (g["err"] - g["bias"]) / tot
    print(f"  (error - bias) / exact sd: mean {r3(resid.mean(0))} sd {r3(resid.std(0))}")
    print(f"  released se / exact-model sd (median) {r3(np.median(g['se'] / tot, axis=0))}")
    for k in ("se_oracle_C", "se_oracle_s"):
        hit = np.abs(g["err"]) <= Z95 * g[k]
        print(f"  {k:12s} coverage {r3(hit.mean(0))} mean {hit.mean():.3f}; se / released "
              f"{r3(np.median(g[k] / g['se'], axis=0))}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("--only", default=None)
    a = ap.parse_args(argv)
    for i, fits in pickle.load(open(a.src, "rb")).items():
        if a.only is not None and str(i) not in a.only.split(","):
            continue
        fits = [f for f in fits if f.get("exact")]
        print(f"cell {i}: {len(fits)} fits with intervals")
        if fits:
            report(fits)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
