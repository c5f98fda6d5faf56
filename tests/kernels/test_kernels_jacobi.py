"""Householder QR + one-sided Jacobi SVD (small Tukey groups) and the thread guards."""

import numpy as np
import pytest

from dpstats._kernels.jacobi_svd import householder_qr, jacobi_svd, jacobi_svd_reference
from dpstats._kernels.runtime import _openblas_controls, single_threaded_blas
from dpstats._kernels.tukey import JACOBI_MAX_COLS, group_ols, group_ols_reference


def _matrix(n, p, rank, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, rank)) @ rng.standard_normal((rank, p))
    return A * 10.0 ** rng.uniform(-3, 3, p)          # badly scaled columns


@pytest.mark.parametrize("n,p,rank", [(18, 6, 6), (30, 12, 12), (7, 6, 6), (4, 6, 4),
                                      (25, 8, 5), (1, 3, 1), (12, 2, 1)])
def test_jacobi_singular_values_and_vectors_match_numpy(n, p, rank):
    A = _matrix(n, p, rank, n + p + rank)
    s_ref, V_ref = jacobi_svd_reference(A)
    B = A.copy()
    V = np.empty((p, p))
    s = jacobi_svd(B, V)
    np.testing.assert_allclose(np.sort(s)[::-1][:rank], s_ref[:rank], rtol=1e-12,
                               atol=1e-13 * s_ref[0])     # LAPACK: absolute accuracy
    assert np.all(np.sort(s)[::-1][rank:] <= 1e-12 * s_ref[0])
    np.testing.assert_allclose(V.T @ V, np.eye(p), atol=1e-13)            # orthogonal
    np.testing.assert_allclose(A @ V, B, atol=1e-12 * s_ref[0])          # A V = U diag(s)
    top = np.argsort(s)[::-1][:rank]
    for i, ref in zip(top, V_ref.T[:rank], strict=True):                   # same directions
        if rank == p or s_ref[0] / s_ref[rank - 1] < 1e6:
            assert abs(abs(V[:, i] @ ref) - 1.0) < 1e-9


@pytest.mark.parametrize("n,p", [(18, 6), (5, 6), (6, 6), (40, 3)])
def test_householder_qr_keeps_gram_matrix_and_projection(n, p):
    rng = np.random.default_rng(n * p)
    A = rng.standard_normal((n, p))
    y = rng.standard_normal(n)
    R, qty = A.copy(), y.copy()
    rows = householder_qr(R, qty)
    assert rows == min(n, p)
    np.testing.assert_allclose(np.tril(R[:rows], -1), 0.0)
    np.testing.assert_allclose(R[:rows].T @ R[:rows], A.T @ A, atol=1e-12)
    np.testing.assert_allclose(R[:rows].T @ qty[:rows], A.T @ y, atol=1e-12)   # Q^T y
    np.testing.assert_allclose(np.linalg.norm(qty), np.linalg.norm(y))


@pytest.mark.parametrize("p", [3, 6, JACOBI_MAX_COLS, JACOBI_MAX_COLS + 2])
def test_group_ols_with_dummies_and_collinear_columns_matches_reference(p):
    rng = np.random.default_rng(p)
    n, m = 1500, 60
    X = np.c_[np.ones(n), rng.normal(size=(n, p - 1)) * rng.uniform(0.1, 100, p - 1) + 300.0]
    level = rng.integers(0, 3, n)
    X[:, 1], X[:, 2] = level == 0, level == 1           # dummies (with the intercept)
    X[:, -1] = 2.0 * X[:, 1] if p > 3 else X[:, -1]   # exactly collinear with a dummy
    y = X @ rng.normal(size=p) + rng.normal(size=n)
    labels = rng.integers(0, m, n)
    got = group_ols(X, y, labels, m)
    np.testing.assert_allclose(got, group_ols_reference(X, y, labels, m), rtol=1e-7, atol=1e-8)


def test_small_groups_have_fewer_rows_than_columns():
    rng = np.random.default_rng(3)
    X = np.c_[np.ones(40), rng.normal(size=(40, 7))]
    y = rng.normal(size=40)
    labels = rng.integers(0, 12, 40)                    # about 3 rows per group, 8 columns
    np.testing.assert_allclose(group_ols(X, y, labels, 12), group_ols_reference(X, y, labels, 12),
                               rtol=1e-7, atol=1e-9)


def test_single_threaded_blas_restores_thread_counts():
    controls = _openblas_controls()
    before = [get() for get, _ in controls]
    with single_threaded_blas():
        assert all(get() == 1 for get, _ in controls)
    assert [get() for get, _ in controls] == before
    with pytest.raises(RuntimeError), single_threaded_blas():
        raise RuntimeError("restored on errors too")
    assert [get() for get, _ in controls] == before


def test_kernel_threads_runs_small_inputs_on_one_thread_and_restores():
    import numba

    from dpstats._kernels.runtime import PARALLEL_MIN_WORK, kernel_threads
    before = numba.get_num_threads()
    with kernel_threads(PARALLEL_MIN_WORK - 1):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    with kernel_threads(PARALLEL_MIN_WORK):
        assert numba.get_num_threads() == before
    with pytest.raises(KeyError), kernel_threads(0):
        raise KeyError("restored on errors too")
    assert numba.get_num_threads() == before
