"""Kendall kernel == numpy reference == scipy (tie-free), sensitivity 3/2, edge cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpstats._kernels.kendall import (
    discordant_counts,
    kendall_scaled,
    kendall_scaled_against_column,
    kendall_scaled_reference,
)


def _data(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X[:, 0] - 0.5 * X[:, min(1, d - 1)] + rng.normal(size=n)
    return X, y


@pytest.mark.parametrize(("n", "d"), [(2, 3), (3, 5), (10, 7), (1001, 50)])
def test_agrees_with_reference_and_scipy(n, d):
    X, y = _data(n, d, n * d)
    got = kendall_scaled(X, y)
    np.testing.assert_array_equal(got, kendall_scaled_reference(X, y))
    tau = np.array([stats.kendalltau(X[:, j], y, variant="b").statistic for j in range(d)])
    np.testing.assert_allclose(got, tau * n / 2, rtol=1e-12, atol=1e-9)


def test_memory_order_does_not_matter():
    X, y = _data(500, 9, 1)
    c = kendall_scaled(np.ascontiguousarray(X), y)
    np.testing.assert_array_equal(c, kendall_scaled(np.asfortranarray(X), y))
    np.testing.assert_array_equal(c, kendall_scaled(X[:, ::-1], y)[::-1])   # strided view


def test_ties_count_as_neither_concordant_nor_discordant():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 4, size=(300, 6)).astype(float)
    y = rng.integers(0, 5, size=300).astype(float)
    np.testing.assert_array_equal(kendall_scaled(X, y), kendall_scaled_reference(X, y))
    X[:, 3] = 1.0                                    # constant column: D = 0, tau_hat = n/2
    assert kendall_scaled(X, y)[3] == 150.0
    assert discordant_counts([[1.0], [1.0], [2.0]], [2.0, 1.0, 1.0]).tolist() == [1]


def test_tiny_n():
    assert kendall_scaled(np.empty((0, 2)), np.empty(0)).tolist() == [0.0, 0.0]
    assert kendall_scaled([[5.0, 1.0]], [3.0]).tolist() == [0.5, 0.5]
    assert kendall_scaled([[0.0, 1.0], [1.0, 0.0]], [0.0, 1.0]).tolist() == [1.0, -1.0]


def test_against_column_matches_kendall_scaled():
    X, _ = _data(300, 8, 3)
    for j in (0, 5, -1):
        np.testing.assert_array_equal(kendall_scaled_against_column(X, j),
                                      kendall_scaled(X, X[:, j]))
    assert kendall_scaled_against_column(X, 2)[2] == 150.0


def _neighbour_rows(rng, X, y):
    """Random and adversarial extra rows (discordant with everything, ties, extremes)."""
    lo, hi = X.min(axis=0) - 1, X.max(axis=0) + 1
    yield rng.normal(size=X.shape[1]) * 2, rng.normal() * 2
    yield lo, y.max() + 1
    yield hi, y.min() - 1
    yield X[rng.integers(len(y))], y[rng.integers(len(y))]   # ties with existing rows


@pytest.mark.parametrize("n", [1, 2, 3, 5, 20, 101])
def test_sensitivity_three_halves(n):
    rng = np.random.default_rng(n)
    worst = 0.0
    for _ in range(40):
        X, y = rng.normal(size=(n, 4)), rng.normal(size=n)
        X[:, 1] = y + 0.01 * rng.normal(size=n)                     # nearly monotone column
        X[:, 2] = -y                                                # anti-monotone column
        base = kendall_scaled(X, y)
        for row, yv in _neighbour_rows(rng, X, y):
            bigger = kendall_scaled(np.vstack([X, row]), np.append(y, yv))
            worst = max(worst, np.abs(bigger - base).max())
        drop = rng.integers(n)
        smaller = kendall_scaled(np.delete(X, drop, axis=0), np.delete(y, drop))
        worst = max(worst, np.abs(smaller - base).max())
    assert worst <= 1.5 + 1e-12


def test_sensitivity_bound_is_attained():
    x = np.arange(10.0)                                     # D = 0, tau_hat = 5
    X1 = np.append(x, -1.0)[:, None]                        # new row discordant with all
    y1 = np.append(x, 10.0)
    assert kendall_scaled(x[:, None], x)[0] - kendall_scaled(X1, y1)[0] == 1.5


def test_large_case_runs():
    rng = np.random.default_rng(4)
    n, d = 100_000, 20
    X = rng.normal(size=(n, d))
    y = X[:, 0] + rng.normal(size=n)
    got = kendall_scaled(X, y)
    assert np.isfinite(got).all() and np.abs(got).max() <= n / 2
    for j in (0, 7):
        assert got[j] == pytest.approx(stats.kendalltau(X[:, j], y).statistic * n / 2,
                                       rel=1e-10, abs=1e-6)


def test_rejects_bad_input():
    with pytest.raises(ValueError):
        kendall_scaled([[1.0], [np.nan]], [1.0, 2.0])
    with pytest.raises(ValueError):
        kendall_scaled([[1.0], [2.0]], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        kendall_scaled([1.0, 2.0], [1.0, 2.0])
    with pytest.raises(ValueError):
        kendall_scaled_against_column(np.zeros((3, 2)), 2)


def test_kernel_package_imports_no_numba():
    import subprocess
    import sys
    code = "import sys, dpstats._kernels; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
