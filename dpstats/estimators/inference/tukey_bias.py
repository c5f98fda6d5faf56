"""Critical values of the Tukey intervals (public functions of released ``n_hat``, ``m``,
``p``, the window shares ``q`` and eps): the share of groups with fewer rows than columns, the
median's shift they can cause, the variance of a window-count spread's log, and the half-width
that covers an estimator with a bounded bias and a noisy standard error (used by :mod:`.tukey`
and :mod:`.tukey_glm`)."""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr, ndtri
from scipy.stats import poisson

__all__ = ["deficient_share", "median_shift", "bias_aware_quantile", "noise_aware_quantile",
           "critical_value", "log_sigma_variance", "glm_median_bias", "glm_bias_slope",
           "BIAS_SLOPE", "BIAS_COLUMNS", "BIAS_TARGET"]

#: The logistic Tukey's median-bias-reduced group fits keep a residual median bias of about
#: ``BIAS_SLOPE (p / BIAS_COLUMNS)^(1/3) / k`` of their spread (``p`` columns, ``k`` rows per
#: column), which the coordinate-wise median of m fits carries in ``sqrt(m)`` times that of
#: its own standard deviations (:func:`glm_median_bias`). Simulated without privacy
#: (``benchmarks/glm_tukey_median_bias.py``, k = 10.6, Gaussian columns, design notes 64 and
#: 67): the slopes' mean 0.077, 0.101, 0.121 at 3, 6, 11 columns (se 0.02-0.03; about
#: ``p^(1/3)``), the largest coefficient's 0.09-0.19; coefficients twice as large 0.111;
#: skewed and 0/1 columns below (0.02, 0.04).
BIAS_SLOPE = 0.1
#: The number of columns (intercept included) :data:`BIAS_SLOPE` is for.
BIAS_COLUMNS = 6
#: The residual shift, in the median's standard deviations, the choice of m accepts
#: (:func:`dpstats.estimators.tukey.glm.choose_m_glm`; the worst coefficient then covers about
#: 0.94); a larger one (m forced up by the release gate, or chosen by the user) is covered by a
#: bias-aware critical value (:mod:`.tukey_glm`).
BIAS_TARGET = 0.4

_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(40)


def deficient_share(n_hat: float, m: int, p: int) -> float:
    """Expected share of groups with fewer rows than columns: ``P(Poisson(n/m) < p)`` (group
    sizes under independent uniform labels; a public function of released ``n_hat``, ``m``,
    ``p``).

    >>> round(deficient_share(100_000, 16_666, 2), 4), deficient_share(100_000, 5555, 6) < 1e-3
    (0.0173, True)
    """
    return float(poisson.cdf(p - 1, max(float(n_hat), 0.0) / m))


def median_shift(share: float) -> float:
    """Largest shift of the median, in units of the other models' scale, when ``share`` of the
    models sit on one side (the minimum-norm fits of groups with fewer rows than columns shrink
    towards 0): the median moves to their ``(0.5 - share) / (1 - share)`` quantile.

    >>> round(median_shift(0.0174), 4)
    0.0222
    """
    s = min(max(float(share), 0.0), 0.49)
    return max(0.0, float(-ndtri((0.5 - s) / (1.0 - s))))


def critical_value(r: float = 0.0, v: float = 0.0, level: float = 0.95) -> float:
    """``c`` with ``E[P(|N(r, 1)| <= c e^L)] = level`` for ``L ~ N(0, v)``: the half-width, in
    standard errors, of a symmetric interval that covers with probability ``level`` when the
    estimator's bias is at most ``r`` standard errors (either sign; Armstrong and Kolesar 2020)
    and the standard error is released with noise, ``log(se) = log(true se) - L`` with
    ``Var(L) = v`` (:func:`log_sigma_variance`; 40-point Gauss-Hermite over ``L``). ``r = v =
    0`` gives 1.96 at 95%; inf where no finite ``c`` covers.

    >>> round(critical_value(), 4), round(critical_value(2.25), 3)
    (1.96, 3.895)
    >>> round(critical_value(0, 0.04), 2), round(critical_value(0.5, 0.04), 2)
    (2.07, 2.31)
    """
    r, v = abs(float(r)), max(float(v), 0.0)
    if not (math.isfinite(r) and math.isfinite(v)):
        return math.inf
    scale = np.exp(math.sqrt(v) * _NODES)
    wts = _WEIGHTS / _WEIGHTS.sum()

    def cover(c):
        x = c * scale
        return float(wts @ (ndtr(x - r) - ndtr(-x - r))) - level

    hi = r + 100.0
    return float(brentq(cover, 0.0, hi, xtol=1e-12)) if cover(hi) > 0 else math.inf


def bias_aware_quantile(r: float, level: float = 0.95) -> float:
    """The ``level`` quantile of ``|N(r, 1)|`` (:func:`critical_value` with an exact standard
    error): the half-width, in standard errors, of a symmetric interval that covers with
    probability ``level`` when the estimator's bias is at most ``r`` standard errors. ``r = 0``
    gives 1.96 at 95%; for large ``r`` it approaches ``r + 1.645``.

    >>> round(bias_aware_quantile(0.0), 4), round(bias_aware_quantile(2.25), 3)
    (1.96, 3.895)
    """
    return critical_value(r, 0.0, level)


def noise_aware_quantile(v: float, level: float = 0.95) -> float:
    """``c`` with ``E[2 Phi(c e^L) - 1] = level`` for ``L ~ N(0, v)`` (:func:`critical_value`
    without bias): the critical value of a standard error whose log has variance ``v``.

    >>> round(noise_aware_quantile(0.0), 4), round(noise_aware_quantile(0.04), 2)
    (1.96, 2.07)
    """
    return critical_value(0.0, v, level)


def glm_median_bias(n_hat: float, m: int, p: int) -> float:
    """Public bound of the logistic Tukey median's residual bias, in its own standard
    deviations: ``glm_bias_slope(p) sqrt(m) / k`` for groups of ``k = n_hat / (m p)`` rows
    per column (released ``n_hat``, public ``m``, ``p``).

    >>> round(glm_median_bias(200_000, 3158, 6), 3), round(glm_median_bias(200_000, 2609, 6), 3)
    (0.532, 0.4)
    """
    k = max(float(n_hat), 1.0) / (m * p)
    return glm_bias_slope(p) * math.sqrt(m) / k


def glm_bias_slope(p: int) -> float:
    """``BIAS_SLOPE (p / BIAS_COLUMNS)^(1/3)``: the residual's slope at ``p`` columns.

    >>> round(glm_bias_slope(3), 3), glm_bias_slope(6), round(glm_bias_slope(11), 3)
    (0.079, 0.1, 0.122)
    """
    return BIAS_SLOPE * (p / BIAS_COLUMNS) ** (1.0 / 3.0)


def log_sigma_variance(q, m: int, p: int, eps_counts: float) -> np.ndarray:
    """``Var(log sigma_j)`` of the window-count spread ``sigma_j = w_j / Phi^-1((1 + q_j) / 2)``
    (delta method at ``z = Phi^-1((1 + q) / 2)``: the counts' Laplace noise, L1 sensitivity
    ``p`` at ``eps_counts``, and their binomial spread, over ``(2 z phi(z))^2``; public:
    released ``q``, ``m``, ``p``, eps).

    >>> v = log_sigma_variance([0.5], 5527, 21, 0.04)
    >>> bool(0.09 < float(v[0]) < 0.11)
    True
    """
    q = np.clip(np.asarray(q, dtype=float), 1e-6, 0.999)
    z = ndtri((1.0 + q) / 2.0)
    dens = 2.0 * z * np.exp(-z * z / 2.0) / math.sqrt(2.0 * math.pi)
    var_q = 2.0 * (p / eps_counts) ** 2 / m ** 2 + q * (1.0 - q) / m
    return var_q / dens ** 2
