"""How many rows the Tukey intervals' private scale medians need: a data-independent simulation
of :data:`dpstats.estimators.inference.tukey.SCALE_NEPS` (no data file is read).

Each window of the Tukey intervals divides a private median of the residuals ``|y - x theta|``
by a private median of ``|x_j - c_j|`` (:func:`dpstats.mechanisms.private_centre_value`, the
1-D Tukey-depth exponential mechanism on the public geometric grid, ``eps`` each, on a random
subset of ``n`` rows). The window must lie within a factor of about 2.9 of the models' median
absolute deviation for its count to fall inside ``[0.05, 0.95] m`` (a Gaussian cloud: a window
``w`` holds ``2 Phi(w / sigma) - 1`` of the models), so each of the two medians must be within
about ``sqrt(2.9) ~ 1.7`` of its target. The mechanism weighs every grid point by
``exp(eps * depth)``; about 2^18 grid points have depth ~0, so the release concentrates near
the median only once ``n eps`` (a point's depth is ``n`` times a quantile distance) is large:
its accuracy is a function of ``n eps`` and the shape of the column.

For shapes ``|N(0, 1)|`` (a Gaussian column about its centre, and Gaussian residuals),
``|N(0.5, 1)|`` (a centre off by half a standard deviation), ``|t_3|`` (heavy tails) and
``|Exp(1) - log 2|`` (a skewed column about its median), at ``n`` = 2^15 and 2^17 rows and a
grid of ``n eps``, it releases the median ``--reps`` times (fixed seed) and reports the share
of releases outside a factor ``--factor`` (default 1.5) of the column's true median. The
smallest ``n eps`` of the grid at which that share is at most 1% in every shape and size is the
constant (1.5 leaves room for the two medians together: 1.5^2 = 2.25 < 2.9).

    nice -n 10 python benchmarks/tukey_scale_neps.py [--reps 400] [--neps 10,20,...]

Writes benchmarks/results/tukey_scale_neps.csv and prints the table (with progress).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
import speed_common  # noqa: F401  (puts this checkout's dpstats first)

from dpstats.mechanisms import private_centre_value
from dpstats.mechanisms.simulation import SIMULATION_SEED

OUT = Path(__file__).resolve().parent / "results" / "tukey_scale_neps.csv"


def shapes(n: int, rng) -> dict[str, np.ndarray]:
    """The columns ``|v|`` whose median is released (synthetic, fixed seed)."""
    return {"|N(0,1)|": np.abs(rng.standard_normal(n)),
            "|N(0.5,1)|": np.abs(rng.standard_normal(n) + 0.5),
            "|t3|": np.abs(rng.standard_t(3, n)),
            "|Exp-log2|": np.abs(rng.exponential(1.0, n) - np.log(2.0))}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--neps", default="10,20,30,40,50,60,80,100")
    ap.add_argument("--sizes", default="32768,131072")
    ap.add_argument("--factor", type=float, default=1.5)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    neps = [float(v) for v in a.neps.split(",")]
    sizes = [int(float(v)) for v in a.sizes.split(",")]
    rng = np.random.default_rng(SIMULATION_SEED)
    rows, t0 = [], time.perf_counter()
    for n in sizes:
        for shape, v in shapes(n, rng).items():
            true = float(np.median(v))
            for ne in neps:
                got = np.array([private_centre_value(v, ne / n, rng) for _ in range(a.reps)])
                ratio = got / true
                miss = float(np.mean((ratio > a.factor) | (ratio < 1.0 / a.factor)))
                rows.append({"n": n, "shape": shape, "n_eps": ne, "reps": a.reps,
                             "miss_share": miss, "median_ratio": float(np.median(ratio)),
                             "q05_ratio": float(np.quantile(ratio, 0.05)),
                             "q95_ratio": float(np.quantile(ratio, 0.95))})
                print(f"[{time.perf_counter() - t0:6.0f} s] n={n} {shape:11s} n*eps={ne:5g}: "
                      f"outside x{a.factor:g}: {miss:.3f}", flush=True)
    table = pd.DataFrame(rows)
    Path(a.out).parent.mkdir(exist_ok=True)
    table.to_csv(a.out, index=False)
    worst = table.groupby("n_eps")["miss_share"].max()
    print("\nworst share outside the factor, over shapes and sizes:\n"
          + worst.round(4).to_string())
    ok = worst[worst <= 0.01]
    print(f"\nsmallest n*eps with at most 1% outside x{a.factor:g}: "
          f"{ok.index.min() if len(ok) else 'none on the grid'}")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
