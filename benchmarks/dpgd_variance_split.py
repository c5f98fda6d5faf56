"""Where the variance of dp_lm(method="dpgd")'s released coefficients comes from, against what
its interval assumes (issue 16): per coefficient, the realised variance over replications of
the sampling part (the noise-free descent's end on the same released box and count, minus the
model's coefficient), of the privacy part (released minus that noise-free end), and of the
whole error, beside the interval's modelled sampling and privacy variances (the bootstrap's
own parts, averaged over fits) and its standard error.

Data-independent simulation: the cells of benchmarks/glm_coverage.py (``lm-dpgd``) with a seed
of its own (``--seed``). A diagnosis, not the shipped rule: nothing here changes a release.

    nice -n 10 python benchmarks/dpgd_variance_split.py --reps 200 p=1
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

import dpstats.estimators.dpgd as est_dpgd  # noqa: E402
import dpstats.estimators.inference.dpgd as inf_dpgd  # noqa: E402
from dpstats.estimators.inference.mixture import Z95, mixture_half_width  # noqa: E402


def _spies(cap: dict):
    """Wrap the inference's entry, its model and its standard errors to record their inputs."""
    infer, model, draws = (est_dpgd.dpgd_inference, inf_dpgd._gd_model,
                           inf_dpgd.mixture_covariance)

    def spy_infer(loss, plan, U, y, theta, design, s, **kw):
        cap.update(U=U, y=y, design=design, theta=np.asarray(theta), **kw)
        return infer(loss, plan, U, y, theta, design, s, **kw)

    def spy_model(Cs, theta, sigma2, **kw):
        out = model(Cs, theta, sigma2, **kw)
        samp = model(Cs, theta, sigma2, **{**kw, "sigma_g": 0.0})[1]
        priv = model(Cs, theta, 0.0 * sigma2, **kw)[1]
        cap.update(samp=samp.mean(axis=0), priv=priv.mean(axis=0), sigma2=sigma2.mean(),
                   bias=out[0])
        return out

    def spy_draws(bias, cov, M, shift, **kw):
        cap["M"] = M
        return draws(bias, cov, M, shift, **kw)

    est_dpgd.dpgd_inference, inf_dpgd._gd_model, inf_dpgd.mixture_covariance = \
        spy_infer, spy_model, spy_draws


def _minimiser(Uk, y, loss: str) -> np.ndarray:
    """The exact minimiser of the sum loss on the released box (diagnosis only)."""
    if loss == "squared":
        return np.linalg.lstsq(Uk, y, rcond=None)[0]
    t = np.zeros(Uk.shape[1])
    for _ in range(50):
        s = 0.5 * (1.0 + np.tanh(0.5 * (Uk @ t)))
        t -= np.linalg.solve((Uk * (s * (1 - s))[:, None]).T @ Uk, Uk.T @ (s - y))
    return t


def _noise_free(cap: dict, loss: str) -> tuple[np.ndarray, np.ndarray]:
    """The same descent without noise, on the released box and count, and the minimiser
    there (original scale)."""
    d, kept = cap["design"], list(cap["design"].kept)
    Uk, y = cap["U"][:, kept], cap["y"]
    t = np.zeros(len(kept))
    for _ in range(cap["T"]):
        t -= cap["lr"] * est_dpgd._gradient_sum(Uk, y, t, loss, 1.0) / cap["n_hat"]

    def full(v):
        out = np.zeros(d.mid.size)
        out[kept] = v
        return cap["to_original"](out)
    return full(t), full(_minimiser(Uk, y, loss))


def _run(a) -> tuple[pd.DataFrame, str]:
    """Fit ``a.reps`` replications and record, per fit and coefficient, the released and
    noise-free values and the interval's modelled parts."""
    cell = dict(gc.CENTRE)
    for kv in a.cell:
        k, v = kv.split("=")
        cell[k] = v if k == "cov" else type(gc.CENTRE[k])(v)
    cap: dict = {}
    _spies(cap)
    rng = np.random.default_rng(a.seed)
    rows, t0 = [], time.time()
    for r in range(a.reps):
        cap.clear()
        df, beta = gc.simulate(cell, a.method, rng)
        res = gc.fit(a.method, df, cell, a.seed * 1000 + r)
        if "M" not in cap:
            continue
        M = cap["M"]
        samp_m = np.diag(M @ cap["samp"] @ M.T)
        priv_m = np.diag(M @ cap["priv"] @ M.T)
        loss = "logistic" if a.method.startswith("glm") else "squared"
        nf, star = _noise_free(cap, loss)
        bias_k = cap["bias"] @ M.T
        est, bse = res.params.to_numpy(), res.bse.to_numpy()
        rows += [{"rep": r, "j": j, "beta": beta[j], "est": est[j], "bse": bse[j],
                  "nf": nf[j], "star": star[j],
                  "bias_m": bias_k[:, j].mean(), "bias_sd": bias_k[:, j].std(),
                  "samp_m": samp_m[j], "priv_m": priv_m[j], "n_hat": cap["n_hat"],
                  "half": cap["design"].half[j] if j else np.nan,
                  "y_half": cap["design"].y_half} for j in range(len(beta))]
        if (r + 1) % 25 == 0:
            print(f"  {r + 1}/{a.reps} fits, {time.time() - t0:.0f}s", flush=True)
    d = pd.DataFrame(rows)
    return d, f"{cell} {a.method}, reps {a.reps}, seed {a.seed}, {time.time() - t0:.0f}s"


def summarise(d: pd.DataFrame) -> pd.DataFrame:
    """Per coefficient: realised variances against the modelled ones, and the intervals of an
    alternative rule on the same fits: centred at the estimate minus the bias plug-in, half
    width 1.96 sd of the model's sampling, privacy and bias-plug-in spread (``db_*``); and the
    estimate-centred interval without the plug-in's spread (``no_spread_cover``).
    A per-fit CSV from before the bias columns were recorded reads as if they were 0 and the
    box minimiser were the noise-free end (squared loss, converged)."""
    d = d.assign(**{c: d.get(c, 0.0) for c in ("bias_m", "bias_sd")})
    d["star"] = d["star"] if "star" in d else d["nf"]
    d = d.assign(err=d.est - d.beta, samp=d.star - d.beta, noise=d.est - d.nf,
                 descent=d.nf - d.star, perr=d.bias_m - (d.nf - d.star))
    d["cover"] = d.err.abs() <= Z95 * d.bse
    sd_db = np.sqrt(d.samp_m + d.priv_m + d.bias_sd ** 2)
    d["z_db"] = (d.err - d.bias_m) / sd_db
    d["half_db"] = Z95 * sd_db
    # the estimate-centred interval without the plug-in's spread (one Gaussian per fit)
    d["half_ns"] = mixture_half_width(d.bias_m.to_numpy()[None],
                                      np.sqrt(d.samp_m + d.priv_m).to_numpy()[None])
    g = d.groupby("j")
    return pd.DataFrame({
        "fits": g.size(), "cover": g.cover.mean(), "mean_z": g.apply(
            lambda x: (x.err / x.bse).mean()), "sd_z": g.apply(lambda x: (x.err / x.bse).std()),
        "var_err": g.err.var(), "model_total": g.apply(lambda x: (x.samp_m + x.priv_m).mean()),
        "bse2": g.apply(lambda x: (x.bse ** 2).mean()),
        "var_samp": g.samp.var(), "model_samp": g.samp_m.mean(),
        "var_noise": g.noise.var(), "model_noise": g.priv_m.mean(),
        "descent": g.descent.mean(), "model_bias": g.bias_m.mean(),
        "var_plugin_err": g.perr.var(),
        "model_bias_var": g.apply(lambda x: (x.bias_sd ** 2).mean()),
        "half": g.apply(lambda x: (Z95 * x.bse).median()),
        "db_cover": g.apply(lambda x: (x.z_db.abs() <= Z95).mean()),
        "db_mean_z": g.z_db.mean(), "db_sd_z": g.z_db.std(), "db_half": g.half_db.median(),
        "no_spread_cover": g.apply(lambda x: (x.err.abs() <= x.half_ns).mean())})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--seed", type=int, default=77)
    ap.add_argument("--out", default=None)
    ap.add_argument("--method", default="lm-dpgd", choices=("lm-dpgd", "glm-dpgd"))
    ap.add_argument("--from", dest="src", default=None,
                    help="summarise the per-fit CSV of an earlier run (--out) instead of fitting")
    ap.add_argument("cell", nargs="*", help="changes to glm_coverage's centre, e.g. p=1")
    a = ap.parse_args(argv)
    if a.src:
        d = pd.read_csv(a.src)
        head = f"{a.src}, {d.rep.nunique()} fits"
    else:
        d, head = _run(a)
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        print(head)
        print(summarise(d).to_string(float_format=lambda v: f"{v:.4g}"))
        print("first slope's sampling part (box minimiser - model) by the released box "
              "(x half-width, label half-width):")
        x = d[d.j == 1].assign(samp=lambda t: t.get("star", t.nf) - t.beta)
        print(x.groupby([x.half.round(3), x.y_half.round(3)]).samp.agg(
            ["size", "mean", "var"]).to_string(float_format=lambda v: f"{v:.3g}"))
    if a.out:
        d.to_csv(a.out, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
