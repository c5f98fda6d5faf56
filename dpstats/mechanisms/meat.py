"""A private "meat" matrix for heteroscedasticity-robust (sandwich) standard errors.

The sandwich covariance of a least-squares fit is ``G^-1 S G^-1`` with ``G = X'X`` and the meat
``S = sum_i x_i x_i' r_i^2`` (White 1980; HC0, HC1 = HC0 * n / (n - p)). :func:`release_meat`
releases ``S`` for residuals ``r_i = y_i - x_i theta`` of an **already released** ``theta``,
with each row's term clipped so that its Frobenius norm is at most ``bound``:

    ``q_i = min(r_i^2, bound / ||x_i||^2)``,  ``S~ = sum_i x_i x_i' q_i``,

so the term ``x_i x_i' q_i`` of any row has ``||x_i x_i' q_i||_F = ||x_i||^2 q_i <= bound``.

**Neighbours and sensitivity.** Add/remove one row, ``theta`` and ``bound`` fixed (released or
public values: adaptive composition with the fit and with whatever released ``bound``).
One row adds or removes one term, so the upper triangle of ``S~`` (diagonal included) moves
by at most ``sqrt(sum_{j<=k} (x_j x_k q)^2) <= ||x x' q||_F <= bound`` in L2 norm: the
release is the Gaussian mechanism (:func:`dpstats.mechanisms.additive.gaussian`, analytic
calibration) on that triangle with L2 sensitivity ``bound``, mirrored into a symmetric matrix
(post-processing). (eps, delta)-DP.

The clipping biases ``S~`` downwards only for rows whose ``||x||^2 r^2`` exceeds ``bound``;
callers choose ``bound`` as a multiple of the typical term from released values.
"""

from __future__ import annotations

import math

import numpy as np

from .._kernels.row_sums import FixedSum, tdot_fixed
from .accountant import Ledger
from .additive import analytic_gaussian_sigma, gaussian

__all__ = ["clipped_meat", "clipped_meat_fixed", "release_meat", "meat_sigma"]


def clipped_meat(X: np.ndarray, r: np.ndarray, bound: float) -> np.ndarray:
    """``sum_i x_i x_i' min(r_i^2, bound / ||x_i||^2)`` (no noise): the value of
    :func:`clipped_meat_fixed`.

    >>> S = clipped_meat(np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([3.0, 1.0]), 4.0)
    >>> S.round(4).tolist()
    [[4.0, 0.0], [0.0, 4.0]]
    """
    return clipped_meat_fixed(X, r, bound).value


def clipped_meat_fixed(X: np.ndarray, r: np.ndarray, bound: float) -> FixedSum:
    """:func:`clipped_meat` as an exact sum: rows ``z_i = x_i sqrt(q_i)`` (norm^2 <= bound)
    quantised, ``sum z_i z_i'`` added as integers (:mod:`dpstats._kernels.row_sums`); parts
    of the rows add up to the same bits."""
    norm2 = np.einsum("ij,ij->i", X, X)
    with np.errstate(divide="ignore"):
        cap = np.where(norm2 > 0, float(bound) / norm2, np.inf)
    q = np.minimum(np.asarray(r, dtype=np.float64) ** 2, cap)
    Z = X * np.sqrt(q)[:, None]         # rows of norm^2 <= bound; z z' = x x' q, added exactly
    return tdot_fixed(Z, Z, math.sqrt(float(bound)), math.sqrt(float(bound)))


def meat_sigma(bound: float, eps: float, delta: float) -> float:
    """Noise standard deviation of every released entry of :func:`release_meat`.

    >>> round(meat_sigma(1.0, 1.0, 1e-5), 2)
    3.73
    """
    return analytic_gaussian_sigma(bound, eps, delta)


def release_meat(X: np.ndarray, r: np.ndarray, bound: float, eps: float, delta: float,
                 rng: np.random.Generator, ledger: Ledger | None = None, *,
                 stage: str | None = None, what: str = "meat matrix",
                 total: np.ndarray | None = None) -> np.ndarray:
    """The clipped meat ``sum_i x_i x_i' min(r_i^2, bound / ||x_i||^2)`` plus symmetric
    Gaussian noise, (eps, delta)-DP.

    Neighbours: add/remove one row (``r`` the residuals of a released fit, ``bound`` public
    or released). L2 sensitivity of the released upper triangle: ``bound`` (see the module
    docstring). Returns the symmetric ``(p, p)`` released matrix. ``total``: the same sum
    :func:`clipped_meat` already added up over the rows elsewhere (a dask frame's partitions,
    :mod:`dpstats.dask.inference`); ``X``, ``r`` are then not read.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.c_[np.ones(4), [0.5, -0.5, 0.5, -0.5]]
    >>> S = release_meat(X, np.array([0.1, 0.2, -0.1, 0.0]), 1.0, 1e6, 1e-5, rng)
    >>> np.round(S, 2).tolist()
    [[0.06, -0.01], [-0.01, 0.02]]
    """
    X = np.asarray(X, dtype=np.float64)
    p = X.shape[1]
    iu = np.triu_indices(p)
    total = clipped_meat(X, r, bound) if total is None else np.asarray(total, dtype=np.float64)
    tri = gaussian(total[iu], float(bound), eps, delta, rng, ledger,
                   stage=stage, what=f"{what}: upper triangle of sum x x' r^2 with each row's "
                                     f"term clipped to Frobenius norm {bound:.4g}, symmetric "
                                     f"noise")
    S = np.zeros((p, p))
    S[iu] = np.atleast_1d(tri)
    return S + np.triu(S, 1).T
