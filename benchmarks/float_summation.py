"""Sums over rows that mechanisms release: their sensitivity in floating point, their
dependence on how the rows are split, their error against the exact sum, their speed.

A mechanism's sensitivity is a statement about exact sums. Casacuberta, Shoemate, Vadhan and
Wagaman (CCS 2022) showed that a float sum's rounding can move it by more than one row's
contribution; a float sum also depends on the order and grouping of its additions, so a sum
over a dask frame would depend on the partitioning. :mod:`dpstats._kernels.row_sums` puts each
row's terms on a fixed-point grid of the public bound and adds integers (design note "exact
sums"). Four tables:

1. **Adversarial data** (``tests/kernels/test_row_sums.py``'s construction: ``2^m`` ones, then
   ``2^m`` values of ``-0.75 * 2^(m-53)``, and the neighbour with a 1 in front): the
   neighbours' computed difference minus the sensitivity 1, for one sequential loop (the
   Frank-Wolfe kernel before note 79), the compensated blocks of note 79 (the in-memory
   Frank-Wolfe kernel had them until note 86) and the fixed-point sum
   (:func:`~dpstats._kernels.row_sums.tdot`), beside the fixed-point bound ``4 u n``
   (:func:`~dpstats._kernels.row_sums.excess`).
2. **Splits**: ``--splits`` random splits and orders of the same rows into up to 8 parts; the
   number of distinct results (bit patterns) of float sums of the parts (what a dask merge of
   float arrays gave) and of :class:`~dpstats._kernels.row_sums.FixedSum` parts, and the float
   results' largest relative spread.
3. **Grid error**: the fixed-point Gram of rows of norm <= 1 against the float Gram, relative to
   the largest entry, and the Gram's relative shrink ``(1 - s)^2``.
4. **Speed**: median seconds of ``A.T @ A`` and :func:`tdot` at ``--speed`` rows x 20 columns.

    cd benchmarks && python float_summation.py [--m 18,20,22] [--splits 20] [--speed 1e6]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from numba import njit

from dpstats._kernels import frank_wolfe as fw
from dpstats._kernels.row_sums import ROWS, excess, grid_bits, tdot, tdot_fixed

U = 2.0 ** -53


@njit
def _loop_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s


def adversarial(m: int) -> dict:
    """How far neighbours' computed sums differ from the sensitivity 1 on the data built to
    push rounding against it (module docstring), for three ways of summing."""
    x = np.concatenate([np.ones(2 ** m), np.full(2 ** m, -0.75 * 2.0 ** (m - 53))])
    xp = np.concatenate([[1.0], x])

    def fw_sum(v):
        return float(fw.loss_gradient(v[None, :], np.ones(v.size), np.zeros(v.size),
                                      "squared")[0][0])

    ways = {"loop": _loop_sum, "compensated": fw_sum,
            "fixed": lambda v: float(tdot(v[:, None], np.ones(v.size), 1.0, 1.0)[0])}
    return {"rows": xp.size, **{w: f(xp) - f(x) - 1.0 for w, f in ways.items()},
            "bound_fixed": excess(xp.size)}


def splits(n: int, reps: int, seed: int = 0) -> dict:
    """Distinct results of float and fixed-point sums of the same rows split ``reps`` ways."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, 5))
    A /= np.maximum(np.linalg.norm(A, axis=1, keepdims=True), 1.0)
    b = np.clip(rng.normal(size=n), -1, 1)
    floats, fixed, values = set(), set(), []
    for _ in range(reps):
        k = int(rng.integers(1, 9))
        cuts = np.r_[0, np.sort(rng.choice(np.arange(1, n), size=k - 1, replace=False)), n]
        order = rng.permutation(n)
        Ao, bo = A[order], b[order]
        spans = list(zip(cuts[:-1], cuts[1:], strict=True))
        pf = [Ao[lo:hi].T @ bo[lo:hi] for lo, hi in spans]
        px = [tdot_fixed(Ao[lo:hi], bo[lo:hi], 1.0, 1.0) for lo, hi in spans]
        f, x = pf[0], px[0]
        for a, c in zip(pf[1:], px[1:], strict=True):
            f, x = f + a, x + c
        floats.add(f.tobytes())
        fixed.add(x.value.tobytes())
        values.append(f)
    V = np.array(values)
    spread = float(np.max((V.max(0) - V.min(0)) / np.abs(V).max(0)))
    return {"rows": n, "float_distinct": len(floats), "fixed_distinct": len(fixed),
            "float_spread": spread}


def grid_error(n: int, p: int = 20, seed: int = 1) -> dict:
    """The fixed-point Gram of ``n`` rows of norm <= 1 against the float Gram."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, p)) / math.sqrt(p)
    A /= np.maximum(np.linalg.norm(A, axis=1, keepdims=True), 1.0)
    G, F = A.T @ A, tdot(A, A, 1.0, 1.0)
    s = math.sqrt(p) * 2.0 ** -(grid_bits(ROWS) + 1)
    return {"rows": n, "rel_err": float(np.abs(F - G).max() / np.abs(G).max()),
            "rel_err_unshrunk": float(np.abs(F / (1 - s) ** 2 - G).max() / np.abs(G).max()),
            "shrink": 1 - (1 - s) ** 2}


def speed(n: int, p: int = 20, reps: int = 7) -> dict:
    """Median seconds of ``A.T @ A`` and :func:`tdot` (``reps`` runs each, interleaved)."""
    A = np.random.default_rng(2).normal(size=(n, p)) / math.sqrt(p) / 3
    t_blas, t_fixed = [], []
    for _ in range(reps):
        t = time.perf_counter()
        A.T @ A
        t_blas.append(time.perf_counter() - t)
        t = time.perf_counter()
        tdot(A, A, 1.0, 1.0)
        t_fixed.append(time.perf_counter() - t)
    return {"rows": n, "blas": float(np.median(t_blas)), "fixed": float(np.median(t_fixed))}


def _table(title: str, header: str, values: list, line) -> None:
    """Print ``title``, ``header`` and ``line(value)`` for each value, with progress."""
    print(title)
    print(header)
    for i, v in enumerate(values, 1):
        print(f"{line(v)}   [{i}/{len(values)}]", flush=True)


def _adversarial_line(m: int) -> str:
    r = adversarial(m)
    return (f"{r['rows']:10.2e} {r['loop']:10.2e} {r['compensated']:10.2e} "
            f"{r['fixed']:10.2e} {r['bound_fixed']:10.2e}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", default="18,20,22")
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--split-rows", default="1e4,1e5,1e6")
    ap.add_argument("--speed", default="1e6")
    a = ap.parse_args(argv)
    _table("1. Adversarial data: neighbours' computed difference minus the sensitivity 1",
           f"{'rows':>10s} {'loop':>10s} {'compens.':>10s} {'fixed':>10s} {'bound':>10s}",
           [int(v) for v in a.m.split(",")], _adversarial_line)
    for n in (10 ** 8, 10 ** 9):
        print(f"{n:10.0e} {'-':>10s} {2 * (ROWS + 5) * U * n:10.2e} {'-':>10s} "
              f"{excess(n):10.2e}   (worst-case bounds)")
    rows = [int(float(v)) for v in a.split_rows.split(",")]

    def split_line(n):
        r = splits(n, a.splits)
        return (f"{n:10.0e} {r['float_distinct']:8d} {r['fixed_distinct']:8d} "
                f"{r['float_spread']:13.2e}")
    _table(f"\n2. {a.splits} random splits and orders of the same rows: distinct results",
           f"{'rows':>10s} {'float':>8s} {'fixed':>8s} {'float spread':>13s}", rows, split_line)

    def grid_line(n):
        r = grid_error(n)
        return (f"{n:10.0e} {r['rel_err']:11.2e} {r['rel_err_unshrunk']:10.2e} "
                f"{r['shrink']:10.2e}")
    _table("\n3. Grid error of the fixed-point Gram (rows of norm <= 1, 20 columns)",
           f"{'rows':>10s} {'rel. error':>11s} {'unshrunk':>10s} {'shrink':>10s}", rows,
           grid_line)

    def speed_line(n):
        r = speed(n)
        return f"{n:10.0e} {r['blas']:9.4f} {r['fixed']:9.4f} {r['fixed'] / r['blas']:7.2f}"
    _table("\n4. Speed, 20 columns: median seconds",
           f"{'rows':>10s} {'A.T @ A':>9s} {'tdot':>9s} {'ratio':>7s}",
           [int(float(v)) for v in a.speed.split(",")], speed_line)


if __name__ == "__main__":
    main()
