"""Sums of bounded float terms to 2^-66 of their bound, the same bits for any split of the rows.

The ridge solver of output and objective perturbation (:mod:`dpstats.dask.glm`) sums each
row's loss, gradient and Hessian terms. Their privacy rests on the minimiser being exact up to
a tolerance (``1e-6`` in gradient norm), so a coarse grid (:mod:`.row_sums`, ``2^-20`` of the
bound) would move it too far; but float sums of partitions depend on the partitioning. Here
each term ``t`` (computed in float64 per row, the same bits wherever the row is) is scaled by
the public bound ``B`` (rounded up to a power of two, so the scaling is exact) and split
exactly into two integers:

``x = t / B * 2^26``, ``hi = rint(x)`` (``|hi| <= 2^26``), ``lo = rint((x - hi) 2^40)``
(``x - hi`` is exact: a float minus its nearest integer; ``|lo| <= 2^39``),

so ``t = (hi 2^40 + lo) B 2^-66`` up to ``B 2^-67`` (the bits of ``t`` below it, for terms near
``B``). ``hi`` and ``lo`` are added in int64 per chunk of rows (at most ``2^23`` rows: no
overflow), the chunks in Python integers, and the total is converted to float once: the result
is a deterministic function of the multiset of rows, within ``n B 2^-67`` of the exact sum of
the float terms (1e-14 B at 1e6 rows). Deterministic; draws nothing, no privacy logic.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .row_sums import FixedSum, _to_python

__all__ = ["cross_sum", "gram_sum", "HI_BITS", "LO_BITS"]

HI_BITS, LO_BITS = 26, 40
#: Rows per chunk: ``2^23 * 2^39 < 2^63``.
CHUNK_MAX = 1 << 23


def _chunks(n: int) -> tuple[int, int]:
    step = min(CHUNK_MAX, max(4096, -(-n // 64)))
    return step, max(1, -(-n // step))


def _pow2(bound: float) -> float:
    """The smallest power of two at least ``bound`` (so that scaling by it is exact)."""
    return float(2.0 ** math.ceil(math.log2(float(bound))))


def _total(hi: np.ndarray, lo: np.ndarray, bound: float) -> FixedSum:
    total = np.zeros(hi.shape[1:], dtype=object)
    for h, lw in zip(hi, lo, strict=True):
        total = total + _to_python(h) * (1 << LO_BITS) + _to_python(lw)
    return FixedSum(total, float(bound) * 2.0 ** -(HI_BITS + LO_BITS))


@njit(cache=True, nogil=True)
def _split(t, inv, hi, lo, c, j):
    x = t * inv
    h = np.rint(x)
    hi[c, j] += np.int64(h)
    lo[c, j] += np.int64(np.rint((x - h) * 1099511627776.0))      # 2^40


@njit(cache=True, nogil=True)
def _cross(U, v, inv, step, hi, lo, a, b):
    n, k = U.shape
    for c in range(a, b):
        for i in range(c * step, min(c * step + step, n)):
            for j in range(k):
                _split(U[i, j] * v[i], inv, hi, lo, c, j)


@njit(cache=True, nogil=True)
def _gram(U, w, inv, step, hi, lo, a, b):
    n, k = U.shape
    for c in range(a, b):
        for i in range(c * step, min(c * step + step, n)):
            m = 0
            for j in range(k):
                for q in range(j, k):
                    _split(w[i] * U[i, j] * U[i, q], inv, hi, lo, c, m)
                    m += 1


def cross_sum(U: np.ndarray, v: np.ndarray, bound: float) -> FixedSum:
    """``U.T @ v`` with every term ``|U_ij v_i| <= bound``, as above.

    >>> U = np.sin(np.arange(20000.0)).reshape(10_000, 2)      # fixed test data
    >>> v = np.linspace(-1, 1, 10_000)
    >>> a = cross_sum(U, v, 1.0)
    >>> b = cross_sum(U[:3000], v[:3000], 1.0) + cross_sum(U[3000:], v[3000:], 1.0)
    >>> a.value.tobytes() == b.value.tobytes(), bool(np.allclose(a.value, U.T @ v, rtol=1e-13))
    (True, True)
    """
    from .runtime import run_chunks
    U = np.asarray(U, dtype=np.float64)
    v = np.ascontiguousarray(v, dtype=np.float64)
    bound = _pow2(bound)
    step, count = _chunks(U.shape[0])
    hi = np.zeros((count, U.shape[1]), dtype=np.int64)
    lo = np.zeros_like(hi)
    if U.shape[0]:
        run_chunks(_cross, count, U.size, U, v, 2.0 ** HI_BITS / float(bound), step, hi, lo)
    return _total(hi, lo, bound)


def gram_sum(U: np.ndarray, w: np.ndarray, bound: float) -> FixedSum:
    """``(U.T * w) @ U`` (k, k) with every term ``|w_i U_ij U_il| <= bound``, as above (the
    upper triangle summed, mirrored).

    >>> U = np.cos(np.arange(15000.0) * 0.3).reshape(5000, 3) / 2      # fixed test data
    >>> w = np.full(5000, 0.25)
    >>> bool(np.allclose(gram_sum(U, w, 0.25).value, (U.T * w) @ U, rtol=1e-13))
    True
    """
    from .runtime import run_chunks
    U = np.asarray(U, dtype=np.float64)
    w = np.ascontiguousarray(w, dtype=np.float64)
    bound = _pow2(bound)
    k = U.shape[1]
    step, count = _chunks(U.shape[0])
    hi = np.zeros((count, k * (k + 1) // 2), dtype=np.int64)
    lo = np.zeros_like(hi)
    if U.shape[0]:
        run_chunks(_gram, count, U.size * k, U, w, 2.0 ** HI_BITS / float(bound), step, hi, lo)
    tri = _total(hi, lo, bound).ints
    full = np.zeros((k, k), dtype=object)
    iu = np.triu_indices(k)
    full[iu] = tri
    full[(iu[1], iu[0])] = tri
    return FixedSum(full, float(bound) * 2.0 ** -(HI_BITS + LO_BITS))
