"""Exact sums over rows: each row's terms on a fixed-point grid, added as integers.

A mechanism's sensitivity bounds how much one row moves an exact sum. A float sum can move by
more: each addition rounds, and removing one row changes what every later addition rounds
(Casacuberta, Shoemate, Vadhan and Wagaman, CCS 2022). Its value also depends on the order and
grouping of the additions, so a sum over a dask frame would depend on the partitioning. Here
the terms are put on a grid first and then added exactly:

1. **Quantise.** Every factor of a term is mapped, elementwise, to an integer
   ``q = clip(rint(v * 2^b / B * (1 - s)), -2^b, 2^b)``: ``B`` the factor's public bound (on
   each entry and on the L2 norm of a row's vector), ``b`` the grid's bits, ``s =
   sqrt(d) 2^-(b+1)`` for ``d`` columns. The shrink ``1 - s`` pays for rounding to the nearest
   point: ``||q|| <= (1 - s) ||v|| 2^b / B + sqrt(d) / 2 <= 2^b`` whenever ``||v|| <= B``, so a
   row's quantised vector keeps its norm bound and each entry its box bound. The map depends
   on the value alone, not on the other rows.
2. **Add exactly.** :func:`tdot` multiplies integer-valued float64 blocks of :data:`ROWS` rows
   by BLAS: with :func:`grid_bits` bits a product is at most ``2^(2b)`` and a block's sum at
   most ``ROWS 2^(2b) <= 2^53``, so every partial sum is an integer float64 holds exactly, in
   any order BLAS adds. Blocks are added in int64 (at most :data:`FLUSH` of them) and then in
   Python integers. :func:`row_sum` adds rows' precomputed terms in int64 (``2^30`` grid).
3. **Scale once.** The integer total times the grid's unit (``B_a B_b 2^-2b``): the sum of the
   quantised rows, two roundings from exact (:attr:`FixedSum.value`).

So the released sums are deterministic functions of the multiset of rows: the same bits for any
row order and any split into parts (partitions add their :class:`FixedSum` exactly). Under
add/remove one row the integer totals differ by exactly the row's quantised term, whose bound
is the factors' bounds' product; the two final roundings add at most ``4 u n`` of the
sensitivity (``u = 2^-53``: 4.4e-10 at 1e6 rows, 4.4e-8 at 1e8; :func:`excess`). The grid's
error is statistical, not a privacy matter: a relative ``2^-b`` of each bound per entry
(``2^-20`` = 9.5e-7 for :func:`tdot`), unbiased for values spread over many grid points, and
the shrink scales the sums by ``1 - s`` (``sqrt(d) 4.8e-7`` for :func:`tdot`). Deterministic;
draws nothing, no privacy logic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

__all__ = ["ROWS", "FLUSH", "ROW_BITS", "FixedSum", "GridMatrix", "grid_bits", "quantise", "tdot",
           "tdot_fixed", "row_sum", "row_sum_fixed", "excess", "resolve"]

#: Rows per block of :func:`tdot` (BLAS stays efficient at a few thousand rows).
ROWS = 4096
#: Blocks added in int64 before the total moves to Python integers: a block's sum is at most
#: ``2^53`` (:func:`grid_bits`), so ``FLUSH`` of them stay below ``2^62``.
FLUSH = 512
#: Grid bits of :func:`row_sum` (int64 holds ``2^(63 - ROW_BITS)`` = 8.6e9 rows' terms).
ROW_BITS = 30
U = 2.0 ** -53


def grid_bits(rows: int = ROWS) -> int:
    """Bits per factor so that ``rows`` products of two quantised factors add up exactly in
    float64: the largest ``b`` with ``rows 2^(2b) <= 2^53``.

    >>> grid_bits(4096), grid_bits(1 << 15)
    (20, 19)
    """
    return (53 - max(0, math.ceil(math.log2(max(int(rows), 1))))) // 2


def quantise(v: np.ndarray, bound: float, bits: int) -> np.ndarray:
    """``v`` on the grid of ``2^bits`` steps per ``bound`` (module docstring, step 1), as
    integer-valued float64; a vector is one column. Rows of L2 norm (and entries) at most
    ``bound`` map to integer rows of norm (and entries) at most ``2^bits``.

    >>> quantise(np.array([[0.6, 0.8], [-1.0, 0.0]]), 1.0, 4).tolist()
    [[9.0, 12.0], [-15.0, 0.0]]
    """
    v = np.asarray(v, dtype=np.float64)
    d = v.shape[1] if v.ndim == 2 else 1
    top = float(2 ** bits)
    q = v * (top / float(bound) * (1.0 - math.sqrt(d) * 2.0 ** -(bits + 1)))
    np.rint(q, out=q)
    return np.clip(q, -top, top, out=q)


@dataclass(frozen=True)
class FixedSum:
    """An exact sum on a grid: Python-integer entries (object array) and the value of one
    step, ``unit``. Two sums on the same grid add exactly (``+``); :attr:`value` is the float
    result.

    >>> a = tdot_fixed(np.ones((3, 1)), np.ones(3), 1.0, 1.0)
    >>> b = tdot_fixed(np.ones((2, 1)), np.ones(2), 1.0, 1.0)
    >>> (a + b).value.tolist() == tdot(np.ones((5, 1)), np.ones(5), 1.0, 1.0).tolist()
    True
    """

    ints: np.ndarray
    unit: float

    def __add__(self, other: FixedSum) -> FixedSum:
        if not isinstance(other, FixedSum) or other.unit != self.unit:
            raise TypeError("FixedSum adds only to a FixedSum on the same grid")
        return FixedSum(self.ints + other.ints, self.unit)

    @property
    def value(self) -> np.ndarray:
        """The float sum: the integers rounded to float64 (correctly) times :attr:`unit`."""
        return np.asarray(self.ints.astype(np.float64) * self.unit, dtype=np.float64)


def _to_python(acc: np.ndarray) -> np.ndarray:
    out = np.empty(acc.shape, dtype=object)
    out.flat[:] = [int(x) for x in acc.ravel().tolist()]
    return out


def _block_sums(n: int, shape: tuple, rows: int, pair) -> np.ndarray:
    """``sum over blocks of pair(a, b)``, each an exact integer-valued float64 product of a
    block's quantised rows (at most ``2^53``): int64 over :data:`FLUSH` blocks, then Python
    integers."""
    total = np.zeros(shape, dtype=object)
    acc = np.zeros(shape, dtype=np.int64)
    for k, a in enumerate(range(0, n, rows)):
        acc += pair(a, a + rows).astype(np.int64)
        if (k + 1) % FLUSH == 0:
            total = total + _to_python(acc)
            acc[...] = 0
    return total + _to_python(acc)


def tdot_fixed(A: np.ndarray, B: np.ndarray, bound_a: float, bound_b: float,
               rows: int = ROWS) -> FixedSum:
    """``A.T @ B`` summed exactly on the grid (module docstring): ``A`` (n, p) with rows of L2
    norm at most ``bound_a``, ``B`` (n,) or (n, q) with rows at most ``bound_b``; ``B`` may be
    ``A`` itself (quantised once). Entries beyond a bound are clipped to it.

    >>> tdot_fixed(np.array([[0.5], [0.25]]), np.array([1.0, -1.0]), 1.0, 1.0).ints.tolist()
    [274877906944]
    """
    A = np.asarray(A, dtype=np.float64)
    same = B is A
    B = A if same else np.asarray(B, dtype=np.float64)
    bits = grid_bits(rows)

    def pair(a, b):
        qa = quantise(A[a:b], bound_a, bits)
        return qa.T @ (qa if same else quantise(B[a:b], bound_b, bits))
    ints = _block_sums(A.shape[0], (A.shape[1],) + B.shape[1:], rows, pair)
    return FixedSum(ints, float(bound_a) * float(bound_b) * 2.0 ** (-2 * bits))


class GridMatrix:
    """The rows of ``A`` (n, p; L2 norm at most ``bound``) quantised once, for repeated exact
    sums ``A.T @ b`` with varying ``b`` (Boosted AdaSSP's rounds): the same bits as
    :func:`tdot_fixed` on ``A``, one quantisation of ``A`` instead of one per call.

    >>> A = np.sin(np.arange(18000.0)).reshape(9000, 2) / 2      # fixed test data
    >>> g, b = GridMatrix(A, 1.0), np.linspace(-1, 1, 9000)
    >>> bool(np.array_equal(g.tdot(b, 1.0), tdot(A, b, 1.0, 1.0)))
    True
    """

    def __init__(self, A: np.ndarray, bound: float, rows: int = ROWS, in_place: bool = False):
        A = np.asarray(A, dtype=np.float64)
        self.bound, self.rows, self.bits = float(bound), int(rows), grid_bits(rows)
        A = A if A.ndim == 2 else A[:, None]
        if in_place:          # A (a scratch buffer) becomes the grid: one pass, no copy
            top = float(2 ** self.bits)
            _quantise_rows(A, top / self.bound * (1.0 - math.sqrt(A.shape[1])
                                                  * 2.0 ** -(self.bits + 1)), top)
            self.q = A
        else:
            self.q = quantise(A, self.bound, self.bits)

    def tdot_fixed(self, B=None, bound_b: float | None = None) -> FixedSum:
        """``A.T @ B`` exactly (``B`` None: ``A.T @ A``)."""
        q, bits, rows = self.q, self.bits, self.rows
        if B is None:
            def pair(a, b):
                return q[a:b].T @ q[a:b]
            shape, unit_b = (q.shape[1], q.shape[1]), self.bound
        else:
            B = np.asarray(B, dtype=np.float64)

            def pair(a, b):
                return q[a:b].T @ quantise(B[a:b], bound_b, bits)
            shape, unit_b = (q.shape[1],) + B.shape[1:], float(bound_b)
        ints = _block_sums(q.shape[0], shape, rows, pair)
        return FixedSum(ints, self.bound * unit_b * 2.0 ** (-2 * bits))

    def col_sums(self) -> FixedSum:
        """The column sums of the quantised rows, exactly (unit ``bound 2^-bits``: each
        block's sum is at most ``rows 2^bits``, an integer float64 holds)."""
        q = self.q

        def pair(a, b):
            return q[a:b].sum(axis=0)
        ints = _block_sums(q.shape[0], (q.shape[1],), self.rows, pair)
        return FixedSum(ints, self.bound * 2.0 ** -self.bits)

    def square_sums(self) -> FixedSum:
        """The column sums of the rows' squared entries, exactly (the diagonal of
        :meth:`tdot_fixed` with ``B`` None, without the off-diagonal products)."""
        q = self.q

        def pair(a, b):
            return np.einsum("ij,ij->j", q[a:b], q[a:b])
        ints = _block_sums(q.shape[0], (q.shape[1],), self.rows, pair)
        return FixedSum(ints, self.bound * self.bound * 2.0 ** (-2 * self.bits))

    def tdot(self, B=None, bound_b: float | None = None) -> np.ndarray:
        """:meth:`tdot_fixed`'s float value."""
        return self.tdot_fixed(B, bound_b).value


@njit(cache=True, nogil=True)
def _quantise_rows(A, scale, top):
    """:func:`quantise` of ``A`` in place (the same products, rounding and clip)."""
    n, d = A.shape
    for j in range(d):
        for i in range(n):
            q = np.rint(A[i, j] * scale)
            A[i, j] = top if q > top else (-top if q < -top else q)


def tdot(A: np.ndarray, B: np.ndarray, bound_a: float, bound_b: float,
         rows: int = ROWS) -> np.ndarray:
    """:func:`tdot_fixed`'s float value: ``A.T @ B`` of the quantised rows, the same bits for
    any order or split of the rows.

    >>> A = np.cos(np.arange(30000.0) * 0.7).reshape(10_000, 3) / 2      # fixed test data
    >>> bool(np.array_equal(tdot(A, A, 1.0, 1.0), tdot(A[::-1], A[::-1], 1.0, 1.0)))
    True
    >>> bool(np.allclose(tdot(A, A, 1.0, 1.0), A.T @ A, rtol=1e-5))
    True
    """
    return tdot_fixed(A, B, bound_a, bound_b, rows).value


def row_sum_fixed(T: np.ndarray, bound: float, weights: np.ndarray | None = None) -> FixedSum:
    """The sum over rows of ``T`` (n, p) times ``weights`` (n,; default 1), each row's term
    ``w_i t_i`` one record's, of L2 norm at most ``bound``, exactly on a grid of
    ``2^ROW_BITS`` steps per ``bound``: one pass of a numba kernel (quantise each entry as
    :func:`quantise`, add in int64 per chunk of rows, chunks on threads; the chunks' int64 sums
    then added as Python integers, so threads do not change the bits).

    >>> T = np.array([[0.25, -0.5], [0.5, 0.5]])
    >>> row_sum_fixed(T, 1.0).ints.tolist() == [int(v) for v in
    ...     quantise(T, 1.0, ROW_BITS).sum(axis=0)]
    True
    """
    from .runtime import run_chunks
    T = np.asarray(T, dtype=np.float64)
    T2 = T.reshape(T.shape[0], -1)
    n, p = T2.shape
    w = np.ones(n) if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
    top = float(2 ** ROW_BITS)
    qscale = top / float(bound) * (1.0 - math.sqrt(p) * 2.0 ** -(ROW_BITS + 1))
    step = max(ROWS, -(-n // 64))
    count = -(-n // step)
    acc = np.zeros((max(count, 1), p), dtype=np.int64)
    if n:
        run_chunks(_grid_rows, count, n * p, T2, w, qscale, top, step, acc)
    total = np.zeros(p, dtype=object)
    for a in acc:                      # at most 64 chunks, each below 2^63
        total = total + _to_python(a)
    return FixedSum(total.reshape(T.shape[1:]), float(bound) * 2.0 ** -ROW_BITS)


@njit(cache=True, nogil=True)
def _grid_rows(T, w, qscale, top, step, acc, lo, hi):
    """Chunks ``lo .. hi`` of ``step`` rows: ``acc[c, j] += clip(rint(T[i, j] w[i] qscale))``."""
    n, p = T.shape
    for c in range(lo, hi):
        for i in range(c * step, min(c * step + step, n)):
            wi = w[i]
            for j in range(p):
                q = np.rint(T[i, j] * wi * qscale)
                if q > top:
                    q = top
                elif q < -top:
                    q = -top
                acc[c, j] += np.int64(q)


def row_sum(T: np.ndarray, bound: float) -> np.ndarray:
    """:func:`row_sum_fixed`'s float value.

    >>> row_sum(np.array([[0.25, -0.5], [0.5, 0.5]]), 1.0).tolist()
    [0.75, 0.0]
    """
    return row_sum_fixed(T, bound).value


def resolve(stats: dict) -> dict:
    """``stats`` with every :class:`FixedSum` replaced by its float value (what a sum of parts
    hands to the mechanisms)."""
    return {k: v.value if isinstance(v, FixedSum) else v for k, v in stats.items()}


def excess(n: float) -> float:
    """``4 u n``: the worst-case relative excess over the sensitivity of a sum over ``n`` rows
    computed here (two roundings of the exact total; module docstring).

    >>> f"{excess(1e6):.1e}", f"{excess(1e8):.1e}"
    ('4.4e-10', '4.4e-08')
    """
    return 4.0 * U * float(n)
