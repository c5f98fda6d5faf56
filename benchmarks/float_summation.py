"""Floating-point error of the sums mechanisms release, against their sensitivity.

A mechanism's sensitivity is a statement about exact sums; the library adds floats.
Casacuberta, Shoemate, Vadhan and Wagaman (CCS 2022) showed that the rounding of a float sum
can move it by more than one row's contribution, so a sensitivity stated for exact sums can
understate the true one. Two tables:

1. **Random data**: the worst Gram entry's error of
   :func:`dpstats.mechanisms.design_moments.clipped_sums` (blocks of ``_CHUNK`` rows, BLAS in a
   block, blocks added with compensation) and of :func:`dpstats._kernels.row_sums.tdot`
   (blocks of ``ROWS``), against the exact sums, as ``2 |err| / B^2`` (twice: both neighbours
   err), beside the worst-case bound ``2 (b + 5) u n`` (Higham's ``gamma`` for any order within
   a block, ``u = 2^-53``). Inputs are multiples of ``2^-20`` in ``[-B, B]``
   (``B = MOMENT_BOUND``), so every product is exact and the exact sums are integer sums (numpy
   int64 per block of ``2^16`` rows, Python integers across blocks).
2. **Adversarial data** (``tests/kernels/test_row_sums.py``'s construction: ``2^m`` ones, then
   ``2^m`` values of ``-0.75 * 2^(m-53)``, and the neighbour with a 1 in front): how far the
   neighbours' computed sums differ from the sensitivity 1, for one sequential loop over the
   rows (the Frank-Wolfe kernel before blocking), :func:`tdot` and the Frank-Wolfe kernel.

    cd benchmarks && python float_summation.py [--rows 1e5,1e6,1e7] [--m 18,20,22]
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

import numpy as np
from numba import njit

from dpstats._kernels import frank_wolfe as fw
from dpstats._kernels.row_sums import ROWS, tdot
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
    """``2 (b + 5) u n``: the worst-case relative excess of a sum's sensitivity over ``n`` rows
    added in blocks of ``b`` (any order within a block), the blocks with compensation.

    >>> f"{bound(10 ** 6):.1e}", f"{bound(10 ** 6, 4096):.1e}"
    ('7.3e-06', '9.1e-07')
    """
    return 2.0 * (min(n, b) + 5) * U * n


def _worst(S: np.ndarray, ex: list[list[int]]) -> float:
    k = S.shape[0]
    return max(float(abs(Fraction(float(S[i, j])) - Fraction(ex[i][j], SCALE * SCALE)))
               for i in range(k) for j in range(k))


def measure(n: int, k: int, seed: int = 1) -> dict:
    """The worst Gram entry's float error, relative to ``B^2`` and doubled, at ``n`` rows of
    ``k`` columns (the first a constant, as an intercept), for the design moments and tdot."""
    B = dm.MOMENT_BOUND
    rng = np.random.default_rng(seed)
    X = np.clip(np.round(rng.normal(size=(n, k)) * SCALE) / SCALE, -B, B)
    X[:, 0] = 1.0
    t = time.perf_counter()
    _, s2 = dm.clipped_sums(X, np.zeros(k), np.ones(k), B)
    sec = time.perf_counter() - t
    ex = exact_gram(np.round(X * SCALE).astype(np.int64))
    return {"n": n, "moments": 2 * _worst(s2, ex) / B ** 2, "tdot": 2 * _worst(tdot(X, X), ex)
            / B ** 2, "bound_moments": bound(n), "bound_tdot": bound(n, ROWS), "sec": sec}


@njit(cache=True)
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

    ways = {"loop": _loop_sum, "tdot": lambda v: float(tdot(v[:, None], np.ones(v.size))[0]),
            "fw_kernel": fw_sum}
    return {"rows": xp.size, **{w: f(xp) - f(x) - 1.0 for w, f in ways.items()},
            "bound_tdot": bound(xp.size, ROWS)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1e5,1e6,1e7")
    ap.add_argument("--cols", type=int, default=5)
    ap.add_argument("--m", default="18,20,22")
    a = ap.parse_args(argv)
    rows = [int(float(r)) for r in a.rows.split(",")]
    print("Random data: worst Gram entry, 2 |err| / B^2 (measured) and the worst-case bound")
    print(f"{'rows':>10s} {'moments':>10s} {'bound':>10s} {'tdot':>10s} {'bound':>10s} "
          f"{'sums s':>7s}")
    for i, n in enumerate(rows, 1):
        r = measure(n, a.cols)
        print(f"{n:10.0e} {r['moments']:10.2e} {r['bound_moments']:10.2e} {r['tdot']:10.2e} "
              f"{r['bound_tdot']:10.2e} {r['sec']:7.2f}   [{i}/{len(rows)}]", flush=True)
    for n in (10 ** 8, 10 ** 9):
        print(f"{n:10.0e} {'-':>10s} {bound(n):10.2e} {'-':>10s} {bound(n, ROWS):10.2e}")
    ms = [int(v) for v in a.m.split(",")]
    print("\nAdversarial data: neighbours' computed difference minus the sensitivity 1")
    print(f"{'rows':>10s} {'loop':>10s} {'tdot':>10s} {'FW kernel':>10s} {'tdot bound':>11s}")
    for i, m in enumerate(ms, 1):
        r = adversarial(m)
        print(f"{r['rows']:10.2e} {r['loop']:10.2e} {r['tdot']:10.2e} {r['fw_kernel']:10.2e} "
              f"{r['bound_tdot'] / 2:11.2e}   [{i}/{len(ms)}]", flush=True)


if __name__ == "__main__":
    main()
