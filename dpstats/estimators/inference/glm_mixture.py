"""Exact intervals of objective perturbation's error mixture (dp_glm's default), no draws.

:mod:`.glm`'s error model is, on the original scale, an equal-weight mixture of ``K``
Gaussians ``N(B_k, V_k)``: one per plausible information ``C_k`` (``B_k = M b_k + shift``,
``V_k = M cov_k M'``). Its intervals used to be read off 2,000 draws ``M (b_k + cov_k^(1/2)
xi) + shift`` with the standard normals ``xi`` from a fixed public seed, the same in every fit,
so their Monte Carlo error repeated in every fit instead of averaging out (design-notes.md,
note 58 for DP-GD). Here each coefficient's quantiles are solved exactly from the mixture's
marginal CDF, ``mean_k Phi((x - B_kj) / sd_kj)``, by bisection (as :mod:`.mixture` does for
DP-GD's symmetric half-width); correlations are the mixture's (its moments). Post-processing
of released values only: nothing is drawn, read from the data or charged.

>>> import numpy as np
>>> lo, hi = mixture_quantiles(np.zeros((1, 1)), np.ones((1, 1)), (0.025, 0.975))
>>> round(float(lo[0]), 6), round(float(hi[0]), 6)
(-1.959964, 1.959964)
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from .mixture import Z95, mixture_half_width

__all__ = ["mixture_quantiles", "mixture_moments", "exact_covariance"]

#: Bisection steps (the bracket shrinks by 2^-60).
_STEPS = 60


def mixture_quantiles(B: np.ndarray, sd: np.ndarray, levels) -> tuple[np.ndarray, ...]:
    """Per column ``j`` of ``(K, q)`` means ``B`` and sds ``sd``: for each level ``a`` the
    ``x`` with ``mean_k Phi((x - B_kj) / sd_kj) = a`` (bisection on the exact normal CDF).

    >>> x = mixture_quantiles(np.array([[-1.0], [1.0]]), np.full((2, 1), 1e-9), (0.25, 0.75))
    >>> [round(float(v[0]), 6) for v in x]
    [-1.0, 1.0]
    """
    B = np.asarray(B, dtype=np.float64)
    sd = np.maximum(np.asarray(sd, dtype=np.float64), 1e-300)
    out = []
    for a in levels:
        lo, hi = (B - 10.0 * sd).min(axis=0), (B + 10.0 * sd).max(axis=0)
        for _ in range(_STEPS):
            mid = (lo + hi) / 2.0
            below = ndtr((mid - B) / sd).mean(axis=0) < a
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        out.append((lo + hi) / 2.0)
    return tuple(out)


def mixture_moments(bias: np.ndarray, cov: np.ndarray, M: np.ndarray, shift: np.ndarray):
    """``(B, sd, R)``: the components' means ``(K, q)`` and sds on the original scale and the
    mixture's correlation matrix ``(q, q)``, from the fitted-scale ``bias`` ``(K, p)`` and
    ``cov`` ``(K, p, p)``."""
    B = bias @ M.T + np.asarray(shift, dtype=np.float64)[None, :]
    V = np.einsum("ij,kjl,ml->kim", M, (cov + cov.transpose(0, 2, 1)) / 2.0, M)
    sd = np.sqrt(np.maximum(np.einsum("kii->ki", V), 0.0))
    total = V.mean(axis=0) + np.cov(B, rowvar=False, bias=True).reshape(V.shape[1:])
    d = np.sqrt(np.diag(total))
    with np.errstate(invalid="ignore", divide="ignore"):
        R = total / np.outer(d, d)
    R = np.where(np.isfinite(R), R, 0.0)
    np.fill_diagonal(R, 1.0)
    return B, sd, R


def exact_covariance(bias: np.ndarray, cov: np.ndarray, M: np.ndarray, shift: np.ndarray,
                     centred: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """``(cov, centre)`` of :mod:`.glm`'s intervals from the mixture, exactly. ``centred``:
    the basic bootstrap interval ``[params - Q(0.975), params - Q(0.025)]`` (``Q`` the
    mixture's quantiles) as a centre (``centre``, the quantiles' midpoint) and standard errors
    (half their distance over 1.96); otherwise symmetric about ``params``, half-width the 95%
    quantile of ``|error|`` (:func:`.mixture.mixture_half_width`), ``centre`` None.

    >>> cov, c = exact_covariance(np.array([[1.0]]), np.array([[[4.0]]]), np.eye(1),
    ...                           np.zeros(1), True)
    >>> round(float(c[0]), 6), round(float(np.sqrt(cov[0, 0])), 6)
    (1.0, 2.0)
    """
    B, sd, R = mixture_moments(bias, cov, M, shift)
    if centred:
        lo, hi = mixture_quantiles(B, sd, (0.025, 0.975))
        se, centre = (hi - lo) / (2.0 * Z95), (lo + hi) / 2.0
    else:
        se, centre = mixture_half_width(B, sd) / Z95, None
    return se[:, None] * R * se[None, :], centre
