"""The homotopy Lasso path of one group: exact at the grid alpha where it stops."""

import math

import numpy as np
import pytest

from dpstats._kernels.lasso import lasso_cd, lasso_topk_support
from dpstats._kernels.lasso_path import homotopy_at_grid
from dpstats._kernels.lasso_reference import lasso_topk_support_reference

N_ALPHAS, RATIO = 100, 1e-4


def _standardised(n, d, seed, collinear=0.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X = X + collinear * X[:, :1]                       # a shared factor: correlated columns
    y = X[:, :3] @ rng.normal(size=3) * rng.uniform(0.2, 3) + rng.standard_normal(n)
    Xc = X - X.mean(axis=0)
    Xc /= np.sqrt((Xc**2).mean(axis=0))
    return np.ascontiguousarray(Xc.T), y - y.mean()


def _grid(alpha_max):
    i = np.arange(1, N_ALPHAS)
    return alpha_max * RATIO ** (i / (N_ALPHAS - 1))


@pytest.mark.parametrize("seed", range(12))
def test_stops_at_the_first_grid_alpha_with_target_actives_and_is_exact_there(seed):
    n, d = (8 + seed, 6 + seed % 5)
    Xt, y = _standardised(n, d, seed, collinear=2.0 if seed % 2 else 0.0)
    corr = np.abs(Xt @ y) / n
    target = min(4, n - 1, d)
    beta = np.empty(d)
    assert homotopy_at_grid(Xt, y, np.ones(d, np.bool_), corr.max(), target, N_ALPHAS, RATIO,
                            beta)
    c = Xt @ (y - Xt.T @ beta) / n                    # correlations of the residual
    on = beta != 0
    grid = _grid(corr.max())
    kkt = [max(np.abs(np.abs(c[on]) - a).max(initial=0), np.abs(c[~on]).max(initial=0) - a)
           for a in grid]
    stop = int(np.argmin(kkt))
    alpha = grid[stop]
    assert kkt[stop] <= 1e-9 * alpha                   # KKT conditions hold at that grid alpha
    np.testing.assert_array_equal(np.sign(c[on]), np.sign(beta[on]))
    assert on.sum() >= target or stop == len(grid) - 1
    np.testing.assert_allclose(beta, lasso_cd(Xt.T, y, alpha, tol=1e-14, max_iter=10**6),
                               atol=1e-7 * np.abs(beta).max())
    for earlier in grid[:stop]:                        # earlier grid alphas: fewer actives
        b = lasso_cd(Xt.T, y, earlier, tol=1e-14, max_iter=10**6)
        assert np.count_nonzero(np.abs(b) > 1e-9 * np.abs(beta).max()) < target


def test_exact_on_many_correlated_paths():
    """Strongly correlated columns make coefficients cross zero and leave (and rejoin, often
    on the other sign's boundary); the solution must stay exact after such breakpoints."""
    for seed in range(150):
        Xt, y = _standardised(9, 8, seed, collinear=1.5)
        corr = np.abs(Xt @ y) / 9
        beta = np.empty(8)
        if not homotopy_at_grid(Xt, y, np.ones(8, np.bool_), corr.max(), 7, N_ALPHAS, RATIO,
                                beta):
            continue
        c = Xt @ (y - Xt.T @ beta) / 9
        alpha = np.abs(c[beta != 0]).max()
        ref = lasso_cd(Xt.T, y, alpha, tol=1e-14, max_iter=10**6)
        np.testing.assert_allclose(beta, ref, atol=1e-6 * np.abs(beta).max())


def test_degenerate_paths_report_failure_or_a_valid_solution():
    Xt, y = _standardised(10, 4, 3)
    Xt[1] = Xt[0]                                       # an exact duplicate column
    corr = np.abs(Xt @ y) / 10
    beta = np.empty(4)
    ok = homotopy_at_grid(Xt, y, np.ones(4, np.bool_), corr.max(), 4, N_ALPHAS, RATIO, beta)
    if ok:                                              # then the duplicate never joined
        assert np.isfinite(beta).all() and beta[0] * beta[1] == 0.0
    nothing = np.empty(4)
    assert homotopy_at_grid(Xt, y, np.zeros(4, np.bool_), 1.0, 2, N_ALPHAS, RATIO, nothing)
    assert not nothing.any()


def test_support_with_duplicate_columns_lists_distinct_features():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((600, 8))
    X[:, 5] = X[:, 4]
    y = X[:, 4] + 0.5 * X[:, 1] - 0.5 * X[:, 2] + rng.standard_normal(600)
    sup = lasso_topk_support(X, y, rng.integers(0, 30, 600), 30, 4)
    assert all(len(set(row[row >= 0].tolist())) == (row >= 0).sum() for row in sup)
    assert all(not {4, 5} <= set(row.tolist()) for row in sup)   # one of the twins only


def test_collinear_small_groups_match_the_reference():
    """Groups of about p rows with correlated columns (the SubLasso regime); small, because the
    reference's coordinate descent is slow exactly there."""
    rng = np.random.default_rng(1)
    n, d, m = 240, 7, 24
    base = rng.standard_normal((n, 1))
    X = base * rng.uniform(1, 2, d) + 0.7 * rng.standard_normal((n, d))
    y = X[:, 0] - X[:, 3] + math.pi * rng.standard_normal(n)
    labels = rng.integers(0, m, n)
    got = lasso_topk_support(X, y, labels, m, 4)
    np.testing.assert_array_equal(got, lasso_topk_support_reference(X, y, labels, m, 4))
