"""Depth-region volumes in log space against direct products, and the depth function."""

import numpy as np
import pytest

from dpstats._kernels.depth import (
    GRID,
    approx_tukey_depth,
    log_depth_volumes,
    log_exact_volumes,
    log_widths,
    max_depth,
)


def _direct_volumes(S):
    m = S.shape[0]
    return np.array([np.prod(S[m - i] - S[i - 1]) for i in range(1, m // 2 + 1)])


@pytest.mark.parametrize("m", [8, 9, 50, 51])
def test_log_volumes_match_direct_products(m):
    rng = np.random.default_rng(m)
    S = np.sort(rng.normal(size=(m, 3)), axis=0)
    logV = log_depth_volumes(S)
    assert logV[0] == np.inf and logV[-1] == -np.inf
    direct = _direct_volumes(S)
    pos = direct > 0
    np.testing.assert_allclose(np.exp(logV[1:-1][pos]), direct[pos], rtol=1e-10)
    logW = log_exact_volumes(logV)
    W = np.append(direct[:-1] - direct[1:], direct[-1])
    np.testing.assert_allclose(np.exp(logW[1:]), W, rtol=1e-8, atol=1e-300)


@pytest.mark.parametrize("scale", [1e-200, 1e-12, 1.0, 1e12, 1e200])
def test_no_overflow_at_d100(scale):
    rng = np.random.default_rng(0)
    S = np.sort(rng.normal(size=(400, 100)) * scale, axis=0)
    with np.errstate(all="raise"):
        logV = log_depth_volumes(S)
    inner = logV[1:-1]
    assert np.isfinite(inner).all()
    assert np.all(np.diff(inner) <= 0)  # nested regions
    logW = log_exact_volumes(logV)
    assert np.isfinite(logW[1:]).all()


def test_log_widths_count_grid_points():
    """Widths are GRID times the number of grid points of the closed side: width 1 is 1 in
    float64 (one extra cell of 2^-1074 vanishes), a tie holds one grid point, not zero."""
    S = np.sort(np.array([[0.0], [0.0], [0.0], [1.0]]), axis=0)
    L = log_widths(S)
    assert L[0, 0] == 0.0  # width 1 at depth 1
    assert L[1, 0] == np.log(GRID)  # tie at depth 2: one grid point
    T = np.array([[0.0], [2 * GRID], [5 * GRID], [9 * GRID]])   # subnormal: counts visible
    np.testing.assert_allclose(np.exp(log_widths(T)[:, 0] - np.log(GRID)), [10, 4], rtol=1e-12)


def test_approx_tukey_depth_counts():
    models = np.array([[0.0, 0.0], [1.0, 5.0], [2.0, 1.0], [3.0, 2.0]])
    assert approx_tukey_depth(np.array([1.5, 1.5]), models) == 2
    assert approx_tukey_depth(np.array([-1.0, 1.5]), models) == 0
    assert approx_tukey_depth(np.array([3.0, 1.5]), models) == 1
    assert max_depth(9) == 4 and max_depth(10) == 5
