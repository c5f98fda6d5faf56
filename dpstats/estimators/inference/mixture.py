"""Standard errors from a Gaussian mixture error model, computed exactly (no Monte Carlo).

An error model that is an equal-weight mixture of ``K`` Gaussians ``N(b_k, V_k)`` (one per
plausible curvature) gives, per coefficient ``j``, the symmetric 95% half-width ``h_j`` that
solves ``mean_k P(|b_kj + sqrt(V_kjj) Z| <= h_j) = 0.95`` (``Z`` standard normal; bisection on
the exact normal CDF) and the standard error ``h_j / 1.96``; correlations are the mixture's.
Post-processing only: no draw is made.

Why not draws: a bootstrap from a fixed public seed reuses the same 2,000 standard normals in
every fit, so their own Monte Carlo error is not averaged out across fits but repeated in each:
at two fitted columns (``dp_lm(method="dpgd")`` with one predictor) the 95% quantile of
``|xi|`` of those draws is 0.975 and 0.970 of the normal's, every interval 2.5-3% short and
its variance 5-6% short (design-notes.md, "DP-GD's p = 1 under-coverage").

>>> import numpy as np
>>> cov = mixture_covariance(np.zeros((1, 2)), np.eye(2)[None] * 4.0, np.eye(2), np.zeros(2))
>>> np.sqrt(np.diag(cov)).round(6).tolist()
[2.0, 2.0]
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

__all__ = ["mixture_covariance", "mixture_half_width", "mixture_quantile",
           "centred_mixture_covariance", "exact_covariance", "Z95"]

#: The normal's 97.5% quantile (the symmetric 95% interval's).
Z95 = 1.959963984540054
#: Bisection steps (the bracket shrinks by 2^-60: far below any printed digit).
_STEPS = 60


def mixture_half_width(b: np.ndarray, s: np.ndarray, level: float = 0.95) -> np.ndarray:
    """Per column ``j`` of ``(K, q)`` means ``b`` and sds ``s``: the ``h`` with
    ``mean_k P(|b_kj + s_kj Z| <= h) = level`` (NaN where a column has a non-finite entry).

    >>> round(float(mixture_half_width(np.zeros((1, 1)), np.ones((1, 1)))[0]), 6)
    1.959964
    """
    b, s = np.abs(np.asarray(b, dtype=np.float64)), np.asarray(s, dtype=np.float64)
    bad = ~(np.isfinite(b).all(axis=0) & np.isfinite(s).all(axis=0))
    b, s = np.where(np.isfinite(b), b, 0.0), np.where(np.isfinite(s), np.maximum(s, 1e-300), 1.0)
    lo = np.zeros(b.shape[1])
    hi = (b + 10.0 * s).max(axis=0)             # P(|.| <= hi) >= 1 - 2e-23 for every k
    for _ in range(_STEPS):
        mid = (lo + hi) / 2.0
        inside = (ndtr((mid - b) / s) - ndtr((-mid - b) / s)).mean(axis=0)
        below = inside < level
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    out = (lo + hi) / 2.0
    out[bad] = np.nan
    return out


def mixture_quantile(b: np.ndarray, s: np.ndarray, prob: float) -> np.ndarray:
    """Per column ``j`` of ``(K, q)`` means ``b`` and sds ``s``: the ``x`` with
    ``mean_k P(b_kj + s_kj Z <= x) = prob`` (bisection on the normal CDF; NaN where a column
    has a non-finite entry; a column of zero sds gives the quantile of its means' steps).

    >>> b = np.array([[-1.0], [1.0]])
    >>> abs(round(float(mixture_quantile(b, np.ones((2, 1)), 0.5)[0]), 6))
    0.0
    >>> round(float(mixture_quantile(np.zeros((1, 1)), np.ones((1, 1)), 0.975)[0]), 6)
    1.959964
    """
    b, s = np.asarray(b, dtype=np.float64), np.asarray(s, dtype=np.float64)
    bad = ~(np.isfinite(b).all(axis=0) & np.isfinite(s).all(axis=0))
    b, s = np.where(np.isfinite(b), b, 0.0), np.where(np.isfinite(s), np.maximum(s, 1e-300), 1.0)
    lo, hi = (b - 10.0 * s).min(axis=0), (b + 10.0 * s).max(axis=0)
    for _ in range(_STEPS):
        mid = (lo + hi) / 2.0
        below = ndtr((mid - b) / s).mean(axis=0) < prob
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    out = (lo + hi) / 2.0
    out[bad] = np.nan
    return out


def _mixture(bias, cov, M, shift):
    """The mixture's component means ``(K, q)``, sds ``(K, q)`` and its correlation matrix on
    the original scale."""
    B = bias @ M.T + np.asarray(shift)[None, :]
    V = np.einsum("ij,kjl,ml->kim", M, (cov + cov.transpose(0, 2, 1)) / 2.0, M)
    sd = np.sqrt(np.maximum(np.einsum("kii->ki", V), 0.0))
    total = V.mean(axis=0) + np.cov(B, rowvar=False, bias=True).reshape(V.shape[1:])
    d = np.sqrt(np.diag(total))
    with np.errstate(invalid="ignore", divide="ignore"):
        R = total / np.outer(d, d)
    R = np.where(np.isfinite(R), R, 0.0)
    np.fill_diagonal(R, 1.0)
    return B, sd, R


def mixture_covariance(bias: np.ndarray, cov: np.ndarray, M: np.ndarray,
                       shift: np.ndarray) -> np.ndarray:
    """``(q, q)`` covariance of the errors ``M (b_k + V_k^(1/2) Z) + shift`` (equal weights over
    the ``K`` pairs ``bias[k]``, ``cov[k]`` on the fitted scale): standard errors are the
    symmetric 95% half-widths of :func:`mixture_half_width` divided by :data:`Z95` (bias
    included), correlations those of the mixture."""
    B, sd, R = _mixture(bias, cov, M, shift)
    se = mixture_half_width(B, sd) / Z95
    return se[:, None] * R * se[None, :]


def centred_mixture_covariance(bias: np.ndarray, cov: np.ndarray, M: np.ndarray,
                               shift: np.ndarray, basic: bool = False
                               ) -> tuple[np.ndarray, np.ndarray]:
    """``(cov, centre)`` of the same mixture as :func:`mixture_covariance`, for an interval
    centred at ``params - centre`` (``centre`` the estimated bias): ``centre`` is the mixture's
    mean and the standard errors the exact symmetric 95% half-width of the mixture about it
    (:func:`mixture_half_width`) over :data:`Z95`; correlations are the mixture's. Intervals
    centred so remove the estimated bias instead of widening to hold it.

    ``basic``: the basic interval ``[params - Q(0.975), params - Q(0.025)]`` instead (``Q``
    the mixture's exact quantiles, :func:`mixture_quantile`; ``centre`` their midpoint, as
    :func:`dpstats.estimators.inference.glm.centred_covariance` with draws). Not used for
    DP-GD: the plausible curvatures' bias plug-ins are right-skewed (the bias is convex in
    ``C^-1``) and over-spread, and the quantiles' midpoint over-corrected logistic DP-GD's
    slopes by 0.25-0.41 sd, the mean by 0.05-0.2 (design-notes.md, "DP-GD's intervals
    centred").

    >>> B = np.array([[1.0], [2.0], [6.0]])
    >>> cov, c = centred_mixture_covariance(B, np.ones((3, 1, 1)), np.eye(1), np.zeros(1))
    >>> round(float(c[0]), 6)
    3.0
    >>> cov, c = centred_mixture_covariance(B[:1] * 3.0, np.eye(1)[None] * 4.0, np.eye(1),
    ...                                     np.zeros(1), basic=True)
    >>> round(float(c[0]), 6), round(float(np.sqrt(cov[0, 0])), 6)
    (3.0, 2.0)
    """
    B, sd, R = _mixture(bias, cov, M, shift)
    if basic:
        lo, hi = mixture_quantile(B, sd, 0.025), mixture_quantile(B, sd, 0.975)
        se, centre = (hi - lo) / (2.0 * Z95), (lo + hi) / 2.0
    else:
        centre = B.mean(axis=0)
        se = mixture_half_width(B - centre[None, :], sd) / Z95
    return se[:, None] * R * se[None, :], centre


def exact_covariance(bias: np.ndarray, cov: np.ndarray, M: np.ndarray, shift: np.ndarray,
                     centred: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """``(cov, centre)`` of objective perturbation's intervals (:mod:`.glm`) from the mixture,
    exactly (no draws: the fixed-seed draws used before repeated their Monte Carlo error in
    every fit, design-notes.md, "dp_glm's default intervals without fixed-seed draws").
    ``centred``: the basic bootstrap interval (:func:`centred_mixture_covariance` with
    ``basic=True``); otherwise symmetric about ``params`` (:func:`mixture_covariance`) and
    ``centre`` None.

    >>> cov, c = exact_covariance(np.array([[1.0]]), np.array([[[4.0]]]), np.eye(1),
    ...                           np.zeros(1), True)
    >>> round(float(c[0]), 6), round(float(np.sqrt(cov[0, 0])), 6)
    (1.0, 2.0)
    """
    if centred:
        return centred_mixture_covariance(bias, cov, M, shift, basic=True)
    return mixture_covariance(bias, cov, M, shift), None
