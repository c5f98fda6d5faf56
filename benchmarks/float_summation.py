"""Floating-point error of the design moments' sums against their sensitivity.

A mechanism's sensitivity is a statement about exact sums; the library adds floats.
Casacuberta, Shoemate, Vadhan and Wagaman (CCS 2022) showed that the rounding of a
float sum can move it by more than one row's contribution, so a sensitivity stated for
exact sums can understate the true one. This script measures the error of
:func:`dpstats.mechanisms.design_moments.clipped_sums` (blocks of ``_CHUNK`` rows, each
block's ``U'U`` by BLAS, blocks added in order) against the exact sums, and prints the
worst-case bound beside it.

Inputs are multiples of ``2^-20`` in ``[-B, B]`` (``B = MOMENT_BOUND``), so every product is
exact in integers and the exact sums are integer sums (numpy int64 per block of ``2^16``
rows, Python integers across blocks). The bound is Higham's for any summation order in two
levels: ``|err| <= gamma_(b + n/b) * sum |x|`` with ``gamma_m = m u / (1 - m u)``,
``u = 2^-53``, ``b`` the block rows, and ``sum |x| <= n B^2`` for a Gram entry. Two
neighbouring data sets can differ in their computed sums by the row's contribution ``B^2``
plus both errors, so the relative excess over the per-entry sensitivity is at most
``2 gamma n``. The columns: measured error / ``B^2`` (worst entry) and the bound.

    cd benchmarks && python float_summation.py [--rows 1e5,1e6,1e7] [--cols 5]
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

import numpy as np

from dpstats.mechanisms import design_moments as dm

U = 2.0 ** -53
SCALE = 2 ** 20


def exact_gram(Xi: np.ndarray, block: int = 1 << 16) -> list[list[int]]:
    """``Xi' Xi`` in Python integers (int64 within a block of ``block`` rows: each product is
    below ``(3 * 2^20)^2 < 2^44``, so a block's sum stays below ``2^60``)."""
    k = Xi.shape[1]
    out = [[0] * k for _ in range(k)]
    for a in range(0, Xi.shape[0], block):
        c = Xi[a:a + block].T @ Xi[a:a + block]
        for i in range(k):
            for j in range(k):
                out[i][j] += int(c[i, j])
    return out


def bound(n: int, b: int = dm._CHUNK) -> float:
    """``2 gamma_(b + n/b) n``: the worst-case relative excess of a Gram entry's sensitivity.

    >>> f"{bound(10 ** 6):.1e}"
    '7.3e-06'
    """
    m = b + n / b
    return 2.0 * (m * U / (1.0 - m * U)) * n


def measure(n: int, k: int, seed: int = 1) -> dict:
    """The worst Gram entry's float error, relative to ``B^2``, at ``n`` rows of ``k``
    columns (the first a constant, as an intercept)."""
    B = dm.MOMENT_BOUND
    rng = np.random.default_rng(seed)
    X = np.clip(np.round(rng.normal(size=(n, k)) * SCALE) / SCALE, -B, B)
    X[:, 0] = 1.0
    t = time.perf_counter()
    _, s2 = dm.clipped_sums(X, np.zeros(k), np.ones(k), B)
    sec = time.perf_counter() - t
    ex = exact_gram(np.round(X * SCALE).astype(np.int64))
    err = max(abs(Fraction(float(s2[i, j])) - Fraction(ex[i][j], SCALE * SCALE))
              for i in range(k) for j in range(k))
    return {"n": n, "err_rel": float(err) / B ** 2, "twice_err_rel": 2 * float(err) / B ** 2,
            "bound": bound(n), "sec": sec}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1e5,1e6,1e7")
    ap.add_argument("--cols", type=int, default=5)
    a = ap.parse_args(argv)
    rows = [int(float(r)) for r in a.rows.split(",")]
    print(f"{'rows':>10s} {'measured 2|err|/B^2':>20s} {'bound 2 gamma n':>16s} {'sums s':>7s}")
    for i, n in enumerate(rows, 1):
        r = measure(n, a.cols)
        print(f"{n:10.0e} {r['twice_err_rel']:20.2e} {r['bound']:16.2e} {r['sec']:7.2f}"
              f"   [{i}/{len(rows)}]", flush=True)
    for n in (10 ** 8, 10 ** 9):
        print(f"{n:10.0e} {'(not run)':>20s} {bound(n):16.2e}")


if __name__ == "__main__":
    main()
