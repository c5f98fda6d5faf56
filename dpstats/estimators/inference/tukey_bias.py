"""Bias-aware pieces of the Tukey intervals (public functions of released ``n_hat``, ``m``,
``p``): the share of groups with fewer rows than columns, the median's shift they can cause, and
the half-width that covers a biased estimator (used by :mod:`.tukey`)."""
from __future__ import annotations

import math

from scipy.optimize import brentq
from scipy.special import ndtr, ndtri
from scipy.stats import poisson

__all__ = ["deficient_share", "median_shift", "bias_aware_quantile"]


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


def bias_aware_quantile(r: float, level: float = 0.95) -> float:
    """The ``level`` quantile of ``|N(r, 1)|``: the half-width, in standard errors, of a
    symmetric interval that covers with probability ``level`` when the estimator's bias is at
    most ``r`` standard errors (either sign). ``r = 0`` gives 1.96 at 95%; for large ``r`` it
    approaches ``r + 1.645``.

    >>> round(bias_aware_quantile(0.0), 4), round(bias_aware_quantile(2.25), 3)
    (1.96, 3.895)
    """
    r = abs(float(r))
    if not math.isfinite(r):
        return math.inf

    def cover(c):
        return float(ndtr(c - r) - ndtr(-c - r)) - level

    return float(brentq(cover, 0.0, r + 10.0, xtol=1e-12))
