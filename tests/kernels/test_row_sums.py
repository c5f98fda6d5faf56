"""Sums over rows keep their sensitivity and do not depend on how the rows are split
(dpstats._kernels.row_sums; the Frank-Wolfe kernel's compensated blocks).

Adversarial data: ``2^m`` ones, then ``2^m`` values ``-0.75 * 2^(m-53)``. Summed in order, the
running total sits at ``2^m``; each small value is 0.75 of a unit in the last place below
``2^m`` and rounds to a whole one, so the total falls by ``2^m`` such units. The neighbour
with one more row, a 1 at the start, sits at ``2^m + 1``, where each small value is under
half a unit and is lost. The exact sums differ by 1 (the row's contribution), the sequential
ones (the broken variant) by ``1 + 2^(2m-53)``."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpstats._kernels import frank_wolfe as fw
from dpstats._kernels.row_sums import (
    FLUSH,
    ROW_BITS,
    ROWS,
    FixedSum,
    GridMatrix,
    excess,
    grid_bits,
    quantise,
    row_sum,
    row_sum_fixed,
    tdot,
    tdot_fixed,
)

M = 20
U = 2.0 ** -53


def _neighbours():
    small = -0.75 * 2.0 ** (M - 53)
    x = np.concatenate([np.ones(2 ** M), np.full(2 ** M, small)])
    return x, np.concatenate([[1.0], x])


def _sequential(x) -> float:
    s = 0.0
    for v in x.tolist():
        s += v
    return s


def test_sequential_sum_exceeds_the_sensitivity():
    x, x_plus = _neighbours()
    gap = _sequential(x_plus) - _sequential(x)
    assert gap - 1.0 == pytest.approx(2.0 ** (2 * M - 53), rel=1e-6)


def test_fixed_sums_keep_the_sensitivity():
    x, x_plus = _neighbours()
    for total in (lambda v: float(tdot(v[:, None], np.ones(v.size), 1.0, 1.0)[0]),
                  lambda v: float(row_sum(v[:, None], 1.0)[0])):
        gap = total(x_plus) - total(x)
        assert 0.0 < gap <= 1.0 + excess(x_plus.size)


def test_fw_kernel_blocks_keep_the_sensitivity():
    """The in-memory Frank-Wolfe kernel (compensated float blocks): within its bound
    ``2 (BLOCK + 5) u n``."""
    x, x_plus = _neighbours()

    def total(v):
        return float(fw.loss_gradient(v[None, :], np.ones(v.size), np.zeros(v.size),
                                      "squared")[0][0])
    gap = total(x_plus) - total(x)
    assert abs(gap - 1.0) <= (fw.BLOCK + 5) * U * x_plus.size + 1e-15
    assert abs(gap - 1.0) < 2.0 ** (2 * M - 53) / 100


def _split_sum(A, b, cuts):
    parts = [tdot_fixed(A[lo:hi], b[lo:hi], 1.0, 1.0)
             for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)]
    out = parts[0]
    for p in parts[1:]:
        out = out + p
    return out.value


def test_the_same_bits_for_any_split_and_order():
    """Parts added as FixedSums equal the whole bit for bit; the broken variant (float sums of
    the parts, as a dask merge of float arrays did) does not."""
    rng = np.random.default_rng(5)
    A = rng.uniform(-1, 1, size=(3 * ROWS + 999, 3)) / 2
    b = rng.uniform(-1, 1, size=A.shape[0])
    whole = tdot(A, b, 1.0, 1.0)
    n, floats, fixed = A.shape[0], set(), set()
    for k in range(12):
        cuts = np.r_[0, np.sort(rng.choice(np.arange(1, n), size=k % 5 + 1, replace=False)), n]
        order = rng.permutation(n)
        fixed.add(_split_sum(A[order], b[order], cuts).tobytes())
        floats.add(sum(A[order][lo:hi].T @ b[order][lo:hi]
                       for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)).tobytes())
    assert fixed == {whole.tobytes()}
    assert len(floats) > 1


def test_tdot_is_the_exact_sum_of_the_quantised_rows():
    rng = np.random.default_rng(1)
    A = rng.uniform(-1, 1, size=(2 * ROWS + 5, 2)) / math.sqrt(2)
    b = rng.uniform(-2, 2, size=A.shape[0])
    bits = grid_bits(ROWS)
    qa, qb = quantise(A, 1.0, bits), quantise(b, 2.0, bits)
    exact = [sum(int(x) * int(y) for x, y in zip(qa[:, j], qb, strict=True)) for j in range(2)]
    got = tdot_fixed(A, b, 1.0, 2.0)
    assert got.ints.tolist() == exact
    assert got.value.tolist() == [float(Fraction(e) * Fraction(got.unit)) for e in exact]
    assert np.allclose(got.value, A.T @ b, rtol=1e-4, atol=1e-3)


def test_int64_blocks_move_to_python_integers():
    """More than FLUSH blocks of large products: the total exceeds int64 on the way and is
    still exact."""
    rows = 2
    n = rows * (FLUSH + 3)
    A = np.ones((n, 1))
    got = tdot_fixed(A, A, 1.0, 1.0, rows=rows)
    q = int(quantise(np.ones((1, 1)), 1.0, grid_bits(rows))[0, 0])
    assert got.ints.tolist() == [[n * q * q]]
    big = row_sum_fixed(np.ones((5, 1)), 1.0)
    assert big.ints.tolist() == [5 * int(quantise(np.ones((1, 1)), 1.0, ROW_BITS)[0, 0])]


def test_quantised_rows_keep_their_norm_bound():
    """Rows of norm 1 keep norm <= 2^b on the grid; without the shrink (the broken variant)
    rounding to the nearest point pushes some beyond it."""
    rng = np.random.default_rng(2)
    V = rng.normal(size=(20000, 7))
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    bits = 12
    q = quantise(V, 1.0, bits)
    assert np.linalg.norm(q, axis=1).max() <= 2.0 ** bits
    assert np.abs(q).max() <= 2.0 ** bits
    naive = np.rint(V * 2.0 ** bits)
    assert np.linalg.norm(naive, axis=1).max() > 2.0 ** bits


def test_fixed_sums_on_different_grids_do_not_add():
    a = tdot_fixed(np.ones((2, 1)), np.ones(2), 1.0, 1.0)
    b = tdot_fixed(np.ones((2, 1)), np.ones(2), 2.0, 1.0)
    with pytest.raises(TypeError):
        a + b
    assert isinstance(a + a, FixedSum)


def test_row_kernel_is_the_quantised_numpy_sum_on_any_threads(monkeypatch):
    """The numba row kernel (chunks on threads) equals the numpy quantisation of ``T w``
    summed as integers; one thread or two give the same bits."""
    import numba

    from dpstats._kernels import runtime
    rng = np.random.default_rng(8)
    T = rng.normal(size=(50_000, 4)) / 3
    w = np.clip(rng.normal(size=T.shape[0]), -1, 1)
    q = quantise(T * w[:, None], 1.0, ROW_BITS).astype(np.int64)
    want = [int(v) for v in q.sum(axis=0)]
    monkeypatch.setattr(runtime, "PARALLEL_MIN_WORK", 0)
    got = row_sum_fixed(T, 1.0, weights=w)
    assert got.ints.tolist() == want
    numba.set_num_threads(1)
    try:
        assert row_sum_fixed(T, 1.0, weights=w).ints.tolist() == want
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


def test_grid_matrix_equals_tdot():
    rng = np.random.default_rng(9)
    A = rng.uniform(-0.5, 0.5, size=(2 * ROWS + 77, 3))
    g = GridMatrix(A, 1.0)
    b = rng.uniform(-1, 1, size=A.shape[0])
    assert g.tdot().tobytes() == tdot(A, A, 1.0, 1.0).tobytes()
    assert g.tdot(b, 1.0).tobytes() == tdot(A, b, 1.0, 1.0).tobytes()


def test_solver_sums_are_exact_to_their_grid_and_split_free():
    """exact_sums: the hi/lo split reproduces each term to 2^-66 of its bound; sums of parts
    equal the whole bit for bit; the Gram is symmetric."""
    from dpstats._kernels.exact_sums import cross_sum, gram_sum
    rng = np.random.default_rng(12)
    U = rng.uniform(-1, 1, size=(30_000, 3))
    v = rng.uniform(-1, 1, size=U.shape[0])
    exact = [sum(Fraction(float(a)) * Fraction(float(b)) for a, b in
                 zip(U[:2000, j] * v[:2000], np.ones(2000), strict=True)) for j in range(3)]
    got = cross_sum(U[:2000], v[:2000], 1.0)
    assert all(abs(Fraction(int(i)) * Fraction(got.unit) - e) <= 2000 * 2.0 ** -67
               for i, e in zip(got.ints, exact, strict=True))
    parts = cross_sum(U[:7000], v[:7000], 1.0) + cross_sum(U[7000:], v[7000:], 1.0)
    assert parts.value.tobytes() == cross_sum(U, v, 1.0).value.tobytes()
    H = gram_sum(U, np.full(U.shape[0], 0.25), 0.25).value
    assert np.array_equal(H, H.T) and np.allclose(H, (U.T * 0.25) @ U, rtol=1e-12)


def test_grid_in_place_is_the_same_grid():
    """A scratch buffer quantised in place (the design moments' blocks) holds the same integers
    as :func:`quantise`, and its sums are the same bits."""
    A = np.asfortranarray(np.sin(np.arange(9000.0)).reshape(3000, 3) * 2.5)
    ref = GridMatrix(A, 3.0)
    got = GridMatrix(A.copy(order="F"), 3.0, in_place=True)
    assert np.array_equal(got.q, ref.q)
    assert np.array_equal(got.tdot(), ref.tdot())
    assert np.array_equal(got.col_sums().value, ref.col_sums().value)
    np.testing.assert_allclose(ref.col_sums().value, A.sum(axis=0), atol=3000 * 3.0 * 2.0 ** -20)
