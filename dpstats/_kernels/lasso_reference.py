"""Plain-numpy references of :mod:`dpstats._kernels.lasso` (plain cyclic sweeps; for the tests)."""

from __future__ import annotations

import math

import numpy as np

from .lasso import _CONST_REL, _MIN_ROWS, _ZERO_CORR_REL, _check_xy, _prepare_groups

__all__ = ["lasso_cd_reference", "lasso_topk_support_reference"]


def lasso_cd_reference(X, y, alpha: float, max_iter: int = 100_000,
                       tol: float = 1e-12) -> np.ndarray:
    """Plain-numpy cyclic coordinate descent for the :func:`lasso_cd` objective (for tests)."""
    X, y = _check_xy(X, y)
    n, d = X.shape
    c = (X * X).sum(axis=0) / n
    beta = np.zeros(d)
    r = y.copy()
    for _ in range(max_iter):
        biggest = 0.0
        for j in np.flatnonzero(c > 0):
            z = X[:, j] @ r / n + c[j] * beta[j]
            new = np.sign(z) * max(abs(z) - alpha, 0.0) / c[j]
            r -= (new - beta[j]) * X[:, j]
            biggest = max(biggest, abs(new - beta[j]) * math.sqrt(c[j]))
            beta[j] = new
        if biggest <= tol * (math.sqrt(y @ y / n) or 1.0):
            break
    return beta


def lasso_topk_support_reference(X, y, group_labels, n_groups: int, k: int,
                                 intercept_col: int = -1, *, n_alphas: int = 100,
                                 alpha_min_ratio: float = 1e-4, tol: float = 1e-9,
                                 max_iter: int = 100_000) -> np.ndarray:
    """Plain-numpy version of :func:`lasso_topk_support` (one group at a time; for tests)."""
    X, y, order, offsets, keep0 = _prepare_groups(X, y, group_labels, n_groups, k,
                                                  intercept_col, n_alphas, alpha_min_ratio)
    out = np.full((int(n_groups), int(k)), -1, dtype=np.int64)
    for g in range(int(n_groups)):
        rows = order[offsets[g]:offsets[g + 1]]
        if rows.size < _MIN_ROWS:
            continue
        yg = y[rows] - y[rows].mean()
        ysd = math.sqrt(yg @ yg / rows.size)
        if ysd <= _CONST_REL * np.abs(y[rows]).max():
            continue
        Xg = X[rows] - X[rows].mean(axis=0)
        sd = np.sqrt((Xg * Xg).mean(axis=0))
        keep = keep0 & (sd > _CONST_REL * np.abs(X[rows]).max(axis=0))
        Xg = np.where(keep, Xg / np.where(keep, sd, 1.0), 0.0)
        corr = np.where(keep, np.abs(Xg.T @ yg) / rows.size, 0.0)
        keep &= corr > _ZERO_CORR_REL * ysd
        if corr.max() <= _ZERO_CORR_REL * ysd:
            continue
        Xg[:, ~keep] = 0.0
        c = (Xg * Xg).sum(axis=0) / rows.size
        beta, r = np.zeros(X.shape[1]), yg.copy()
        target = min(k, rows.size - 1, int(keep.sum()))
        for step in range(1, int(n_alphas)):
            alpha = corr.max() * alpha_min_ratio ** (step / (n_alphas - 1))
            for _ in range(max_iter):                       # plain cyclic sweeps
                biggest = 0.0
                for j in np.flatnonzero(c > 0):
                    z = Xg[:, j] @ r / rows.size + c[j] * beta[j]
                    new = np.sign(z) * max(abs(z) - alpha, 0.0) / c[j]
                    r -= (new - beta[j]) * Xg[:, j]
                    biggest = max(biggest, abs(new - beta[j]) * math.sqrt(c[j]))
                    beta[j] = new
                if biggest <= tol * ysd:
                    break
            if np.count_nonzero(beta) >= target:
                break
        active = [j for j in np.argsort(-np.abs(beta), kind="stable") if beta[j] != 0][:k]
        fill = [j for j in np.argsort(-corr, kind="stable") if keep[j] and j not in active]
        picked = (active + fill)[:k]
        out[g, :len(picked)] = picked
    return out
