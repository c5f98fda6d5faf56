"""The row-by-row Householder QR (issue 15 speed) gives the column-by-column loops' result to
the bit, and the group OLS built on it therefore releases the same models."""

import numpy as np
import pytest
from numba import njit

from dpstats._kernels.jacobi_svd import householder_qr


@njit(cache=False, boundscheck=False)
def _column_by_column(A, y, reverse=False):
    """The loops before issue 15's speed work: one column's dot and update at a time
    (``reverse``: a broken variant summing each reflection's norm from the last row up)."""
    n, p = A.shape
    rows = min(n, p)
    for k in range(rows):
        nrm = 0.0
        for r in range(k, n):
            nrm += A[r, k] * A[r, k]
        nrm = np.sqrt(nrm)
        if nrm == 0.0:
            continue
        alpha = -nrm if A[k, k] >= 0.0 else nrm
        A[k, k] -= alpha
        vnorm2 = 0.0
        for r in range(k, n):
            rr = n - 1 - (r - k) if reverse else r
            vnorm2 += A[rr, k] * A[rr, k]
        for j in range(k + 1, p):
            dot = 0.0
            for r in range(k, n):
                dot += A[r, k] * A[r, j]
            f = 2.0 * dot / vnorm2
            for r in range(k, n):
                A[r, j] -= f * A[r, k]
        dot = 0.0
        for r in range(k, n):
            dot += A[r, k] * y[r]
        f = 2.0 * dot / vnorm2
        for r in range(k, n):
            y[r] -= f * A[r, k]
        A[k, k] = alpha
        for r in range(k + 1, n):
            A[r, k] = 0.0
    return rows


def _cases():
    rng = np.random.default_rng(11)
    yield rng.normal(size=(40, 6))
    yield rng.normal(size=(630, 21)) * np.exp(rng.normal(size=21) * 3)
    yield rng.normal(size=(5, 9))                                 # wide
    A = rng.normal(size=(30, 5))
    A[:, 2] = 0.0                                                 # a zero column mid-way
    A[:, 4] = A[:, 1] * 2.0                                       # collinear
    yield A
    B = np.ones((25, 4))
    B[:, 1] = rng.integers(0, 2, 25)
    B[:, 3] = -B[:, 1]
    yield B
    C = rng.normal(size=(12, 3))
    C[:, 0] = 0.0                                                 # first column zero
    yield C
    yield rng.normal(size=(8, 1))
    yield np.zeros((6, 3))


@pytest.mark.parametrize("case", range(8))
def test_same_bits_as_the_column_loops(case):
    A = list(_cases())[case]
    y = np.sin(np.arange(A.shape[0]) * 1.7)
    A1, y1, A2, y2 = A.copy(), y.copy(), A.copy(), y.copy()
    assert householder_qr(A1, y1) == _column_by_column(A2, y2)
    assert A1.tobytes() == A2.tobytes() and y1.tobytes() == y2.tobytes()


def test_the_comparison_catches_a_reordered_sum():
    """A broken variant (one sum in the opposite row order: the same value up to rounding) is
    caught by the bitwise comparison above, so the test can fail."""
    A = list(_cases())[1]
    y = np.cos(np.arange(A.shape[0]))
    A1, y1, A2, y2 = A.copy(), y.copy(), A.copy(), y.copy()
    householder_qr(A1, y1)
    _column_by_column(A2, y2, True)
    assert np.allclose(A1, A2, rtol=1e-9, atol=1e-9 * np.abs(A1).max())
    assert A1.tobytes() != A2.tobytes()
