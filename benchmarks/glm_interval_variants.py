"""How dp_glm's objective-perturbation intervals are built, variant by variant, on the same fits
(issue 16; design-notes.md, "dp_glm's intervals centred").

Runs ``glm_coverage.py``'s cells (the same seeds as ``coverage.py --families glm``) with the
default ``dp_glm`` (objective perturbation), records each fit's released inference inputs
(what :func:`dpstats.estimators.inference.glm.glm_inference` receives: the released Fisher
information and its noise sd, the released coefficients, the ridge and noise scales, the map to
the original scale, the threshold, the cut tails' plausible scores), then rebuilds the
intervals from those released values under each variant and reports per coefficient the
coverage of the model's coefficients and the median width relative to the ``sym`` variant:

* ``sym``: symmetric about the coefficient, half-width the 95% quantile of ``|D|`` (the error
  draws, bias included), the rule before;
* ``basic``: the basic bootstrap interval ``[params - Q(0.975), params - Q(0.025)]``, centred
  at the coefficient minus the draws' bias, with the ridge minimiser's spread;
* ``basic+J``: the same with the bias-corrected estimate's spread (``(I + r C^-1)`` times the
  ridge minimiser's error, :func:`~dpstats.estimators.inference.glm._ridge_model`);
* ``adopted``: ``basic+J`` unless a cut tail's move enters or the plug-in is unstable (then
  ``sym``): note 59's rule, with its fixed-seed draws;
* ``code``: the code's own :func:`~dpstats.estimators.inference.glm.glm_inference` on the
  recorded inputs (exact mixture quantiles, seeds from the released values, the spread at the
  released information; the cut tails' draws as recorded). A fit it gates counts as a miss.

``--save PREFIX`` pickles each cell's recorded fits (``PREFIX_cellI.pkl``), ``--load PREFIX``
evaluates them again without refitting; the recorded fits also hold the cut tails' plausible
scores under two other seeds (``tail1``, ``tail2``) and the released box's counts past it
(``box``, :func:`box_record`).

Diagnosis only (``--diagnose``): the exact, non-private fits of each replication's clipped
rows (unpenalised and ridge-only) split the realised error into the ridge's shrinkage, the
privacy noise and the clipped fit's error, against the plug-ins.

    nice -n 10 python benchmarks/glm_interval_variants.py --cells 3,0 --reps 500

(``--cells``: indices into ``glm_coverage.CELLS``: 0 centre, 2 n = 100,000, 3 p = 1,
5 eps 0.5, 6 eps 4, 7 skewed, 8 binary.)

Reads no real data; the simulated data come from ``glm_coverage.simulate``.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import glm_coverage as gc  # noqa: E402

from dpstats.estimators import objpert  # noqa: E402
from dpstats.estimators.inference import glm as G  # noqa: E402
from dpstats.estimators.inference import glm_tail  # noqa: E402
from dpstats.estimators.inference.dpgd_label import box_cut  # noqa: E402
from dpstats.estimators.inference.glm_tail import tail_bias  # noqa: E402
from dpstats.estimators.inference.ssp import _covariance  # noqa: E402
from dpstats.estimators.outpert import ridge_fit  # noqa: E402

Z = 1.959963984540054
VARIANTS = ("sym", "basic", "basic+J", "adopted", "code")
#: Other seeds of the plausible tails recorded per fit (``tail1``, ...).
ALT_SEEDS = 2


def record(i: int, reps: int, diagnose: bool, base: int = 1000) -> list[dict]:
    """Per fit with intervals in cell ``i`` of ``glm_coverage.CELLS``: the released inference
    inputs (``kw``), the estimate and the truth; with ``diagnose`` also the exact unpenalised
    and ridge fits of the rows."""
    cell, seed = gc.CELLS[i], base + 17 * i
    fits: list[dict] = []
    real_inf, real_gi, real_ts = objpert._inference, G.glm_inference, G.tail_score

    def spy_inf(rows, theta_k, design, kept, s, t, n_noisy, eps, delta, share, op, rng, led):
        rec = {"theta_k": np.array(theta_k), "ridge": op.ridge}
        if diagnose:
            rec["t0"] = ridge_fit(rows.U, rows.y, 0.0, tol=1e-9)
            rec["tr"] = ridge_fit(rows.U, rows.y, op.ridge, tol=1e-9)
        fits.append(rec)
        return real_inf(rows, theta_k, design, kept, s, t, n_noisy, eps, delta, share, op,
                        rng, led)

    def spy_gi(kind, **kw):
        fits[-1]["kw"] = kw
        return real_gi(kind, **kw)

    def spy_ts(*args, **kw):
        out, seed0 = real_ts(*args, **kw), glm_tail.SEED
        fits[-1]["box"] = box_record(*args[:3])
        try:                    # the plausible tails under other seeds (--seeds)
            for k in range(1, ALT_SEEDS + 1):
                glm_tail.SEED = seed0 + 1000 * k
                fits[-1][f"tail{k}"] = real_ts(*args, **kw)
        finally:
            glm_tail.SEED = seed0
        return out

    objpert._inference, G.glm_inference, G.tail_score = spy_inf, spy_gi, spy_ts
    try:
        rng = np.random.default_rng(seed)
        out = []
        for r in range(reps):
            df, beta = gc.simulate(cell, "glm-auto", rng)
            n0 = len(fits)
            res = gc.fit("glm-auto", df, cell, seed * 1000 + r)
            if len(fits) > n0 and np.isfinite(res.bse.to_numpy()).all():
                out.append({**fits[-1], "est": res.params.to_numpy(), "beta": beta})
            if (r + 1) % gc.PROGRESS == 0:
                print(f"    cell {i}: {r + 1}/{reps} fits, {len(out)} with intervals",
                      flush=True)
        return out
    finally:
        objpert._inference, G.glm_inference, G.tail_score = real_inf, real_gi, real_ts


def box_record(design, kept, s: float) -> dict:
    """The released box's counts past it per fitted column (:func:`.dpgd_label.box_cut`:
    counts and their noise sd, NaN without counts), the intercept's position among the fitted
    columns and the row scale: what ``glm_box`` reads besides ``glm_inference``'s inputs."""
    kept = list(kept)
    cut = box_cut(getattr(design.bounds, "hist", None), design, kept)
    icol = design.intercept_col
    return {"cut": cut, "icol_k": kept.index(icol) if icol in kept else None, "s": float(s)}


def draws(kw: dict, corrected: bool, use_tail: bool = True) -> np.ndarray:
    """The error draws of :func:`~dpstats.estimators.inference.glm.glm_inference` from the
    released inputs ``kw`` (``corrected``: the bias-corrected estimate's spread)."""
    Cs = G.plausible_curvatures(kw["C_rel"], G.SPREAD * kw["sigma_c"])[0]
    noise, p = kw["noise"], kw["theta"].size

    def priv(H):
        return noise["s"] ** 2 * (H @ H) + noise["sigma_out"] ** 2 * np.eye(p)
    bias, cov = G._ridge_model(Cs, kw["ridge"], kw["theta"], priv, corrected=corrected)
    if kw["tail"] is not None and use_tail:
        bias = bias + tail_bias(Cs, kw["tail"])
    shift = np.zeros(kw["M"].shape[0])
    if kw["icol"] is not None:
        shift[kw["icol"]] = -kw["threshold"]
    return G.error_draws(bias, cov, kw["M"], shift)


def interval(kw: dict, variant: str) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` of the error ``params - truth`` under ``variant``."""
    if variant == "code":
        inf = G.glm_inference("objpert", **kw)
        se = np.sqrt(np.diag(inf.cov))
        centre = np.zeros_like(se) if inf.bias is None else np.asarray(inf.bias)
        return centre - Z * se, centre + Z * se
    if variant == "adopted":
        Cs = G.plausible_curvatures(kw["C_rel"], G.SPREAD * kw["sigma_c"])[0]
        stable = G.plugin_stable(Cs, kw["ridge"], kw["theta"])
        variant = "sym" if kw["tail"] is not None or not stable else "basic+J"
    D = draws(kw, corrected=variant == "basic+J")
    if variant == "sym":
        se = np.sqrt(np.diag(_covariance(D)))
        return -Z * se, Z * se
    cov, bias = G.centred_covariance(D)
    se = np.sqrt(np.diag(cov))
    return bias - Z * se, bias + Z * se


def evaluate(fits: list[dict]) -> dict:
    out = {}
    for v in VARIANTS:
        hit, width = [], []
        for f in fits:
            lo, hi = interval(f["kw"], v)
            err = f["est"] - f["beta"]
            hit.append((lo <= err) & (err <= hi))
            width.append(hi - lo)
        out[v] = (np.mean(hit, axis=0), np.median(width, axis=0))
    return out


def diagnosis(fits: list[dict]) -> None:
    """The realised error split on the original scale, against the model's mean bias."""
    M = np.array([f["kw"]["M"] for f in fits])
    t0, tr, th = (np.array([f[k] for f in fits]) for k in ("t0", "tr", "theta_k"))
    beta = np.array([f["beta"] for f in fits])
    ridge = np.einsum("fij,fj->fi", M, tr - t0)
    noise = np.einsum("fij,fj->fi", M, th - tr)
    clipped = np.einsum("fij,fj->fi", M, t0) - beta
    model = []
    for f in fits:
        D0 = draws(f["kw"], corrected=True, use_tail=False)
        shift = np.zeros(D0.shape[1])
        if f["kw"]["icol"] is not None:
            shift[f["kw"]["icol"]] = -f["kw"]["threshold"]
        model.append(np.quantile(D0, [0.025, 0.975], axis=0).mean(axis=0) - shift)
    model = np.array(model)
    for name, v in (("ridge shrinkage (exact fits)", ridge), ("model's ridge bias", model),
                    ("privacy noise", noise), ("clipped fit - truth", clipped)):
        print(f"    {name:30s} mean {np.round(v.mean(0), 4)}  sd {np.round(v.std(0), 4)}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", default="3,0", help="indices into glm_coverage.CELLS")
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--diagnose", action="store_true")
    ap.add_argument("--seed", type=int, default=1000,
                    help="seed base (1000: glm_coverage.py's and coverage.py's seeds)")
    ap.add_argument("--save", help="pickle each cell's recorded fits to SAVE_cellI.pkl")
    ap.add_argument("--load", help="evaluate LOAD_cellI.pkl instead of fitting")
    a = ap.parse_args(argv)
    t0 = time.time()
    for i in (int(c) for c in a.cells.split(",")):
        if a.load:
            with open(f"{a.load}_cell{i}.pkl", "rb") as fh:
                fits = pickle.load(fh)
        else:
            fits = record(i, a.reps, a.diagnose, a.seed)
        if a.save:
            with open(f"{a.save}_cell{i}.pkl", "wb") as fh:
                pickle.dump(fits, fh)
        c = gc.CELLS[i]
        print(f"[{time.time() - t0:6.0f}s] cell {i} (n={c['n']:,} p={c['p']} eps={c['eps']} "
              f"{c['cov']}): {len(fits)} fits with intervals")
        if a.diagnose and fits:
            diagnosis(fits)
        base = None
        for v, (cover, width) in evaluate(fits).items():
            base = width if base is None else base
            print(f"  {v:8s} coverage {cover.mean():.3f} ({cover.min():.3f}-{cover.max():.3f})"
                  f"  per coefficient {np.round(cover, 3).tolist()}  width / sym "
                  f"{np.round(width / base, 2).tolist()}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
