"""The coverage benchmark of issue 16: one declared grid over every method that gives intervals
(and those that do not), linear and logistic, in one table and one results CSV.

It runs the cell generators and fitters of the three specialised scripts (it does not repeat
them) and puts their results in one schema:

* ``lm`` (:mod:`interval_coverage`): ``dp_lm`` / ``dp_glm`` with ``bounds="auto"``,
  ``select=None``; centre n = 20,000, p = 5, eps = 1, Gaussian covariates and errors, and
  one-factor arms n in {2,000, 200,000}, p in {1, 10}, eps in {0.5, 4}, skewed covariates
  (centred exponential), a binary factor, t(3) and heteroscedastic errors; methods ``default``
  (``method="auto"``), ``adassp``, ``bas``, ``dpgd``, ``fw``, ``tukey``; logistic
  (``dp_glm`` default) on the n and eps arms.
* ``tukey`` (:mod:`tukey_coverage`): the Tukey mechanism where it runs, centre n = 100,000,
  p = 5, eps = 1, arms n in {20,000, 200,000}, p in {1, 10}, eps in {0.5, 4}, skewed
  covariates, t(3) and heteroscedastic errors; ``method="tukey"`` at the committed release
  gate (the default picks Tukey in these cells: :mod:`tukey_coverage` checks it is the same
  fit).
* ``glm`` (:mod:`glm_coverage`): dp_glm's default (objective / output perturbation), DP-GD
  for dp_glm and dp_lm; centre n = 20,000, p = 5, eps = 1, arms n in {5,000, 100,000}, p in
  {1, 10}, eps in {0.5, 4}, skewed (centred log-normal) and binary covariates.

Per (family, cell, method) it reports ``reps``, ``with_interval`` (share of fits with finite
standard errors; 1 - the withheld share), ``coverage`` of nominal 95% intervals over
coefficients and fits with an interval, ``coverage_min`` (the worst coefficient),
``coverage_max``, ``width_ratio`` (median width / the non-private OLS or logistic interval on
the same data: the baseline in the same run), and the bias/variance diagnosis: ``z_bias``
(largest |mean z| over coefficients, z = (centre - truth) / se, centre the interval's
midpoint: the estimate, or for dp_glm's objective perturbation the estimate minus its
estimated bias) and ``z_sd_min``, ``z_sd_max`` (sd of z per coefficient; 1 is exact,
below 1 conservative), both without the share ``z_wild`` of intervals with |z| > 10
(broken, not miscalibrated); for the ``glm`` family also ``coverage_box``: of the
non-private fit on the inputs clipped to the fit's released box (what the clipping methods'
intervals say they cover). Target (issue 16): every coefficient in [0.93, 0.98] where the
fit releases.

    nice -n 10 python benchmarks/coverage.py --reps 500 [--families lm,tukey,glm]
        [--cells centre,p=1,...] [--methods default,bas,...] [--out FILE]
        [--glm-detail FILE]     # also the glm family's per-coefficient rows (glm_coverage.csv)
    python benchmarks/coverage.py --merge imported FILE ...  # into results/coverage_all.csv
    python benchmarks/coverage.py --quick                    # smoke test, a few seconds

Each cell's row is written as soon as it is done (partial results survive a kill); separate
processes write separate ``--out`` files that ``--merge`` combines (a later file's row
replaces an earlier one with the same family, cell, model and method; ``imported`` stands for
the three scripts' committed results, :func:`imported`, so cells not re-run here still appear,
with their source). Writes ``benchmarks/results/coverage_all.csv``.

The committed ``coverage_all.csv`` (session 8) is ``--merge imported`` followed by the runs
kept in ``results/coverage_runs/`` (their file names say family, cell and replications;
``lm_dpgd_skewed_300_gate0.3.csv`` is the run before DP-GD's squared-loss convergence gate
moved to 0.2 and is not merged), plus the Tukey fits of ``tukey_coverage.py`` (imported):
every cell keeps the source and replication count it came from.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

if __name__ == "coverage":       # imported as the `coverage` package (numba looks for it)
    raise ImportError("benchmarks/coverage.py is a script, not the coverage package")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import glm_coverage as gc  # noqa: E402
import interval_coverage as ic  # noqa: E402
import tukey_coverage as tc  # noqa: E402

OUT = HERE / "results" / "coverage_all.csv"
KEY = ["family", "cell", "model", "method"]
Z = 1.959963984540054
#: |z| above this is "wild" (a broken interval, not a miscalibrated one): counted in
#: ``z_wild`` and left out of ``z_bias`` and ``z_sd_*``.
WILD = 10.0


def _glm_name(cell: dict) -> str:
    """A glm_coverage cell's name as the other families name theirs (``centre``, ``n=5000``;
    two arms moved: ``n=100000+covariates=skewed``)."""
    moved = [f"{'covariates' if key == 'cov' else key}={cell[key]}"
             for key in ("n", "p", "eps", "cov") if cell[key] != gc.CENTRE[key]]
    return "+".join(moved) or "centre"


#: The declared grid: family -> (cells, methods, cells that also run the logistic default).
GRID = {
    "lm": ([d for d, _ in ic.cells()], ["default", "adassp", "bas", "dpgd", "fw", "tukey"],
           ["centre", "n=2000", "n=200000", "eps=0.5", "eps=4.0"]),
    "tukey": ([c["cell"] for c in tc.cells()], ["tukey"], []),
    "glm": ([_glm_name(c) for c in gc.CELLS], list(gc.METHODS), []),
}


def _row(family, cell_name, model, method, settings, reps, has, z, ratio, sec,
         z_box=None) -> dict:
    """One CSV row from per-fit arrays: ``has`` (fit has intervals), ``z`` (reps, coefs)
    standardised errors (NaN: no interval), ``ratio`` (reps, coefs) widths / baseline;
    ``z_box`` the errors against the non-private fit on inputs clipped to the released box
    (what the clipping methods' intervals say they cover; ``coverage_box``)."""
    z = np.asarray(z, dtype=float).reshape(len(has), -1)
    ratio = np.asarray(ratio, dtype=float).reshape(len(has), -1)
    zk = z[np.asarray(has, dtype=bool)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hit = np.where(np.isfinite(zk), np.abs(zk) <= Z, np.nan)
        zt = np.where(np.abs(zk) <= WILD, zk, np.nan)     # the z statistics without wild ones
        per = np.nanmean(hit, axis=0) if zk.size else np.array([np.nan])
        return {"family": family, "cell": cell_name, "model": model, "method": method,
                **{k: settings.get(k) for k in ("n", "p", "eps", "covariates", "errors")},
                "reps": int(reps), "with_interval": float(np.mean(has)) if len(has) else 0.0,
                "coverage": float(np.nanmean(hit)) if zk.size else np.nan,
                "coverage_min": float(np.nanmin(per)), "coverage_max": float(np.nanmax(per)),
                "width_ratio": float(np.nanmedian(ratio[np.asarray(has, dtype=bool)]))
                if zk.size else np.nan,
                "z_bias": float(np.nanmax(np.abs(np.nanmean(zt, axis=0)))) if zk.size
                else np.nan,
                "z_sd_min": float(np.nanmin(np.nanstd(zt, axis=0))) if zk.size else np.nan,
                "z_sd_max": float(np.nanmax(np.nanstd(zt, axis=0))) if zk.size else np.nan,
                "z_wild": float(np.mean(np.abs(zk[np.isfinite(zk)]) > WILD)) if zk.size
                else np.nan,
                "coverage_box": _coverage(z_box, has),
                "sec": float(sec)}


def _coverage(z, has) -> float:
    """Share of ``|z| <= 1.96`` over fits with intervals (NaN when ``z`` is None or empty)."""
    if z is None:
        return np.nan
    zk = np.asarray(z, dtype=float).reshape(len(has), -1)[np.asarray(has, dtype=bool)]
    zk = zk[np.isfinite(zk)]
    return float(np.mean(np.abs(zk) <= Z)) if zk.size else np.nan


def run_lm(cell_name: str, method: str, reps: int, logistic: bool) -> dict:
    """A cell of :mod:`interval_coverage` (its gate applied as the code releases)."""
    cell = dict(ic.cells())[cell_name]
    t0 = time.time()
    raw: list = []
    ic.run_cell(cell_name, cell, method, reps, 1, logistic, raw)
    has, z, ratio = [], [], []
    for r in raw:
        r.setdefault("cell", cell)
        ok = bool(np.isfinite(r["hit"]).any()) and not ic.gated(r)
        infl = ic._inflation(r)
        has.append(ok)
        z.append(np.asarray(r["z"], dtype=float) / infl)
        ratio.append(np.asarray(r["ratio"], dtype=float) * infl)
    return _row("lm", cell_name, "logistic" if logistic else "linear", method, cell, reps,
                has, z, ratio, time.time() - t0)


def run_tukey(cell_name: str, method: str, reps: int) -> dict:
    """A cell of :mod:`tukey_coverage` at the committed release gate."""
    cell = {c["cell"]: c for c in tc.cells()}[cell_name]
    t0 = time.time()
    has, z, ratio = [], [], []
    for rep in range(reps):
        df, truth = tc.simulate(cell, 1_000_000 + rep)
        rows = tc.one_fit(df, truth, method, float(cell["eps"]), 7_000 + rep)
        has.append(any(r["has_se"] for r in rows))
        z.append([(r["estimate"] - r["truth"]) / r["se"] for r in rows])
        ratio.append([r["width_ratio"] for r in rows])
    return _row("tukey", cell_name, "linear", method, cell, reps, has, z, ratio,
                time.time() - t0)


#: Where :func:`run_glm` also appends its per-coefficient rows (glm_coverage.py's schema;
#: ``--glm-detail``), None for nowhere.
GLM_DETAIL: list = [None]
#: Added to the glm family's cell seeds (``--seed-offset``): fresh data for a derivation, kept
#: apart from the committed cells (offset 0).
SEED_OFFSET = [0]


def run_glm(cell_name: str, method: str, reps: int) -> dict:
    """A cell of :mod:`glm_coverage` (its model: logistic for ``glm-*``, linear for
    ``lm-dpgd``)."""
    i = GRID["glm"][0].index(cell_name)
    cell = gc.CELLS[i]
    t0 = time.time()
    raw: list = []
    out = gc.run_cell(cell, method, reps, min(reps, 20), seed=1000 + 17 * i + SEED_OFFSET[0],
                      raw=raw)
    est = pd.DataFrame(raw)
    if GLM_DETAIL[0]:
        path = Path(GLM_DETAIL[0])
        out.to_csv(path, mode="a", header=not path.exists(), index=False)
    k = cell["p"] + 1
    has = est["released"].to_numpy()[::k]
    centre = est["centre"]          # the interval's midpoint: params, or params - bias
    z = ((centre - est["truth"]) / est["bse"]).to_numpy().reshape(reps, k)
    z_box = ((centre - est["box_truth"]) / est["bse"]).to_numpy().reshape(reps, k)
    ratio = np.tile(out["median_width_ratio"].to_numpy(), (reps, 1))   # medians (per coef)
    settings = {"n": cell["n"], "p": cell["p"], "eps": cell["eps"], "covariates": cell["cov"],
                "errors": "logistic" if method.startswith("glm") else "gaussian"}
    return _row("glm", cell_name, "logistic" if method.startswith("glm") else "linear", method,
                settings, reps, has, z, ratio, time.time() - t0, z_box)


def jobs(families, cells, methods, logistic: bool) -> list[tuple]:
    """``(family, cell, method, logistic)`` of the declared grid, filtered."""
    out = []
    for fam in families:
        names, meths, logit_cells = GRID[fam]
        for c in names:
            if cells and c not in cells:
                continue
            out += [(fam, c, m, False) for m in meths if not methods or m in methods]
            if logistic and fam == "lm" and c in logit_cells and (not methods or "default"
                                                                   in methods):
                out.append((fam, c, "default", True))
    return out


def run(job: tuple, reps: int) -> dict:
    fam, cell, method, logistic = job
    if fam == "lm":
        return run_lm(cell, method, reps, logistic)
    if fam == "tukey":
        return run_tukey(cell, method, reps)
    return run_glm(cell, method, reps)


COLUMNS = ["family", "cell", "model", "method", "reps", "with_interval", "coverage",
           "coverage_min", "coverage_max", "width_ratio", "z_bias", "z_sd_min", "z_sd_max",
           "z_wild", "coverage_box", "source"]


def _print(row: dict, i: int, total: int, t0: float) -> None:
    print(f"[{i}/{total} {time.time() - t0:6.0f}s] {row['family']:5s} {row['cell']:17s} "
          f"{row['model']:8s} {row['method']:9s} reps {row['reps']:4d}  intervals "
          f"{row['with_interval']:.2f}  coverage {row['coverage']:.3f} "
          f"[{row['coverage_min']:.3f}, {row['coverage_max']:.3f}]  width x"
          f"{row['width_ratio']:.2f}  |mean z| <= {row['z_bias']:.2f}  sd z "
          f"{row['z_sd_min']:.2f}-{row['z_sd_max']:.2f}"
          + (f"  |z| > {WILD:g}: {row['z_wild']:.3f}" if row["z_wild"] > 0 else "")
          + ("" if np.isnan(row["coverage_box"]) else
             f"  box-fit coverage {row['coverage_box']:.3f}"), flush=True)


def imported(results: Path = HERE / "results") -> pd.DataFrame:
    """Rows of the specialised scripts' committed results, in this schema (column ``source``):
    interval_coverage.py's ``coverage.csv`` (summary rows, newest first: of several runs of
    a cell and method the first row is kept, the older ones are the file's history),
    glm_coverage.py's ``glm_coverage.csv`` (per coefficient) and tukey_coverage.py's merged
    summary (``tukey_coverage.csv``, the committed gate applied: its ``*_gated`` columns). A
    fresh run of the same key replaces them (``--merge``)."""
    rows = []
    lm = pd.read_csv(results / "coverage.csv")    # newest rows first (column ``run``): an
    lm = lm.drop_duplicates(["design", "model", "method"], keep="first")  # older run drops
    for _, r in lm.iterrows():
        rows.append({"family": "lm", "cell": r["design"], "model": r["model"],
                     "method": r["method"], **{k: r[k] for k in ("n", "p", "eps", "covariates",
                                                                 "errors")},
                     "reps": int(r["reps"]), "with_interval": r["with_interval"],
                     "coverage": r["coverage"], "coverage_min": r["coverage_min"],
                     "width_ratio": r["width_ratio"], "source": "interval_coverage.py"})
    glm = pd.read_csv(results / "glm_coverage.csv")
    for (method, n, p, eps, cov), g in glm.groupby(["method", "n", "p", "eps", "cov"],
                                                    sort=False):
        cell = _glm_name({"n": n, "p": p, "eps": eps, "cov": cov})
        rows.append({"family": "glm", "cell": cell, "method": method,
                     "model": "logistic" if method.startswith("glm") else "linear",
                     "n": n, "p": p, "eps": eps, "covariates": cov,
                     "reps": int(g["reps"].iloc[0]),
                     "with_interval": 1.0 - g["withheld_share"].iloc[0],
                     "coverage": g["coverage"].mean(), "coverage_min": g["coverage"].min(),
                     "coverage_max": g["coverage"].max(),
                     "width_ratio": g["median_width_ratio"].median(),
                     "source": "glm_coverage.py"})
    tk = results / "tukey_coverage.csv"     # tukey_coverage.py --merge's summary: a fit in
    if tk.exists():                          # several fits files counts once (the newest)
        for _, r in pd.read_csv(tk).iterrows():
            if r["method"] != "tukey":
                continue
            rows.append({"family": "tukey", "cell": r["cell"], "model": "linear",
                         "method": "tukey", **{k: r[k] for k in ("n", "p", "eps",
                                                                 "covariates", "errors")},
                         "reps": int(r["reps"]), "with_interval": r["with_intervals_gated"],
                         "coverage": r["coverage_gated"], "coverage_min": r["worst_coef_gated"],
                         "coverage_max": r["best_coef_gated"],
                         "width_ratio": r["width_ratio_gated"], "source": "tukey_coverage.py"})
    return pd.DataFrame(rows)


def merge(files: list[str], out: Path) -> pd.DataFrame:
    """Rows of several runs, a later file's row replacing an earlier one (same key)."""
    table = pd.concat([imported() if f == "imported" else pd.read_csv(f) for f in files],
                      ignore_index=True)
    table["source"] = table["source"].fillna("coverage.py") if "source" in table else \
        "coverage.py"
    table = table.drop_duplicates(KEY, keep="last")
    table.to_csv(out, index=False)
    return table


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--families", default="lm,tukey,glm")
    ap.add_argument("--cells", default="", help="comma list of cell names (default: all)")
    ap.add_argument("--methods", default="", help="comma list of methods (default: all)")
    ap.add_argument("--no-logistic", action="store_true", help="skip the lm logistic cells")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--glm-detail", default=None,
                    help="also append the glm family's per-coefficient rows to this CSV")
    ap.add_argument("--seed-offset", "--glm-seed", dest="seed_offset", type=int, default=0,
                    help="added to the glm family's cell seeds (fresh data: a derivation, or "
                         "another batch of replications)")
    ap.add_argument("--merge", nargs="+", default=None, help="only merge these CSVs into --out")
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: 2 reps of small cells, one method per family")
    a = ap.parse_args(argv)
    if a.merge:
        table = merge(a.merge, Path(a.out))
        with pd.option_context("display.width", 220, "display.max_columns", 30):
            print(table[COLUMNS].round(3).to_string(index=False))
        return 0
    GLM_DETAIL[0] = a.glm_detail
    SEED_OFFSET[0] = a.seed_offset
    if a.quick:
        todo = [("lm", "n=2000", "adassp", False), ("lm", "n=2000", "default", True),
                ("glm", "n=5000", "lm-dpgd", False), ("tukey", "n=20000", "tukey", False)]
        a.reps = 2
    else:
        todo = jobs(a.families.split(","), set(filter(None, a.cells.split(","))),
                    set(filter(None, a.methods.split(","))), not a.no_logistic)
    rows, t0 = [], time.time()
    for i, job in enumerate(todo, 1):
        rows.append({**run(job, a.reps), "source": "coverage.py"})
        _print(rows[-1], i, len(todo), t0)
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_csv(a.out, index=False)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
