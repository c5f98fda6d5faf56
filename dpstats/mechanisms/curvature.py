"""Private curvature statistics for standard errors: a weighted Gram matrix and a clipped
residual sum of squares, released with Gaussian noise.

What the inference of a GLM or DP-GD fit needs from the data (besides the fit itself) is the
curvature of its loss at the released coefficients, ``C = sum_i w_i u_i u_i'`` (the Fisher
information of a logistic fit with ``w_i = s_i (1 - s_i)``, ``s_i`` its fitted probability; the
Gram matrix ``U'U`` of a least-squares fit with ``w_i = 1``), and for least squares the sum of
squared residuals. Both are evaluated at coefficients that were already released, so one row
enters each sum once (adaptive composition with the fit).

**Neighbours: add/remove one row.** Rows are clipped to L2 norm <= 1 and weights to
``[0, weight_bound]`` here (the callers' rows already satisfy this; the clipping makes the bound
hold whatever is passed). One row adds ``w u u'``, whose Frobenius norm is ``w ||u||^2 <=
weight_bound``; the upper triangle (diagonal included) is a subset of the entries, so **its L2
sensitivity is ``weight_bound``**. Each residual is clipped to ``[-1, 1]``, so one row adds at
most 1 to the residual sum of squares: **L2 (and L1) sensitivity 1**.

Two ways to release, both Gaussian with the standard deviation ``sensitivity / mu``:

* as a part of a Gaussian-DP plan the estimator already made and charged
  (:class:`dpstats.mechanisms.gdp.GaussianGDP`, :func:`release_curvature_part`,
  :func:`release_rss_part`): the part's ``mu_k`` composes with the fit's releases under
  Gaussian DP, which is far cheaper than a separate ``(eps, delta)`` release at a small share;
* on its own (:func:`release_curvature`): the analytic Gaussian mechanism at ``(eps, delta)``
  (calibration of :func:`dpstats.mechanisms.additive.analytic_gaussian_sigma`, grid noise of
  :func:`dpstats.mechanisms.noise.grid_gaussian` as :func:`dpstats.mechanisms.gaussian`),
  charged to the ledger before the draw.

Examples
--------
>>> U = np.array([[0.6, 0.8], [1.0, 0.0], [0.0, 0.5]])
>>> curvature_sum(U, np.array([0.25, 0.1, 0.2]), 0.25).round(3).tolist()
[[0.19, 0.12], [0.12, 0.21]]
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .._kernels.row_sums import FixedSum, row_sum_fixed, tdot_fixed
from ..validation import check_delta, check_eps
from . import noise as _noise
from .additive import analytic_gaussian_sigma

__all__ = ["curvature_sum", "curvature_sum_fixed", "clipped_rss", "clipped_rss_fixed",
           "squares_fixed", "release_curvature", "release_curvature_part",
           "release_rss_part", "ROW_NORM", "RESID_CLIP"]

#: Rows are clipped to this L2 norm before they enter the sums.
ROW_NORM = 1.0
#: Residuals are clipped to ``[-RESID_CLIP, RESID_CLIP]``.
RESID_CLIP = 1.0


def _rows(U) -> np.ndarray:
    U = np.asarray(U, dtype=np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", U, U))
    if norms.size == 0 or norms.max() <= ROW_NORM:      # nothing to clip: no copy
        return U
    scale = np.minimum(1.0, ROW_NORM / np.maximum(norms, 1e-300))
    return U * scale[:, None]


def curvature_sum(U, weights, weight_bound: float) -> np.ndarray:
    """``sum_i w_i u_i u_i'`` with rows clipped to L2 norm 1 and weights to
    ``[0, weight_bound]`` (not private: the value a release adds noise to), the value of
    :func:`curvature_sum_fixed`."""
    return curvature_sum_fixed(U, weights, weight_bound).value


def curvature_sum_fixed(U, weights, weight_bound: float) -> FixedSum:
    """:func:`curvature_sum` as an exact sum (:mod:`dpstats._kernels.row_sums`): the rows
    ``z_i = sqrt(w_i) u_i`` (norm <= sqrt(weight_bound)) quantised, ``sum z_i z_i'`` added as
    integers, so parts of the rows (dask partitions) add up to the same bits."""
    V = _rows(U)
    w = np.clip(np.asarray(weights, dtype=np.float64), 0.0, float(weight_bound))
    Z = V * np.sqrt(w)[:, None]
    root = math.sqrt(float(weight_bound))
    return tdot_fixed(Z, Z, root, root)


def clipped_rss(U, y, theta) -> float:
    """``sum_i clip(y_i - u_i theta, -1, 1)^2`` (rows clipped to norm 1; not private), the
    value of :func:`clipped_rss_fixed`."""
    return float(clipped_rss_fixed(U, y, theta).value[0])


def clipped_rss_fixed(U, y, theta) -> FixedSum:
    """:func:`clipped_rss` as an exact sum (each squared residual, at most 1, on a grid)."""
    r = np.clip(np.asarray(y, dtype=np.float64) - _rows(U) @ np.asarray(theta, dtype=np.float64),
                -RESID_CLIP, RESID_CLIP)
    return squares_fixed(r)


def squares_fixed(r) -> FixedSum:
    """``sum_i r_i^2`` of residuals already clipped to ``[-1, 1]``, exactly on a grid."""
    r = np.asarray(r, dtype=np.float64)
    return row_sum_fixed((r * r)[:, None], RESID_CLIP ** 2)


def release_curvature_part(plan, part: str, U, weights, weight_bound: float):
    """Release the curvature as one release of ``part`` of a charged Gaussian-DP ``plan``
    (upper triangle, L2 sensitivity ``weight_bound``); returns ``(matrix, sigma)``, the
    released symmetric matrix and its noise standard deviation per upper-triangle entry."""
    C = curvature_sum(U, weights, weight_bound)
    return plan.release(part, C, weight_bound, symmetric=True), plan.sigma(part, weight_bound)


def release_rss_part(plan, part: str, U, y, theta):
    """Release the clipped residual sum of squares as one release of ``part`` of a charged
    Gaussian-DP ``plan`` (L2 sensitivity 1); returns ``(value, sigma)``."""
    value = plan.release(part, clipped_rss(U, y, theta), RESID_CLIP**2)
    return float(value), plan.sigma(part, RESID_CLIP**2)


def release_curvature(U, weights, weight_bound: float, eps: float, delta: float, rng,
                      ledger=None, *, stage: str | None = "inference",
                      what: str = "curvature of the loss at the released coefficients",
                      exact=None):
    """Release the curvature on its own: the analytic Gaussian mechanism on the upper triangle
    (L2 sensitivity ``weight_bound``), ``(eps, delta)``-DP, charged to ``ledger``; returns
    ``(matrix, sigma)``. Neighbours: add or remove one row (one term ``w_i u_i u_i'`` of
    Frobenius norm at most ``weight_bound``, after the rows' clip to norm 1 and the weights'
    to ``[0, weight_bound]``). ``exact``: the same sum :func:`curvature_sum` computed elsewhere
    (a dask frame's workers, :meth:`dpstats.dask.glm.DaskRows.fisher`, by this function; ``U``
    and ``weights`` are then unused).

    >>> U = np.array([[0.6, 0.8], [1.0, 0.0]])
    >>> C, s = release_curvature(U, [0.25, 0.25], 0.25, 1e6, 1e-5, np.random.default_rng(0))
    >>> exact = curvature_sum(U, [0.25, 0.25], 0.25)
    >>> bool(np.abs(C - exact).max() < 1e-3), bool(C[0, 1] == C[1, 0])
    (True, True)
    """
    eps, delta = check_eps(eps), check_delta(delta)
    bound = float(weight_bound)
    sigma = _sigma(bound, eps, delta)
    if ledger is not None:
        ledger.charge("gaussian", eps, delta, stage=stage,
                      detail=f"{what} (upper triangle of sum_i w_i u_i u_i', rows of L2 norm "
                             f"<= 1, weights in [0, {bound:.4g}]); L2 sensitivity {bound:.4g}, "
                             f"sigma {sigma:.4g}")
    C = curvature_sum(U, weights, bound) if exact is None else np.asarray(exact, dtype=np.float64)
    p = C.shape[0]
    iu = np.triu_indices(p)
    out = np.zeros((p, p))
    out[iu] = np.atleast_1d(_noise.grid_gaussian(C[iu], bound, sigma, rng))
    out = out + np.triu(out, 1).T
    return out, sigma


@lru_cache(maxsize=64)
def _sigma(bound: float, eps: float, delta: float) -> float:
    """The analytic Gaussian calibration (Balle & Wang 2018; a pure function, cached)."""
    return analytic_gaussian_sigma(bound, eps, delta)
