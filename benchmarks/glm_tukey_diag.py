"""What drives the logistic Tukey intervals' coverage (issue 16): per fit and coefficient,
the released point's error, its standard error, and what the inference stage saw but does not
release (a non-shipping spy on :func:`dpstats.estimators.inference.tukey_glm`'s helpers).

For every fit of a :mod:`glm_coverage` cell (the same data sets and fit seeds as
``coverage.py --families glm --methods glm-tukey``) it records, in the mechanism's
coordinates (slopes as reported; the intercept as the log-odds at the private centre):

* ``z``: (point - truth) / released standard error;
* ``z_med``: (coordinate-wise median of the m group fits - truth) / (sqrt(pi/2 / m) *
  the fits' robust sd, MAD / 0.6745): the group fits' median bias, in the median's own sd;
* ``spread_ratio``: released ``sigma_j`` / the fits' robust sd (the spread's accuracy);
* ``mech``: (point - median) / (sqrt((f - pi/2) / m) * robust sd) (the mechanism's part);
* ``z_rep``: (reported point - truth) / reported standard error (the intercept too);
* ``mech_raw``: point - median, unscaled (``--summarize`` prints its correlation across
  coordinates next to the one the covariance assumes, ``arcsin(rho) / f`` with rho the
  group fits' own correlation: is the mechanism's noise correlated like the fits?);
* ``q``, ``crit``, ``m``, ``f``.

    nice -n 10 python benchmarks/glm_tukey_diag.py --cell n=200000 --reps 60 \\
        --out /tmp/diag.csv
    python benchmarks/glm_tukey_diag.py --summarize /tmp/diag.csv

Prints per coefficient: coverage, mean and sd of z and z_med, median spread_ratio, sd of
mech, mean crit. No fit-level value is a release; this is a diagnosis on simulated data.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
import glm_coverage as gc  # noqa: E402

import dpstats.estimators.inference.tukey_glm as tg  # noqa: E402
import dpstats.estimators.tukey.glm as tglm  # noqa: E402

_SPY: dict = {}


def _install():
    """Wrap the helpers the inference stage calls, keeping their inputs and outputs."""
    spread, factor, infer = tg.model_spread, tg.tukey_noise_factor, tglm.glm_tukey_inference

    def model_spread(B, theta, w, *a, **k):
        out = spread(B, theta, w, *a, **k)
        _SPY.update(B=np.array(B), theta=np.array(theta), w=np.array(w), sigma=out[0], q=out[1])
        return out

    def noise_factor(*a, **k):
        _SPY["f"] = factor(*a, **k)
        return _SPY["f"]

    def inference(X, y, models, point, c, intercept_col, **k):
        _SPY["c"] = None if c is None else np.array(c)
        return infer(X, y, models, point, c, intercept_col, **k)

    tg.model_spread, tg.tukey_noise_factor, tglm.glm_tukey_inference = (
        model_spread, noise_factor, inference)


def _name(cell: dict) -> str:
    """A cell's name as ``coverage.py`` gives it (``n=200000``, ``n=100000+covariates=binary``)."""
    moved = [f"{'covariates' if key == 'cov' else key}={cell[key]}"
             for key in ("n", "p", "eps", "cov") if cell[key] != gc.CENTRE[key]]
    return "+".join(moved) or "centre"


def run(cell_name: str, reps: int, start: int, seed_offset: int) -> pd.DataFrame:
    i = [_name(c) for c in gc.CELLS].index(cell_name)
    cell = gc.CELLS[i]
    seed = 1000 + 17 * i + seed_offset
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(start + reps):
        df, beta = gc.simulate(cell, "glm-tukey", rng)
        if r < start:
            continue
        _SPY.clear()
        res = gc.fit("glm-tukey", df, cell, seed * 1000 + r)
        if "B" not in _SPY:
            continue
        B, theta, sigma, q, f = _SPY["B"], _SPY["theta"], _SPY["sigma"], _SPY["q"], _SPY["f"]
        m = B.shape[0]
        c = _SPY["c"]
        truth = beta.copy()
        if c is not None:               # the intercept as the log-odds at the centre
            truth[0] += float(c[1:] @ beta[1:])
        med = np.median(B, axis=0)
        rsd = np.median(np.abs(B - med), axis=0) / 0.6744897501960817
        se_rep = res.bse.to_numpy()
        se_model = np.sqrt(f / m) * sigma            # before the critical value
        z_sd_units = np.sqrt(np.pi / 2 / m) * rsd
        ci = res.conf_int().to_numpy()
        point = res.params.to_numpy()
        rho0 = np.corrcoef(B, rowvar=False)[0]           # the fits' correlation with coord 0
        for j in range(B.shape[1]):
            se_j = se_rep[j] if j > 0 else np.nan     # the reported intercept is another one
            crit = 1.959963984540054 * se_j / se_model[j]
            rows.append({"cell": cell_name, "rep": r, "coef": j, "m": m, "f": f,
                         "truth": truth[j], "theta": theta[j], "median": med[j],
                         "robust_sd": rsd[j], "sigma": sigma[j], "q": q[j], "window": _SPY["w"][j],
                         "se": se_j, "crit": crit,
                         "covered": bool(ci[j, 0] <= beta[j] <= ci[j, 1])
                         if np.isfinite(ci[j]).all() else np.nan,
                         "z": (theta[j] - truth[j]) / se_j if j > 0 else np.nan,
                         "z_rep": (point[j] - beta[j]) / se_rep[j],
                         "mech_raw": theta[j] - med[j], "err_raw": theta[j] - truth[j],
                         "rho0": rho0[j], "centre": np.nan if c is None else c[j],
                         "z_med": (med[j] - truth[j]) / z_sd_units[j],
                         "spread_ratio": sigma[j] / rsd[j],
                         "mech": (theta[j] - med[j]) / (np.sqrt(max(f - np.pi / 2, 1e-9) / m)
                                                        * rsd[j])})
    return pd.DataFrame(rows)


def summarize(d: pd.DataFrame) -> pd.DataFrame:
    g = d.groupby(["cell", "coef"])
    return g.agg(fits=("rep", "size"), covered=("covered", "mean"), z_mean=("z", "mean"),
                 z_sd=("z", "std"), zmed_mean=("z_med", "mean"), zmed_sd=("z_med", "std"),
                 zrep_mean=("z_rep", "mean"), zrep_sd=("z_rep", "std"),
                 spread_ratio=("spread_ratio", "median"), mech_sd=("mech", "std"),
                 q=("q", "mean"), crit=("crit", "mean"), m=("m", "median")).reset_index()


def correlations(d: pd.DataFrame) -> pd.DataFrame:
    """Per coefficient j > 0: across fits, the correlation of the mechanism's noise
    (``mech_raw``) and of the point's error (``err_raw``) in coordinate 0 (the intercept at
    the centre) and j, next to the fits' mean correlation rho and the point's correlation the
    covariance assumes, ``arcsin(rho) / f``."""
    rows = []
    for cell, dc in d.groupby("cell"):
        w = {k: dc.pivot(index="rep", columns="coef", values=k)
             for k in ("mech_raw", "err_raw", "rho0", "f")}
        for j in w["rho0"].columns[1:]:
            rho = w["rho0"][j]
            rows.append({"cell": cell, "coef": j, "fits": len(rho), "rho_fits": rho.mean(),
                         "assumed": (np.arcsin(rho) / w["f"][0]).mean(),
                         "mech_corr": w["mech_raw"][0].corr(w["mech_raw"][j]),
                         "point_corr": w["err_raw"][0].corr(w["err_raw"][j])})
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cell", default="n=200000")
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--start", type=int, default=0, help="skip this many data sets")
    ap.add_argument("--seed-offset", type=int, default=0)
    ap.add_argument("--out", default=None)
    ap.add_argument("--summarize", default=None, help="reprint the table of a CSV")
    a = ap.parse_args(argv)
    if a.summarize:
        d = pd.read_csv(a.summarize)
        print(summarize(d).round(3).to_string(index=False))
        if "mech_raw" in d:
            print(correlations(d).round(3).to_string(index=False))
        return 0
    _install()
    t0 = time.time()
    d = run(a.cell, a.reps, a.start, a.seed_offset)
    if a.out:
        d.to_csv(a.out, index=False)
    print(f"{d.rep.nunique() if len(d) else 0} fits, {time.time() - t0:.0f} s")
    print(summarize(d).round(3).to_string(index=False))
    if len(d):
        print(correlations(d).round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
