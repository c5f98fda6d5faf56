"""dp_glm's objective-perturbation intervals under :mod:`dpstats.estimators.inference.glm_box`'s
switches, on recorded fits, without refitting (issue 16; design-notes.md, "dp_glm's correction
calibrated; the box's cut").

The fits are recorded by ``glm_interval_variants.py --save PREFIX`` (``glm_coverage.py``'s
cells; ``--seed`` another seed base) and ``glm_intercept_record.py`` (``glm_intercept_design.py``'s
design; START another offset): per fit with intervals the released inputs of
:func:`dpstats.estimators.inference.glm.glm_inference`, the released box's counts past it
(``box``), the released coefficients and the truth. Each variant sets the switches and rebuilds
the intervals with the code's ``glm_inference``: post-processing of the recorded released values.

* ``code``: the switches off (the bootstrap's correction ``debias``; the code as it was);
* ``calib``: :data:`~.glm_box.STRENGTH` ``"calib"`` (the correction's strength read one level
  down);
* ``calib+box``: and :data:`~.glm_box.BOX` (the box's outward move of the slopes of columns
  without a released cut tail);
* ``calib+box+width``: and :data:`~.glm_box.WIDTH` 0.5 (half the covariance's convexity
  excess, :func:`~.glm_box.width_ratio`; at 1 the eps 0.5 cell's recorded fits were too
  narrow, sd z 1.09-1.16: measured before the rule, on ``calib+width``);
* ``calib+width``, ``box``: the other combinations, for the split;
* ``calibgauss+box`` (added after the recorded cells' figures, when ``calib`` lowered the skewed
  cell's x5 to 0.928 where ``code`` is at 0.934): ``calib+box`` with ``calib`` only where no
  cut tail's move enters (:data:`~.glm_box.CALIB_TAIL` False; ``calib`` was measured on such
  fits), judged by the same rule and then on fresh seeds.

**Decision rule** (written and committed before the final figures): over the 7 glm cells
(centre, n = 100,000, p = 1, eps 0.5, eps 4, skewed, binary) and the 3 intercept-design cells
(+1 eps 0.5, +1 eps 1, -0.5 eps 0.5) on the recorded fits (``coverage.py``'s seeds), the
variant with the fewest (cell, coefficient) coverages outside [0.93, 0.98]; ties by the
smallest largest distance outside the band, then by the narrower median width (relative to
``code``, averaged over coefficients). A variant is not eligible if it lowers any coefficient's
coverage below 0.93 where ``code`` is inside the band. It is adopted only if it beats ``code``
on the first criterion, or ties it and beats it on the second, and then only if on FRESH seeds
(eps 0.5 glm cell, intercept +1 eps 0.5, centre; seed base / START 7000) it again has no more
coefficients outside the band than ``code``.

    nice -n 10 python benchmarks/glm_box_variants.py cell5=/tmp/glmbox/rec_cell5.pkl@500 \\
        int1_eps0.5=/tmp/glmbox/int_p1_eps0.5_500.pkl@500 --summary FILE
    # coverage.py rows of the cellI labels under one variant:
    ... --variants calib+box --rows-dir benchmarks/results/coverage_runs --tag s17

Reads no real data.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import glm_bias_variants as bv  # noqa: E402

from dpstats.estimators.inference import glm as G  # noqa: E402
from dpstats.estimators.inference import glm_box  # noqa: E402

Z = 1.959963984540054
OLD = "code"
VARIANTS = (OLD, "calib", "calib+box", "calib+box+width", "calib+width", "box")


@contextmanager
def switches(variant: str):
    """:mod:`.glm_box`'s switches set as ``variant`` says (restored on exit)."""
    old = glm_box.STRENGTH, glm_box.BOX, glm_box.WIDTH, glm_box.CALIB_TAIL
    parts = set(variant.split("+"))
    glm_box.STRENGTH = "calib" if parts & {"calib", "calibgauss"} else "debias"
    glm_box.CALIB_TAIL = "calibgauss" not in parts
    glm_box.BOX, glm_box.WIDTH = "box" in parts, 0.5 if "width" in parts else 0.0
    try:
        yield
    finally:
        glm_box.STRENGTH, glm_box.BOX, glm_box.WIDTH, glm_box.CALIB_TAIL = old


def box_arg(f: dict):
    """``glm_inference``'s ``box`` from a recorded fit (None: not recorded or no intercept)."""
    b = f.get("box")
    return None if b is None or b["icol_k"] is None else (b["cut"], b["icol_k"])


def evaluate(fits: list[dict], variant: str) -> dict:
    """Per fit and coefficient: ``z`` at the released centre, ``hit``, ``width``."""
    z, width = [], []
    with switches(variant):
        for f in fits:
            box = box_arg(f) if glm_box.BOX else None
            kw = {k: v for k, v in f["kw"].items() if k != "box"}     # recorded as None
            inf = G.glm_inference("objpert", **kw, box=box)
            se = np.sqrt(np.diag(inf.cov))
            bias = np.zeros_like(se) if inf.bias is None else np.asarray(inf.bias)
            z.append((f["est"] - bias - f["beta"]) / se)
            width.append(2 * Z * se)
    z = np.array(z)
    return {"z": z, "hit": np.abs(z) <= Z, "width": np.array(width)}


def table(label: str, reps: int, res: dict) -> pd.DataFrame:
    """One row per variant and coefficient (``glm_bias_variants.table``'s columns)."""
    t = bv.table(label, reps, {(OLD if v == OLD else v): r for v, r in res.items()})
    base = np.median(res[OLD if OLD in res else next(iter(res))]["width"], axis=0)
    for v, r in res.items():
        t.loc[t.variant == v, "width_vs_old"] = np.median(r["width"], axis=0) / base
    return t


def score(t: pd.DataFrame) -> pd.DataFrame:
    """The decision rule's criteria per variant (module docstring)."""
    lo, hi = bv.BAND
    out = np.maximum(lo - t["coverage"], t["coverage"] - hi).clip(lower=0.0)
    t = t.assign(outside=out > 0, distance=out)
    code = t[t.variant == OLD].set_index(["cell", "coef"])["coverage"]
    inside = code.between(lo, hi)
    key = pd.MultiIndex.from_frame(t[["cell", "coef"]])
    t = t.assign(breaks=(t["coverage"].to_numpy() < lo) & inside.reindex(key).to_numpy())
    return (t.groupby("variant", sort=False)
            .agg(outside=("outside", "sum"), max_distance=("distance", "max"),
                 width=("width_vs_old", "mean"), breaks=("breaks", "sum"),
                 worst=("coverage", "min"), best=("coverage", "max"))
            .sort_values(["breaks", "outside", "max_distance", "width"]))


def main(argv=None) -> int:
    ap = bv.fits_parser(__doc__.splitlines()[0], VARIANTS)
    ap.add_argument("--tag", default="s17", help="the rows' file-name tag")
    ap.add_argument("--no-code", action="store_true",
                    help="without the code's column (merge --summary files to score)")
    a = ap.parse_args(argv)
    variants = a.variants.split(",")
    if OLD not in variants and not a.no_code:
        variants = [OLD, *variants]
    frames = []
    for label, path, reps, fits in bv.recorded(a.fits):
        res = {v: evaluate(fits, v) for v in variants}
        t = table(label, int(reps), res)
        frames.append(t)
        for v, g in t.groupby("variant", sort=False):
            print(bv.variant_line(label, v, g, len(fits), reps, "code"), flush=True)
        if a.rows_dir and label.startswith("cell"):
            i = int(label[4:])
            for v in a.variants.split(","):
                row = bv.coverage_row(i, int(reps), res[v], v)
                row["source"] = (f"glm_box_variants.py {v} on {a.tag} recorded fits "
                                 f"({Path(path).name}; coverage_box not recorded)")
                name = f"glm_glm-auto_{bv.cv_name(i)}_{a.tag}_{reps}.csv"
                pd.DataFrame([row]).to_csv(Path(a.rows_dir) / name, index=False)
    t = pd.concat(frames)
    if a.summary:
        t.to_csv(a.summary, index=False)
    if OLD in variants:
        print(score(t).to_string(float_format=lambda v: f"{v:.3f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
