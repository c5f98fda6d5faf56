"""The batched per-group OLS kernel against its numpy reference and numpy lstsq."""

import numpy as np
import pytest

from dpstats._kernels.tukey import group_ols, group_ols_reference, group_order


def _data(n, p, seed):
    rng = np.random.default_rng(seed)
    X = np.c_[np.ones(n), rng.normal(size=(n, p - 1)) * rng.uniform(0.1, 100, p - 1)]
    y = X @ rng.normal(size=p) + rng.normal(size=n)
    return X, y, rng


@pytest.mark.parametrize("n,p,m", [(1000, 4, 50), (300, 6, 100), (50, 3, 40), (2000, 10, 1)])
def test_group_ols_matches_reference(n, p, m):
    X, y, rng = _data(n, p, n + p + m)
    labels = rng.integers(0, m, size=n)
    got = group_ols(X, y, labels, m)
    ref = group_ols_reference(X, y, labels, m)
    np.testing.assert_allclose(got, ref, rtol=1e-7, atol=1e-9)


def test_full_rank_groups_equal_lstsq():
    X, y, rng = _data(600, 5, 1)
    labels = rng.integers(0, 10, size=600)
    got = group_ols(X, y, labels, 10)
    for g in range(10):
        rows = labels == g
        np.testing.assert_allclose(got[g], np.linalg.lstsq(X[rows], y[rows], rcond=None)[0],
                                   rtol=1e-8)


def test_degenerate_groups_do_not_crash():
    X, y, _ = _data(30, 5, 2)
    X[:, 2] = 0.0  # a constant (all-zero) column
    labels = np.array([0] * 2 + [1] * 28, dtype=np.int64)  # group 0 has fewer rows than columns
    out = group_ols(X, y, labels, 3)  # group 2 is empty
    assert np.isfinite(out).all()
    assert np.all(out[2] == 0)
    assert abs(out[1, 2]) < 1e-9  # all-zero column: minimum-norm coefficient ~0


def test_group_order_is_a_counting_sort():
    labels = np.array([2, 0, 1, 0, 2, 2], dtype=np.int64)
    order, starts = group_order(labels, 3)
    assert starts.tolist() == [0, 2, 3, 6]
    assert sorted(order.tolist()) == list(range(6))
    assert all(labels[order[starts[g]:starts[g + 1]]].tolist() == [g] * (starts[g + 1] - starts[g])
               for g in range(3))


def test_qr_fast_path_and_its_fallback_agree_with_lstsq():
    """Well-conditioned groups take the QR path; a nearly collinear group (condition number
    about 1e9, above the QR path's limit) and a rank-deficient one fall back to the SVD
    path. All must match the reference (minimum-norm least squares)."""
    from dpstats._kernels.tukey import _QR_COND_MAX, _qr_solve
    rng = np.random.default_rng(11)
    n, m = 400, 4
    X = np.c_[np.ones(n), rng.normal(size=(n, 3))]
    labels = np.repeat(np.arange(m), n // m)
    g1 = labels == 1
    X[g1, 3] = X[g1, 2] + 1e-9 * rng.normal(size=g1.sum())   # nearly collinear in group 1
    g2 = labels == 2
    X[g2, 3] = 2.0 * X[g2, 2]                                  # exactly collinear in group 2
    y = X @ [1.0, 2.0, -1.0, 0.5] + rng.normal(size=n)
    scaled = X[labels == 0] / np.linalg.norm(X[labels == 0], axis=0)
    assert _qr_solve(scaled, y[labels == 0], np.empty(4))
    near = X[g1] / np.linalg.norm(X[g1], axis=0)
    assert np.linalg.cond(near) > _QR_COND_MAX
    assert not _qr_solve(near, y[g1], np.empty(4))
    got = group_ols(X, y, labels, m)
    np.testing.assert_allclose(got, group_ols_reference(X, y, labels, m), rtol=1e-6, atol=1e-6)


def test_groups_with_fewer_rows_than_columns_are_minimum_norm():
    """Small groups (n_g < p) take the QR-of-X^T path; they must equal pinv(X_g) y, and the
    path must refuse a group whose rows are linearly dependent (it then takes the SVD path)."""
    from dpstats._kernels.tukey import _min_norm_wide
    rng = np.random.default_rng(12)
    p, m = 8, 300
    n = 5 * m
    X = np.c_[np.ones(n), rng.normal(size=(n, p - 1)) * [1, 2, 5, 10, 0.5, 3, 7]]
    y = X @ rng.normal(size=p) + rng.normal(size=n)
    labels = rng.integers(0, m, n)
    got = group_ols(X, y, labels, m)
    for g in range(0, m, 7):
        rows = labels == g
        if 2 <= rows.sum() < p:                # one row: every column is constant (dropped)
            np.testing.assert_allclose(got[g], np.linalg.pinv(X[rows]) @ y[rows],
                                       rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(got, group_ols_reference(X, y, labels, m), rtol=1e-6, atol=1e-8)
    Xg = X[:3].copy()
    Xg[2] = Xg[1]                                              # dependent rows
    assert not _min_norm_wide(np.ascontiguousarray(Xg.T), y[:3], np.empty(p))
    assert _min_norm_wide(np.ascontiguousarray(X[:3].T), y[:3], beta := np.empty(p))
    np.testing.assert_allclose(beta, np.linalg.pinv(X[:3]) @ y[:3], rtol=1e-9, atol=1e-12)
