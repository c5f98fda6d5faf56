"""Covariance of the released Tukey point: correlations of the group models from private design
moments, and the map to the reported coefficients (post-processing of released values).

The mechanism sees each group model in its own coordinates ``b_g`` (with a centre ``c``: the
prediction at ``c`` in place of the intercept, then the slopes) and releases, coordinate by
coordinate, about their median plus independent uniform noise inside a box. For a Gaussian
cloud with correlations ``rho``, the coordinate-wise medians have covariance
``arcsin(rho_jk) sigma_j sigma_k / m`` (Bahadur: the sign vectors' correlation), while each
coordinate's variance is ``f sigma_j^2 / m``
(:func:`dpstats.mechanisms.model_spread.tukey_noise_factor`; the box noise is independent
across coordinates). So the point's correlation is
``arcsin(rho_jk) / f`` (:func:`median_correlation`).

``rho`` is the correlation of the group OLS models: ``Cov(b_g)`` is proportional to ``M^-1``,
``M = E[z z']`` with ``z = (1, (x - c) / s)`` (:func:`model_correlation`), released by
:func:`dpstats.mechanisms.design_moments.design_moments` (clipped rows, Laplace). Scaling the
columns by ``s`` changes no correlation. Exact for homoscedastic errors; with heteroscedastic
errors the correlations are those of ``M^-1`` rather than of the sandwich (the variances
themselves come from the models' own spread and are not affected).

The reported intercept is the mechanism's intercept coordinate minus ``c . slopes`` (a fixed
linear map ``A``, :func:`reported_covariance`): with skewed columns (``c`` the median, not the
mean) the prediction at ``c`` is correlated with the slopes, and the reported intercept's
variance is not the variance of the median of the groups' reported intercepts (which covered
0.920 with exponential covariates, docs/design-notes.md "Tukey covariances").
"""

from __future__ import annotations

import numpy as np

__all__ = ["model_correlation", "median_correlation", "reported_covariance", "intercept_map",
           "moment_matrix", "floored_inverse", "correlation"]

#: Smallest eigenvalue kept of the released moment matrix, relative to its largest.
_EIG_FLOOR = 1e-3


def moment_matrix(S1: np.ndarray, S2: np.ndarray, n_hat: float, intercept_col, p: int,
                  S0: float | None = None) -> np.ndarray:
    """``M = E[z z']`` (p, p) in the mechanism's column order from released sums
    ``S1 = sum u``, ``S2 = sum u u'`` (and ``S0``, the intercept entry: the row count, or
    a weighted design's ``sum w``; default ``n_hat``), each divided by ``n_hat``.

    >>> moment_matrix(np.array([2.0]), np.array([[4.0]]), 2.0, 0, 2).tolist()
    [[1.0, 1.0], [1.0, 2.0]]
    """
    n = max(float(n_hat), 1.0)
    if intercept_col is None:
        M = S2 / n
    else:
        cols = [j for j in range(p) if j != intercept_col]
        M = np.zeros((p, p))
        M[intercept_col, intercept_col] = (n if S0 is None else float(S0)) / n
        M[intercept_col, cols] = M[cols, intercept_col] = S1 / n
        M[np.ix_(cols, cols)] = S2 / n
    return (M + M.T) / 2.0


def floored_inverse(M: np.ndarray) -> np.ndarray:
    """``M^-1`` of a symmetric, noisy ``M`` made positive definite (eigenvalues floored at
    ``1e-3`` of the largest).

    >>> floored_inverse(np.diag([2.0, 4.0])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    vals, vecs = np.linalg.eigh(M)
    top = max(float(vals.max()), 1e-300)
    vals = np.maximum(vals, _EIG_FLOOR * top)
    return (vecs / vals) @ vecs.T


def correlation(V: np.ndarray) -> np.ndarray:
    """The correlation matrix of a covariance ``V`` (unit diagonal, clipped to [-1, 1])."""
    d = np.sqrt(np.diag(V))
    R = V / np.outer(d, d)
    np.fill_diagonal(R, 1.0)
    return np.clip(R, -1.0, 1.0)


def model_correlation(S1: np.ndarray, S2: np.ndarray, n_hat: float, intercept_col, p: int
                      ) -> np.ndarray:
    """Correlation of the group models' coordinates, ``corr(M^-1)``, from released sums
    ``S1 = sum u`` and ``S2 = sum u u'`` of the ``p - 1`` (or ``p`` without an intercept)
    scaled columns, in the mechanism's column order (:func:`moment_matrix`,
    :func:`floored_inverse`).

    >>> S1, S2 = np.array([0.0, 0.0]), np.array([[1.0, 0.5], [0.5, 1.0]])
    >>> np.round(model_correlation(S1, S2, 1.0, 0, 3), 3).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, -0.5], [0.0, -0.5, 1.0]]
    """
    return correlation(floored_inverse(moment_matrix(S1, S2, n_hat, intercept_col, p)))


def median_correlation(rho: np.ndarray, f: float) -> np.ndarray:
    """Correlation of the released point's coordinates: ``arcsin(rho) / f`` off the diagonal
    (positive semi-definite: ``arcsin`` of a correlation matrix is, and ``f >= pi/2``).

    >>> np.round(median_correlation(np.array([[1.0, 0.5], [0.5, 1.0]]), np.pi / 2), 4).tolist()
    [[1.0, 0.3333], [0.3333, 1.0]]
    """
    C = np.arcsin(np.clip(rho, -1.0, 1.0)) / float(f)
    np.fill_diagonal(C, 1.0)
    return C


def intercept_map(c, intercept_col, p: int) -> np.ndarray:
    """``A`` with reported coefficients ``= A @`` the mechanism's point: the identity, and the
    intercept row ``e_intercept - c`` (``c`` the centre, 0 at the intercept).

    >>> intercept_map(np.array([0.0, 2.0]), 0, 2).tolist()
    [[1.0, -2.0], [0.0, 1.0]]
    """
    A = np.eye(p)
    if c is not None and intercept_col is not None:
        cc = np.asarray(c, dtype=np.float64).copy()
        cc[intercept_col] = 0.0
        A[intercept_col] -= cc
    return A


def reported_covariance(se: np.ndarray, C: np.ndarray, A: np.ndarray) -> np.ndarray:
    """``A diag(se) C diag(se) A'``; a reported entry is NaN when it uses a coordinate without
    a standard error (NaN ``se``), else finite.

    >>> V = reported_covariance(np.array([1.0, np.nan]), np.eye(2), np.eye(2))
    >>> float(V[0, 0]), bool(np.isnan(V[0, 1])), bool(np.isnan(V[1, 1]))
    (1.0, True, True)
    """
    se = np.asarray(se, dtype=np.float64)
    bad = ~np.isfinite(se)
    s0 = np.where(bad, 0.0, se)
    V = A @ (s0[:, None] * C * s0[None, :]) @ A.T
    used = np.abs(A) > 0
    missing = used @ bad.astype(np.float64) > 0       # reported coordinate uses a NaN one
    V[missing, :] = np.nan
    V[:, missing] = np.nan
    return V
