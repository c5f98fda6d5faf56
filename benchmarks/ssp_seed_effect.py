"""The fixed simulation seed of the AdaSSP / Boosted AdaSSP intervals: same fits, other draws.

For each fit of an :mod:`interval_coverage` cell (same data seeds and fit seeds as
``coverage.py --families lm``), the inference's inputs (released values only: the arguments
of :func:`dpstats.estimators.inference.ssp.ssp_inference`) are captured, and the bootstrap is
re-run under several simulation-seed rules by a benchmark-side monkeypatch of
``simulation_noise`` in ``inference.ssp`` and ``inference.simulate`` (not shipped):

* ``fixed``: the seeds before design note "AdaSSP / BAS draws seeded from released values"
  (the same draws in every fit);
* ``fixed+1``, ``fixed+2``: other fixed seeds, the same in every fit;
* ``perfit``: an independent seed per fit (what a seed from released values gives);
* ``shipped``: the code's standard errors (the fit's own ``bse``);
* ``big``: an independent seed per fit and ``--big`` draws (the quantile nearly exact).

Per coefficient it prints coverage (Monte Carlo sd about 0.01 at 500 fits: the variants are
paired, so their differences are much more precise), the mean standard error relative to
``big``, and the realised sd of the estimate over fits against the rms ``big`` standard error
(the bootstrap's calibration, inflation included). The per-fit rows go to ``--out``.

    nice -n 10 python benchmarks/ssp_seed_effect.py --cells centre --reps 500 \\
        --out results/ssp_seed_effect_centre_500.csv
    python benchmarks/ssp_seed_effect.py --from results/ssp_seed_effect_centre_500.csv
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import interval_coverage as ic  # noqa: E402

from dpstats.estimators.inference import ssp as _ssp  # noqa: E402

#: The code's ssp_inference (the spy below replaces the module's name during a fit).
REAL = _ssp.ssp_inference

Z = 1.959963984540054
VARIANTS = ["fixed", "fixed+1", "fixed+2", "perfit", "shipped", "big"]


def _patched_noise(rule):
    """A ``simulation_noise`` whose seed is ``rule(name)`` (name: ``"lap"`` for the RSS's
    Laplace draws, ``"est"`` for the estimator's)."""
    from dpstats.mechanisms import simulation as sim
    real = sim.simulation_noise

    def noise(shapes, kinds=None, seed=sim.SIMULATION_SEED):
        return real(shapes, kinds, seed=int(rule("lap" if "lap" in shapes else "est")))
    return noise


def _rerun(kw: dict, rule, draws: int | None) -> np.ndarray:
    """Standard errors of the captured inference with seeds by ``rule`` (None: as the code
    does) and ``draws`` (None: the code's)."""
    from dpstats.estimators.inference import simulate, ssp
    saved = (ssp.simulation_noise, simulate.simulation_noise)
    try:
        if rule is not None:
            ssp.simulation_noise = simulate.simulation_noise = _patched_noise(rule)
        args = copy.deepcopy(kw)
        if draws is not None:
            args["draws"] = draws
        inf = REAL(**args)
    finally:
        ssp.simulation_noise, simulate.simulation_noise = saved
    return np.sqrt(np.diag(inf.cov))


def _fixed(k: int):
    """The seeds before per-fit seeding (7 for the Laplace draws, SIMULATION_SEED for the
    estimator's), plus ``k``: the same draws in every fit."""
    from dpstats.mechanisms.simulation import SIMULATION_SEED
    return lambda name: (7 if name == "lap" else SIMULATION_SEED) + k


def one_fit(cell: dict, method: str, rep: int, big: int) -> list[dict]:
    """Rows (one per coefficient) of one fit: error and each variant's standard error."""
    import dpstats as dp
    from dpstats.estimators.inference import ssp
    rng = np.random.default_rng([rep, cell["n"], cell["p"], int(cell["eps"] * 10),  # as
                                 zlib.crc32(cell["covariates"].encode()) % 997,  # ic.one_rep
                                 zlib.crc32(cell["errors"].encode()) % 991])
    df = ic.simulate(cell, rng)
    seen: list = []

    def spy(kind, **kw):
        seen.append({"kind": kind, **copy.deepcopy(kw)})
        return REAL(kind, **kw)
    ssp.ssp_inference = spy
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kw = {} if method == "default" else {"method": method}
            fit = dp.dp_lm("y ~ .", df, eps=cell["eps"], delta=ic.DELTA, select=None,
                           random_state=int(rng.integers(2**31)), **kw)
    finally:
        ssp.ssp_inference = REAL
    beta = ic.truth(cell["p"])
    err = fit.params.to_numpy() - beta
    bse = fit.bse.to_numpy()
    ols = ic._classical_se(df, False)
    if not seen or not np.isfinite(bse).all():
        return []
    kw = seen[0]
    if not np.allclose(_rerun(kw, None, None), bse, rtol=1e-9, atol=0):
        raise RuntimeError(f"rep {rep}: re-run standard errors differ from the fit's")
    ses = {"shipped": bse, "fixed": _rerun(kw, _fixed(0), None),
           "fixed+1": _rerun(kw, _fixed(1), None), "fixed+2": _rerun(kw, _fixed(2), None),
           "perfit": _rerun(kw, lambda name: 1_000_003 * (rep + 1) + (name == "lap"), None),
           "big": _rerun(kw, lambda name: 7_000_003 * (rep + 1) + (name == "lap"), big)}
    return [{"rep": rep, "kind": kw["kind"], "coef": j, "err": err[j], "ols_se": ols[j],
             **{f"se_{v}": ses[v][j] for v in VARIANTS}} for j in range(beta.size)]


def table(d: pd.DataFrame) -> pd.DataFrame:
    """Per coefficient: each variant's coverage, its mean se / big's, and calibration."""
    rows, vs = [], [v for v in VARIANTS if f"se_{v}" in d]     # older files: no "shipped"
    for j, g in d.groupby("coef"):
        r = {"coef": j, "fits": len(g)}
        for v in vs:
            r[f"cov_{v}"] = float(np.mean(np.abs(g["err"]) <= Z * g[f"se_{v}"]))
        for v in vs[:-1]:
            r[f"se_{v}/big"] = float(np.mean(g[f"se_{v}"] / g["se_big"]))
        r["sd_err/rms_se_big"] = float(np.std(g["err"]) / np.sqrt(np.mean(g["se_big"] ** 2)))
        r["mean_z"] = float(np.mean(g["err"] / g["se_big"]))
        r["width/ols"] = float(np.median(g["se_fixed"] / g["ols_se"]))
        rows.append(r)
    out = pd.DataFrame(rows)
    tot = {"coef": "all", "fits": int(out["fits"].iloc[0])}
    for v in vs:
        c = out[f"cov_{v}"]
        tot[f"cov_{v}"] = f"{c.mean():.3f} ({c.min():.3f}-{c.max():.3f})"
    return pd.concat([out, pd.DataFrame([tot])], ignore_index=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", default="centre")
    ap.add_argument("--method", default="default")
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--big", type=int, default=20_000, help="draws of the 'big' variant")
    ap.add_argument("--out", default=None)
    ap.add_argument("--from", dest="from_", default=None, help="only summarise this CSV")
    a = ap.parse_args(argv)
    if a.from_:
        d = pd.read_csv(a.from_)
    else:
        cells = dict(ic.cells())
        rows, t0 = [], time.time()
        for name in a.cells.split(","):
            for rep in range(a.reps):
                rows += [{"cell": name, **r} for r in one_fit(cells[name], a.method, rep,
                                                               a.big)]
                if a.out and (rep + 1) % 25 == 0:
                    pd.DataFrame(rows).to_csv(a.out, index=False)
                    print(f"{name} {rep + 1}/{a.reps} {time.time() - t0:.0f}s", flush=True)
        d = pd.DataFrame(rows)
        if a.out:
            d.to_csv(a.out, index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        for name, g in d.groupby("cell", sort=False):
            print(f"\n{name}: {g['rep'].nunique()} fits ({a.method if not a.from_ else ''})")
            print(table(g).round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
