"""Float sums over rows keep their sensitivity (dpstats._kernels.row_sums, the Frank-Wolfe
kernel's blocks): on data built so that rounding works against the sensitivity, one long
sequential sum (the broken variant: the loop the FW kernel had, BLAS over all rows) moves by
more than one row's contribution between neighbours, the blocked, compensated sums do not.

The data: ``2^m`` ones, then ``2^m`` values ``-0.75 * 2^(m-53)``. Summed in order, the
running total sits at ``2^m``; each small value is 0.75 of a unit in the last place below
``2^m`` and rounds to a whole one, so the total falls by ``2^m`` such units. The neighbour
with one more row, a 1 at the start, sits at ``2^m + 1``, where each small value is under
half a unit and is lost. The exact sums differ by 1 (the row's contribution), the sequential
ones by ``1 + 2^(2m-53)``."""

from __future__ import annotations

import numpy as np
import pytest

from dpstats._kernels import frank_wolfe as fw
from dpstats._kernels.row_sums import ROWS, compensated_add, excess, tdot

M = 20


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


@pytest.mark.parametrize("how", ["tdot", "fw_kernel"])
def test_blocked_sums_keep_the_sensitivity(how):
    x, x_plus = _neighbours()
    if how == "tdot":
        def total(v):
            return float(tdot(v[:, None], np.ones(v.size))[0])
    else:
        def total(v):
            return float(fw.loss_gradient(v[None, :], np.ones(v.size), np.zeros(v.size),
                                          "squared")[0][0])
    gap = total(x_plus) - total(x)
    n = x_plus.size
    assert abs(gap - 1.0) <= excess(n) / 2 + 1e-15
    assert abs(gap - 1.0) < 2.0 ** (2 * M - 53) / 100


def test_tdot_is_blas_up_to_a_block_and_close_beyond():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(3 * ROWS + 17, 4))
    assert np.array_equal(tdot(A[:ROWS], A[:ROWS]), A[:ROWS].T @ A[:ROWS])
    assert np.allclose(tdot(A, A), A.T @ A, rtol=1e-13, atol=1e-10)
    v = rng.normal(size=A.shape[0])
    assert np.allclose(tdot(A, v), A.T @ v, rtol=1e-13, atol=1e-10)


def test_compensated_add_recovers_what_rounding_drops():
    s, c = np.array([2.0 ** 53]), np.zeros(1)
    for _ in range(8):
        compensated_add(s, c, np.array([1.0]))
    assert s[0] + c[0] == 2.0 ** 53 + 8
    assert s[0] == 2.0 ** 53          # the plain sum lost every 1
