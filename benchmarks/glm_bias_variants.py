"""dp_glm's default intervals under each rule for the released bias's mean (issue 16,
design-notes.md, "the released bias's mean"), on recorded fits, without refitting.

The fits are recorded by ``glm_interval_variants.py --save PREFIX`` (the cells of
``glm_coverage.py``, the seeds of ``coverage.py --families glm``) and ``glm_intercept_record.py``
(``glm_intercept_design.py``'s design): per fit with intervals the released inputs of
:func:`dpstats.estimators.inference.glm.glm_inference`, the released coefficients and the truth.
Each variant (``RULE/CENTRE``) rebuilds the intervals with the code's ``glm_inference`` on the
recorded inputs, two steps replaced (:func:`variant_of`): the plug-ins' mean ``RULE``
(``plain``: at the released information ``-r C_rel^-1 theta``; ``mixture``: ``mean_k b(C_k)``
over the plausible informations; ``debias``: the bootstrap's correction ``2 b(C_bar) - mean_k
b(C_k)``, the code's; ``half``: midway between ``plain`` and ``debias``, added after the first
four cells' figures) and the released centre ``CENTRE`` (``quantile``: the basic interval's
midpoint, the code's; ``mean``: the mixture's mean, half-width about it). ``debias/quantile`` is
the code as it is. All post-processing of the recorded released values; the spread's
calibration (:mod:`dpstats.estimators.inference.glm_spread`) is kept in every variant.
Per cell, variant and coefficient: coverage of the model's coefficient, mean and sd of ``z =
(centre - truth) / se``, median width against the rule before; for fits recorded with
``--diagnose`` also the coverage and mean z against the exact unpenalised fit of the clipped rows
(``coverage_box``, ``z_box_mean``: what the intervals say they cover, the box's move left out).

**Decision rule** (written before the final figures): over all recorded cells, the variant with
the fewest (cell, coefficient) coverages outside [0.93, 0.98]; ties by the smallest largest
distance outside the band, then by the smallest largest ``|mean z|``. It is adopted only if it
beats the rule before (``debias/quantile``) on the first criterion, or ties it and beats it on
the second.

    nice -n 10 python benchmarks/glm_bias_variants.py centre=/tmp/rec_cell0.pkl@500 \\
        int1_eps0.5=/tmp/int_p1_eps0.5.pkl@500 --summary FILE
    # coverage.py rows (glm cells, label cellI; the file name has the variant when several):
    nice -n 10 python benchmarks/glm_bias_variants.py cell5=/tmp/rec_cell5.pkl@500 \\
        --variants plain/quantile --rows-dir benchmarks/results/coverage_runs

Reads no real data.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import glm_coverage as gc  # noqa: E402

from dpstats.estimators.inference import glm as G  # noqa: E402
from dpstats.estimators.inference import glm_box, glm_spread  # noqa: E402
from dpstats.estimators.inference.mixture import centred_mixture_covariance  # noqa: E402

Z = 1.959963984540054
OLD = "debias/quantile"
VARIANTS = (OLD, "plain/quantile", "mixture/quantile", "debias/mean", "plain/mean",
            "mixture/mean", "half/quantile", "half/mean")
BAND = (0.93, 0.98)
#: The plug-ins' mean (:func:`centre_plugins`).
RULES = ("plain", "mixture", "debias", "half")


def centre_plugins(bias, Cs, ridge: float, theta, rule: str, C_rel) -> np.ndarray:
    """The plug-ins ``bias`` (``(K, p)``, at the plausible ``Cs``) moved to the mean ``rule``
    says (the spread over ``k`` kept).

    >>> b, Cs = np.array([[-1.0], [-3.0]]), np.array([[[2.0]], [[2.0 / 3.0]]])
    >>> [float(centre_plugins(b, Cs, 1.0, np.ones(1), r, np.eye(1)).mean()) for r in RULES]
    [-1.0, -2.0, 0.5, -0.25]
    """
    if rule == "mixture":
        return bias
    deb = G.debias(bias, -ridge * np.linalg.solve(Cs.mean(axis=0), theta))
    if rule == "debias":
        return deb
    C0 = (np.asarray(C_rel, dtype=np.float64) + np.asarray(C_rel).T) / 2.0
    plain = bias + (-ridge * np.linalg.solve(C0, theta) - bias.mean(axis=0))[None, :]
    return plain if rule == "plain" else (plain + deb) / 2.0


def calibrated(bias, Cs, ridge: float, theta, C_rel, sigma: float, seed: int) -> np.ndarray:
    """Rule ``calib`` (diagnosis only, after the decision): the plug-ins moved to
    ``b(C_rel) - rho * x1``, ``x1 = mean_k b(C_k) - b(C_rel)`` the convexity excess one level
    down, ``rho = x1 / x2`` (in [0, 1], per coefficient; 0 where the signs differ) with ``x2``
    the same excess one level further down (median over :func:`glm_spread.level_centres` of
    the plausible informations, :func:`glm_spread.level_noise` draws): the excess extrapolated
    to the released level, as ``glm_spread`` calibrates the spread."""
    def plug(C):
        th = np.broadcast_to(theta, (len(C), theta.size))[..., None]
        return -ridge * np.linalg.solve(C, th)[..., 0]
    C0 = (np.asarray(C_rel, dtype=np.float64) + np.asarray(C_rel).T) / 2.0
    b_rel = plug(C0[None])[0]
    x1 = bias.mean(axis=0) - b_rel
    E = glm_spread.level_noise(sigma, theta.size, seed)
    x2 = []
    for C in glm_spread.level_centres(Cs):
        Ck = C[None] - E
        ok = np.linalg.eigvalsh(Ck)[:, 0] > 0
        if ok.sum() >= glm_spread.MIN_PD:
            x2.append(plug(Ck[ok]).mean(axis=0) - plug(C[None])[0])
    if len(x2) < 2:
        return bias + (b_rel - bias.mean(axis=0))[None, :]
    x2 = np.median(np.array(x2), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(x1 * x2 > 0, np.clip(x1 / x2, 0.0, 1.0), 0.0)
    return bias + (b_rel - rho * x1 - bias.mean(axis=0))[None, :]


@contextmanager
def variant_of(variant: str, C_rel, sigma_c: float = 0.0, seed: int = 0):
    """``glm.glm_inference`` under ``variant`` for a fit whose released information is
    ``C_rel``: its ``_ridge_model`` with the plug-ins' mean by :func:`centre_plugins`, its
    ``exact_covariance`` centred at the quantiles' midpoint or the mixture's mean, with
    :mod:`~dpstats.estimators.inference.glm_box`'s switches off (the code before it, whose
    ``debias/quantile`` these rules were measured against). The code's own functions and
    switches are restored on exit; ``debias/quantile`` leaves the functions as they are."""
    rule, at = variant.split("/")
    real_rm, real_ec = G._ridge_model, G.exact_covariance
    switches = glm_box.STRENGTH, glm_box.BOX, glm_box.WIDTH
    glm_box.STRENGTH, glm_box.BOX, glm_box.WIDTH = "debias", False, 0.0

    def rm(Cs, ridge, theta, priv, corrected=True):
        _, cov = real_rm(Cs, ridge, theta, priv, corrected)
        raw = -ridge * np.linalg.solve(Cs, np.broadcast_to(theta, (len(Cs), theta.size))
                                       [..., None])[..., 0]
        if rule == "calib":
            return calibrated(raw, Cs, ridge, theta, C_rel, G.SPREAD * sigma_c, seed), cov
        return centre_plugins(raw, Cs, ridge, theta, rule, C_rel), cov

    def ec(bias, cov, M, shift, centred):
        if centred and at == "mean":
            return centred_mixture_covariance(bias, cov, M, shift, basic=False)
        return real_ec(bias, cov, M, shift, centred)

    if variant != OLD:
        G._ridge_model, G.exact_covariance = rm, ec
    try:
        yield G.glm_inference
    finally:
        G._ridge_model, G.exact_covariance = real_rm, real_ec
        glm_box.STRENGTH, glm_box.BOX, glm_box.WIDTH = switches


def evaluate(fits: list[dict], variant: str) -> dict:
    """Per fit and coefficient: ``z`` at the released centre, ``hit``, ``width``."""
    z, width, zb = [], [], []
    for f in fits:
        kw = f["kw"]
        seed = G.fit_seed(kw["C_rel"], kw["sigma_c"], kw["theta"], kw["threshold"]) + 2
        with variant_of(variant, kw["C_rel"], kw["sigma_c"], seed) as glm_inference:
            inf = glm_inference("objpert", **f["kw"])
        se = np.sqrt(np.diag(inf.cov))
        bias = np.zeros_like(se) if inf.bias is None else np.asarray(inf.bias)
        z.append((f["est"] - bias - f["beta"]) / se)
        width.append(2 * Z * se)
        if "t0" in f:           # against the exact fit of the clipped rows (--diagnose)
            zb.append((f["est"] - bias - f["kw"]["M"] @ f["t0"]) / se)
    z = np.array(z)
    out = {"z": z, "hit": np.abs(z) <= Z, "width": np.array(width)}
    if len(zb) == len(z):
        out["z_box"] = np.array(zb)
    return out


def table(label: str, reps: int, res: dict) -> pd.DataFrame:
    """One row per variant and coefficient."""
    rows = []
    base = np.median(res[OLD]["width"], axis=0) if OLD in res else None
    for v, r in res.items():
        k = r["z"].shape[1]
        zt = np.where(np.abs(r["z"]) <= 10, r["z"], np.nan)
        for j in range(k):
            rows.append({"cell": label, "variant": v, "coef": j, "fits": len(r["z"]),
                         "reps": reps, "coverage": r["hit"][:, j].mean(),
                         "z_mean": np.nanmean(zt[:, j]), "z_sd": np.nanstd(zt[:, j]),
                         "width_vs_old": (np.median(r["width"][:, j]) / base[j]
                                          if base is not None else np.nan),
                         **({"coverage_box": np.mean(np.abs(r["z_box"][:, j]) <= Z),
                             "z_box_mean": np.mean(r["z_box"][:, j])} if "z_box" in r
                            else {})})
    return pd.DataFrame(rows)


def score(t: pd.DataFrame) -> pd.DataFrame:
    """The decision rule's criteria per variant (module docstring)."""
    lo, hi = BAND
    out = np.maximum(lo - t["coverage"], t["coverage"] - hi).clip(lower=0.0)
    return (t.assign(outside=out > 0, distance=out, absz=t["z_mean"].abs())
            .groupby("variant", sort=False)
            .agg(outside=("outside", "sum"), max_distance=("distance", "max"),
                 max_abs_z=("absz", "max"), worst=("coverage", "min"),
                 best=("coverage", "max"))
            .sort_values(["outside", "max_distance", "max_abs_z"]))


def baseline(i: int, reps: int = 20) -> np.ndarray:
    """Per coefficient the median non-private logistic interval width of the cell's first
    ``reps`` data sets (``glm_coverage.run_cell``'s baseline, the same seeds)."""
    cell, rng = gc.CELLS[i], np.random.default_rng(1000 + 17 * i)
    return np.median([gc.baseline_width("glm-auto", gc.simulate(cell, "glm-auto", rng)[0])
                      for _ in range(reps)], axis=0)


def coverage_row(i: int, reps: int, r: dict, variant: str) -> dict:
    """``coverage.py``'s row of glm cell ``i`` from the recorded fits' results ``r``."""
    cv = _coverage_script()
    cell = gc.CELLS[i]
    k = cell["p"] + 1
    has = np.r_[np.ones(len(r["z"]), dtype=bool), np.zeros(reps - len(r["z"]), dtype=bool)]
    z = np.vstack([r["z"], np.full((reps - len(r["z"]), k), np.nan)])
    ratio = np.tile(np.median(r["width"], axis=0) / baseline(i), (reps, 1))
    settings = {"n": cell["n"], "p": cell["p"], "eps": cell["eps"], "covariates": cell["cov"],
                "errors": "logistic"}
    row = cv._row("glm", cv._glm_name(cell), "logistic", "glm-auto", settings, reps, has, z,
                  ratio, 0.0)
    return {**row, "source": f"glm_bias_variants.py {variant} on s16 recorded fits "
                             f"(glm_interval_variants.py code column; coverage_box not "
                             f"recorded)"}


def fits_parser(description: str, variants) -> argparse.ArgumentParser:
    """The command line of a variants script over recorded fits (this one and
    glm_box_variants.py): the fits, the variants, the summary and the rows' folder."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("fits", nargs="+", help="LABEL=PICKLE@REPS (label cellI: glm cell I)")
    ap.add_argument("--variants", default=",".join(variants))
    ap.add_argument("--summary", help="write the per-coefficient table here")
    ap.add_argument("--rows-dir", help="write coverage.py rows of the cellI labels here")
    return ap


def variant_line(label: str, v: str, g, fits: int, reps, against: str) -> str:
    """One variant's line of a cell: coverage (worst-best), per coefficient, mean and sd of z,
    width relative to ``against``."""
    return (f"{label:14s} {v:17s} {fits}/{reps} coverage {g.coverage.mean():.3f} "
            f"({g.coverage.min():.3f}-{g.coverage.max():.3f}) per coef "
            f"{np.round(g.coverage, 3).tolist()} mean z {np.round(g.z_mean, 2).tolist()}"
            f" sd z {g.z_sd.min():.2f}-{g.z_sd.max():.2f} width/{against} "
            f"{g.width_vs_old.min():.3f}-{g.width_vs_old.max():.3f}")


def recorded(specs):
    """``(label, path, reps, fits)`` for each ``LABEL=PICKLE@REPS`` of the command line."""
    for spec in specs:
        label, rest = spec.split("=", 1)
        path, reps = rest.rsplit("@", 1)
        with open(path, "rb") as fh:
            yield label, path, reps, pickle.load(fh)


def main(argv=None) -> int:
    a = fits_parser(__doc__.splitlines()[0], VARIANTS).parse_args(argv)
    frames = []
    for label, _path, reps, fits in recorded(a.fits):
        res = {v: evaluate(fits, v) for v in a.variants.split(",")}
        t = table(label, int(reps), res)
        frames.append(t)
        for v, g in t.groupby("variant", sort=False):
            print(variant_line(label, v, g, len(fits), reps, "old")
                  + (f" | box fit: coverage {np.round(g.coverage_box, 3).tolist()} mean z "
                     f"{np.round(g.z_box_mean, 2).tolist()}" if "z_box_mean" in g else ""),
                  flush=True)
        if a.rows_dir and label.startswith("cell"):
            i = int(label[4:])
            for v, r in res.items():
                row = coverage_row(i, int(reps), r, v)
                tag = "" if len(res) == 1 else f"_{v.replace('/', '-')}"
                name = f"glm_glm-auto_{cv_name(i)}{tag}_s16_{reps}.csv"
                pd.DataFrame([row]).to_csv(Path(a.rows_dir) / name, index=False)
    t = pd.concat(frames)
    if a.summary:
        t.to_csv(a.summary, index=False)
    print(score(t).to_string(float_format=lambda v: f"{v:.3f}"))
    return 0


def _coverage_script():
    """``benchmarks/coverage.py`` (its rows' format), loaded under another name (it refuses
    to be imported as ``coverage``, the package's name)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("coverage_script",
                                                  Path(__file__).parent / "coverage.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def cv_name(i: int) -> str:
    """A short file-name form of glm cell ``i``."""
    return _coverage_script()._glm_name(gc.CELLS[i]).replace("covariates=", "").replace("=", "")


if __name__ == "__main__":
    raise SystemExit(main())
