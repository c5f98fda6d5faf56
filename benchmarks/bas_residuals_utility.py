"""Point-estimate accuracy of Boosted AdaSSP with its residuals on the unclipped rows (the
default since issue 16) against the clipped rows (the behaviour before), in the same run, on
the ten regression files.

Median test R^2 over 10 random 90/10 splits at (eps = ln 3, delta = 1e-5), the protocol and
splits of benchmarks/adassp_bas_utility.py (``bas``: variant "scaled", bounds "auto", called
on the design of ``label ~ .``): ``raw`` scores ``X_test @ params`` (what
``DPLMResult.score`` computes), ``clip`` scores test features clipped to the released box.
Every variant gets the same seeds, so the bounds releases are identical and only the boosting
differs. ``--boxes``: values of ``bas.RESID_BOX`` (the half-widths of the released box the
residuals' rows are clipped to) run as ``bas[box=K]``. Prints a table with progress; writes
benchmarks/results/bas_residuals_utility.csv.

    nice python benchmarks/bas_residuals_utility.py [--trials 10] [--files california,...]
        [--boxes 2,4,1048576]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd
from adassp_bas_utility import LABELS, METHODS, run

from dpstats.estimators import bas

OUT = Path(__file__).resolve().parent / "results" / "bas_residuals_utility.csv"
VARIANTS = {"bas[unclipped]": ("bas", {"residuals": "unclipped"}),
            "bas[clipped]": ("bas", {"residuals": "clipped"})}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--files", default=",".join(LABELS))
    ap.add_argument("--boxes", default=str(bas.RESID_BOX))
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    METHODS.update(VARIANTS)
    boxes = [float(b) for b in a.boxes.split(",")]
    names = ["bas[clipped]"] + [f"bas[box={b:g}]" for b in boxes]
    print(f"{'file':14s} " + " ".join(f"{n:>16s}" for n in names) + "   (median test R^2: "
          "raw X @ params / X clipped to the box, as DPLMResult.score)", flush=True)
    parts, default = [], bas.RESID_BOX
    for name in a.files.split(","):
        t0 = time.perf_counter()
        res = [run([name], a.trials, ["bas[clipped]"]).assign(method="bas[clipped]")]
        for b in boxes:
            bas.RESID_BOX = b
            try:
                res.append(run([name], a.trials, ["bas[unclipped]"])
                           .assign(method=f"bas[box={b:g}]"))
            finally:
                bas.RESID_BOX = default
        res = pd.concat(res)
        parts.append(res)
        med = res.groupby("method")[["r2_raw", "r2_clip"]].median()
        print(f"{name:14s} " + " ".join(
            f"{med.r2_raw[n]:7.3f}/{med.r2_clip[n]:7.3f}"[:16].rjust(16) for n in names)
            + f"   {time.perf_counter() - t0:.0f}s", flush=True)
        pd.concat(parts).to_csv(a.out, index=False)
    res = pd.concat(parts)
    wide = res.pivot_table(index=["dataset", "trial"], columns="method", values="r2_clip")
    for n in names[1:]:
        diff = (wide[n] - wide["bas[clipped]"]).groupby("dataset").median()
        print(f"{n}: median paired change of the clipped-input test R^2 per file: "
              + ", ".join(f"{d} {v:+.3f}" for d, v in diff.items()))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
