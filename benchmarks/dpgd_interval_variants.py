"""How DP-GD's intervals are built, variant by variant, on the same fits (issue 16;
design-notes.md, "DP-GD's intervals centred").

Runs ``glm_coverage.py``'s cells (the seeds of ``coverage.py --families glm``, plus
``--seed-offset``) with ``method="dpgd"`` (``glm-dpgd``: dp_glm; ``lm-dpgd``: dp_lm), records
each fit's released inference inputs (what
:func:`dpstats.estimators.inference.dpgd._gd_model` receives: the plausible curvatures of the
released one, the released coefficients, the residual variances, the descent's public
settings; and the map to the original scale), then rebuilds the intervals from them under each
variant and reports per coefficient the coverage of the model's coefficients, the median width
relative to ``sym`` and the mean and sd of ``z = (centre - truth) / se``:

* ``sym``: symmetric about the coefficient, half-width the mixture's exact 95% quantile of
  ``|error|`` (bias held by width), the rule before;
* ``basic``: the mixture's basic interval ``[params - Q(0.975), params - Q(0.025)]``, centred
  at the coefficient minus the estimated bias, with the spread of the estimate itself;
* ``basic+J``: the same with the bias-corrected estimate's spread (the plug-in's gain on the
  privacy noise, ``replug``; squared loss: as ``basic``, which has it already);
* ``mean+J``: centred at the mixture's mean (the bootstrap-corrected plug-in's mean) with
  the symmetric 95% half-width of the mixture about it, the ``basic+J`` spread;
* ``two+J``: ``mean+J`` over the mixture of the linearised (``BIAS_SCALE``) and the path
  model's (``inference.dpgd_path``) plug-ins in equal weight (logistic);
* ``adopted``: ``two+J`` where the logistic plug-ins are stable (``plugin_stable``), else
  (and for the squared loss) ``sym``:
  the code's rule (checked against the released intervals: ``code`` column).

    nice -n 10 python benchmarks/dpgd_interval_variants.py --method glm-dpgd --cells 0 \\
        --reps 200 [--save FILE.pkl]
    python benchmarks/dpgd_interval_variants.py --from FILE.pkl [--path on|off]

(``--cells``: indices into ``glm_coverage.CELLS``: 0 centre, 2 n = 100,000, 3 p = 1,
5 eps 0.5, 6 eps 4.) Reads no real data; the simulated data come from
``glm_coverage.simulate``.
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

import dpstats.estimators.inference.dpgd as D  # noqa: E402
from dpstats.estimators.inference.mixture import (  # noqa: E402
    Z95,
    centred_mixture_covariance,
    mixture_covariance,
)

VARIANTS = ("sym", "basic", "basic+J", "mean+J", "two+J", "adopted")


def record(method: str, i: int, reps: int, offset: int, save=None, first: int = 0
           ) -> list[dict]:
    """Per fit with intervals in cell ``i``: the model's inputs, ``M``, estimate, truth and the
    released interval (fits ``first`` .. ``reps - 1``; the data before are drawn, not fitted,
    so the fits are the same as in a run from 0)."""
    cell, seed = gc.CELLS[i], 1000 + 17 * i + offset
    cap: dict = {}
    real_model, real_map, real_pc = D._gd_model, D.fitted_map, D.plausible_curvatures
    real_curv, real_rss = D.release_curvature_part, D.release_rss_part

    def spy_curv(plan, part, U, w, bound):      # the exact curvature (diagnosis only)
        cap["exact"] = {"C": (U.T * w) @ U}
        return real_curv(plan, part, U, w, bound)

    def spy_rss(plan, part, U, y, theta):       # the fit's fixed point and exact RSS
        t0 = np.linalg.lstsq(U, y, rcond=None)[0]
        r0, rT = (np.clip(y - U @ t, -1.0, 1.0) for t in (t0, np.asarray(theta)))
        cap.setdefault("exact", {}).update(t0=t0, rss0=float(r0 @ r0), rssT=float(rT @ rT),
                                           rss0_raw=float(np.sum((y - U @ t0) ** 2)))
        return real_rss(plan, part, U, y, theta)

    def spy_model(Cs, theta, sigma2, **kw):
        cap.setdefault("model", (Cs, np.array(theta), np.array(sigma2), dict(kw)))
        return real_model(Cs, theta, sigma2, **kw)

    def spy_map(*a, **kw):
        cap["M"] = real_map(*a, **kw)
        return cap["M"]

    def spy_pc(C_rel, sigma, *a, **kw):
        cap["released"] = (np.array(C_rel), float(sigma))
        return real_pc(C_rel, sigma, *a, **kw)

    D._gd_model, D.fitted_map, D.plausible_curvatures = spy_model, spy_map, spy_pc
    D.release_curvature_part, D.release_rss_part = spy_curv, spy_rss
    import dpstats.estimators.dpgd as E
    real_inf = E.dpgd_inference

    def spy_inf(loss, plan, U, y, theta, design, *a, **kw):     # the released box and counts
        cap["design"] = {k: getattr(design, k) for k in (
            "half", "mid", "clip_lo", "clip_hi", "intercept_col", "kept", "y_mid", "y_half")}
        cap["design"]["hist"] = getattr(design.bounds, "hist", None)
        return real_inf(loss, plan, U, y, theta, design, *a, **kw)

    E.dpgd_inference = spy_inf
    try:
        rng = np.random.default_rng(seed)
        out = []
        for r in range(reps):
            df, beta = gc.simulate(cell, method, rng)
            if r < first:
                continue
            cap.clear()
            res = gc.fit(method, df, cell, seed * 1000 + r)
            ci = res.conf_int().to_numpy()
            if "M" in cap and res.released and np.isfinite(ci).all():
                out.append({"model": cap["model"], "M": cap["M"], "beta": beta,
                            "released": cap.get("released"), "exact": cap.get("exact"),
                            "rep": r, "clip": res.clip, "design": cap.get("design"),
                            "est": res.params.to_numpy(), "ci": ci})
            if (r + 1) % gc.PROGRESS == 0:
                if save is not None:        # the fits so far (a partial cell)
                    save(out)
                print(f"    cell {i}: {r + 1}/{reps} fits, {len(out)} with intervals",
                      flush=True)
        return out
    finally:
        D._gd_model, D.fitted_map, D.plausible_curvatures = real_model, real_map, real_pc
        D.release_curvature_part, D.release_rss_part = real_curv, real_rss
        E.dpgd_inference = real_inf


def _model(f: dict, **extra):
    """``D._gd_model`` of a recorded fit (cached per fit: the path model takes a second)."""
    Cs, theta, sigma2, kw = f["model"]
    key, cache = tuple(sorted({**kw, **extra}.items())), f.setdefault("_cache", {})
    if key not in cache:
        cache[key] = D._gd_model(Cs, theta, sigma2, **{**kw, **extra})
    return cache[key]


def interval(f: dict, variant: str) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` of the error ``params - truth`` under ``variant``."""
    Cs, theta, sigma2, kw = f["model"]
    bias, cov, _ = _model(f)
    logistic = kw.get("corrected", False)          # the logistic loss's model
    if variant == "adopted":
        variant = "two+J" if logistic and D.plugin_stable(bias) else "sym"
    if variant == "two+J":       # the linearised and the path plug-ins in equal weight
        if not logistic:
            variant = "sym"
        else:
            bp = _model(f, path=Cs.shape[1] - 1, bias_scale=1.0)[0]
            if D.plugin_stable(bp):
                bias = np.r_[bias, bp]
                cov = D._gd_model(Cs, theta, sigma2, **{**kw, "replug": True, "path": None,
                                                        "corrected": False})[1]
                cov_c, centre = centred_mixture_covariance(bias, np.r_[cov, cov], f["M"],
                                                           np.zeros(f["M"].shape[0]))
                se = np.sqrt(np.diag(cov_c))
                return centre - Z95 * se, centre + Z95 * se
            variant = "mean+J"
    q = f["M"].shape[0]
    if variant == "sym":
        se = np.sqrt(np.diag(mixture_covariance(bias, cov, f["M"], np.zeros(q))))
        return -Z95 * se, Z95 * se
    if variant in ("basic+J", "mean+J"):
        cov = D._gd_model(Cs, theta, sigma2, **{**kw, "replug": True, "path": None,
                                                "corrected": False})[1]
    cov_c, centre = centred_mixture_covariance(bias, cov, f["M"], np.zeros(q),
                                               basic=variant != "mean+J")
    se = np.sqrt(np.diag(cov_c))
    return centre - Z95 * se, centre + Z95 * se


def evaluate(fits: list[dict]) -> None:
    base = None
    for v in VARIANTS:
        hit, width, z = [], [], []
        for f in fits:
            lo, hi = interval(f, v)
            err = f["est"] - f["beta"]
            hit.append((lo <= err) & (err <= hi))
            width.append(hi - lo)
            z.append((err - (lo + hi) / 2) / ((hi - lo) / (2 * Z95)))
        cover, width, z = np.mean(hit, axis=0), np.median(width, axis=0), np.array(z)
        base = width if base is None else base
        print(f"  {v:8s} coverage {cover.mean():.3f} ({cover.min():.3f}-{cover.max():.3f})  "
              f"per coefficient {np.round(cover, 3).tolist()}  width / sym "
              f"{np.round(width / base, 2).tolist()}  mean z {np.round(z.mean(0), 2).tolist()}"
              f"  sd z {np.round(z.std(0), 2).tolist()}", flush=True)
    err = np.array([f["est"] - f["beta"] for f in fits])
    plug = np.array([_model(f)[0].mean(axis=0) @ f["M"].T
                     / f["model"][3].get("bias_scale", 1.0) for f in fits])
    print(f"  realised mean error / the plug-in's mean (unscaled) per coefficient "
          f"{np.round(err.mean(0) / plug.mean(0), 3).tolist()}")
    stable = np.mean([D.plugin_stable(_model(f)[0])
                      for f in fits])
    same = np.mean([np.allclose(np.array(interval(f, "adopted")).T,
                                (f["est"][:, None] - f["ci"])[:, ::-1]) for f in fits])
    print(f"  stable plug-in in {stable:.3f} of fits; adopted == released intervals in "
          f"{same:.3f} of fits")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--method", default="glm-dpgd", choices=("glm-dpgd", "lm-dpgd"))
    ap.add_argument("--cells", default="0", help="indices into glm_coverage.CELLS")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed-offset", type=int, default=0)
    ap.add_argument("--first", type=int, default=0, help="fit from this replication on")
    ap.add_argument("--save", help="pickle the recorded fits here")
    ap.add_argument("--from", dest="src", help="evaluate fits saved by --save")
    ap.add_argument("--bias-scale", type=float, default=None,
                    help="with --from: rebuild with this BIAS_SCALE (a sensitivity check)")
    ap.add_argument("--only", help="with --from: evaluate only these cells")
    ap.add_argument("--path", choices=("on", "off"), default=None,
                    help="with --from: rebuild the logistic bias along the path's curvature "
                         "(inference.dpgd_path, scale 1) or linearised (BIAS_SCALE)")
    a = ap.parse_args(argv)
    t0 = time.time()
    if a.src:
        for i, fits in pickle.load(open(a.src, "rb")).items():
            if a.only is not None and str(i) not in a.only.split(","):
                continue
            print(f"cell {i}: {len(fits)} fits with intervals")
            for f in fits if a.bias_scale is not None else ():
                f["model"][3]["bias_scale"] = a.bias_scale
            for f in fits if a.path else ():
                on = a.path == "on" and f["model"][3].get("corrected", False)
                f["model"][3].update(path=f["model"][0].shape[1] - 1 if on else None,
                                     bias_scale=1.0 if on else D.BIAS_SCALE["logistic"])
            evaluate(fits)
        return 0
    saved = {}
    for i in (int(c) for c in a.cells.split(",")):
        def partial(fits, i=i):
            if a.save:
                pickle.dump({**saved, i: fits}, open(a.save, "wb"))

        fits = saved[i] = record(a.method, i, a.reps, a.seed_offset, partial, a.first)
        c = gc.CELLS[i]
        print(f"[{time.time() - t0:6.0f}s] {a.method} cell {i} (n={c['n']:,} p={c['p']} "
              f"eps={c['eps']} {c['cov']}): {len(fits)} fits with intervals")
        if a.save:
            pickle.dump(saved, open(a.save, "wb"))
        if fits:
            evaluate(fits)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
