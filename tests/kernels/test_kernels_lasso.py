"""Lasso kernels == numpy references == statsmodels; SubLasso path-support behaviour."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from dpstats._kernels.lasso import lasso_cd, lasso_topk_support, support_votes
from dpstats._kernels.lasso_reference import lasso_cd_reference, lasso_topk_support_reference


def _regression(n, d, seed, support=(0, 1, 4)):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3, size=d)
    beta = np.zeros(d)
    beta[list(support)] = rng.choice([-2.0, -1.0, 1.0, 2.0], size=len(support))
    return X, X @ beta + rng.normal(size=n)


def _objective(X, y, b, alpha):
    r = y - X @ b
    return r @ r / (2 * len(y)) + alpha * np.abs(b).sum()


@pytest.mark.parametrize("alpha", [0.001, 0.05, 0.3, 1.0])
def test_lasso_cd_matches_statsmodels_and_reference(alpha):
    X, y = _regression(150, 10, 1)
    got = lasso_cd(X, y, alpha)
    sm_fit = sm.OLS(y, X).fit_regularized(method="elastic_net", alpha=alpha, L1_wt=1.0,
                                          maxiter=10_000, cnvrg_tol=1e-12)
    np.testing.assert_allclose(got, sm_fit.params, atol=1e-6)
    np.testing.assert_allclose(got, lasso_cd_reference(X, y, alpha), atol=1e-6)


def test_statsmodels_objective_scaling_is_rss_over_2n():
    """statsmodels minimises RSS/(2n) + alpha*L1: its optimum scores best on that objective."""
    X, y = _regression(80, 5, 2)
    alpha = 0.2
    ours = lasso_cd(X, y, alpha)
    sm_b = sm.OLS(y, X).fit_regularized(alpha=alpha, L1_wt=1.0, maxiter=10_000,
                                        cnvrg_tol=1e-12).params
    assert abs(_objective(X, y, ours, alpha) - _objective(X, y, sm_b, alpha)) < 1e-10
    other = lasso_cd(X, y, alpha / 2)             # e.g. the RSS/n convention
    assert _objective(X, y, ours, alpha) < _objective(X, y, other, alpha) - 1e-6


def test_lasso_cd_kkt_wide_and_warm_start():
    X, y = _regression(30, 60, 3)                 # n < d
    alpha = 0.1
    b = lasso_cd(X, y, alpha, tol=1e-13)
    grad = X.T @ (y - X @ b) / len(y)
    on = b != 0
    assert np.abs(grad).max() <= alpha + 1e-8
    np.testing.assert_allclose(grad[on], alpha * np.sign(b[on]), atol=1e-8)
    ref = lasso_cd_reference(X, y, alpha, tol=1e-13)
    assert abs(_objective(X, y, b, alpha) - _objective(X, y, ref, alpha)) < 1e-9
    np.testing.assert_allclose(lasso_cd(X, y, alpha, beta0=np.ones(60), tol=1e-13), b,
                               atol=1e-6)


def test_lasso_cd_degenerate_inputs():
    X, y = _regression(40, 4, 4, support=(0, 1))
    X[:, 2] = 0.0
    b = lasso_cd(X, y, 0.01, beta0=np.full(4, 5.0))
    assert b[2] == 0.0 and np.isfinite(b).all()
    alpha_max = np.abs(X.T @ y).max() / len(y)
    assert not lasso_cd(X, y, alpha_max * 1.0001).any()
    assert lasso_cd(np.empty((0, 3)), np.empty(0), 0.1).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError):
        lasso_cd(X, y, -1.0)
    with pytest.raises(ValueError):
        lasso_cd(X, np.append(y[:-1], np.nan), 0.1)


def _grouped(n_groups, n_g, d, seed, strong=(3, 7, 11, 20, 25), noise=1.0, intercept=True):
    rng = np.random.default_rng(seed)
    n = n_groups * n_g
    X = rng.normal(size=(n, d)) * np.exp(rng.uniform(-5, 5, size=d))   # wild raw scales
    if intercept:
        X[:, 0] = 1.0
    z = X[:, list(strong)] / X[:, list(strong)].std(axis=0)
    y = 10.0 + z @ np.array([2.0, -2.0, 1.5, -1.5, 2.5])[:len(strong)]
    y = y + noise * rng.normal(size=n)
    labels = rng.permutation(np.repeat(np.arange(n_groups), n_g))
    return X, y, labels


def test_easy_sparse_design_recovers_support():
    strong = (3, 7, 11, 20, 25)
    X, y, labels = _grouped(20, 200, 30, 5, strong)
    sup = lasso_topk_support(X, y, labels, 20, 5, intercept_col=0)
    hits = sum(set(row.tolist()) == set(strong) for row in sup)
    assert hits >= 19
    votes = support_votes(sup, 30)
    assert set(np.argsort(-votes)[:5].tolist()) == set(strong) and votes[0] == 0


def test_scale_free():
    X, y, labels = _grouped(8, 60, 12, 6, strong=(2, 5, 9))
    a = lasso_topk_support(X, y, labels, 8, 3, intercept_col=0)
    scale = np.exp(np.random.default_rng(0).uniform(-6, 6, size=12))
    np.testing.assert_array_equal(lasso_topk_support(X * scale, 7 * y - 3, labels, 8, 3, 0), a)


@pytest.mark.parametrize(("n_groups", "n_g", "d", "k", "seed"),
                         [(6, 50, 10, 3, 7), (10, 12, 25, 4, 8), (5, 8, 6, 5, 9),
                          (4, 40, 8, 8, 10)])
def test_support_matches_reference(n_groups, n_g, d, k, seed):
    X, y, labels = _grouped(n_groups, n_g, d, seed, strong=(1, 2, 5)[: min(3, d - 1)],
                            noise=2.0)
    got = lasso_topk_support(X, y, labels, n_groups, k, intercept_col=0)
    np.testing.assert_array_equal(
        got, lasso_topk_support_reference(X, y, labels, n_groups, k, intercept_col=0))


def test_robust_to_tiny_groups_constant_columns_and_wide_groups():
    rng = np.random.default_rng(11)
    n, d, k = 90, 40, 6
    X = rng.normal(size=(n, d))
    X[:, 0] = 1.0                       # intercept
    X[:, 5] = 3.0                       # constant column
    X[:60, 9] = 0.0                     # constant within some groups only
    y = X[:, 1] - X[:, 2] + rng.normal(size=n)
    labels = np.concatenate([[0], [1, 1], np.full(30, 2), np.full(57, 3)])   # 1, 2, 30, 57 rows
    labels[-1] = 5                      # group 4 stays empty; group 5 has one row
    for n_groups in (6, 8):
        sup = lasso_topk_support(X, y, labels, n_groups, k, intercept_col=0)
        assert sup.shape == (n_groups, k)
        assert (sup[[0, 1, 4, 5]] == -1).all()                  # fewer than 3 rows: no vote
        for row in sup:
            valid = row[row >= 0]
            assert len(set(valid.tolist())) == valid.size and valid.max(initial=0) < d
            assert not np.isin(valid, [0, 5]).any()
            assert (row[valid.size:] == -1).all()               # padding only at the end
        assert 9 not in sup[2]                                  # constant in group 2
        np.testing.assert_array_equal(
            sup, lasso_topk_support_reference(X, y, labels, n_groups, k, intercept_col=0))
    flat = lasso_topk_support(X, np.full(n, 2.0), labels, 6, k, 0)   # constant y: no votes
    assert (flat == -1).all()
    assert (lasso_topk_support(X[:, [0, 5]], y, labels, 6, 1, 0) == -1).all()


def test_votes_have_sensitivity_one():
    rng = np.random.default_rng(12)
    X, y, labels = _grouped(10, 25, 15, 13, strong=(1, 4, 6), noise=3.0)
    base = support_votes(lasso_topk_support(X, y, labels, 10, 4, 0), 15)
    for _ in range(20):
        row = rng.normal(size=15) * 50
        row[0] = 1.0
        X2, y2 = np.vstack([X, row]), np.append(y, rng.normal() * 100)
        lab2 = np.append(labels, rng.integers(10))
        new = support_votes(lasso_topk_support(X2, y2, lab2, 10, 4, 0), 15)
        assert np.abs(new - base).max() <= 1
        drop = rng.integers(len(y))
        new = support_votes(lasso_topk_support(np.delete(X, drop, 0), np.delete(y, drop),
                                               np.delete(labels, drop), 10, 4, 0), 15)
        assert np.abs(new - base).max() <= 1


def test_support_rejects_bad_arguments():
    X, y, labels = _grouped(3, 10, 5, 14, strong=(1, 2))
    with pytest.raises(ValueError):
        lasso_topk_support(X, y, labels, 2, 2, 0)              # label 2 out of range
    with pytest.raises(ValueError):
        lasso_topk_support(X, y, labels.astype(float), 3, 2, 0)
    with pytest.raises(ValueError):
        lasso_topk_support(X, y, labels, 3, 0, 0)
    with pytest.raises(ValueError):
        lasso_topk_support(X, y, labels, 3, 2, 5)
