"""Finite-value checks of large arrays without an array-sized boolean temporary."""

from __future__ import annotations

import numpy as np

__all__ = ["all_finite"]


def all_finite(a) -> bool:
    """Whether every entry of ``a`` is finite.

    A sum of finite numbers is finite unless it overflows, and a NaN or infinity anywhere makes
    it non-finite; so one reduction settles the common case and the elementwise check runs
    only when the sum is not finite.

    >>> all_finite(np.array([[1.0, 2.0], [3.0, 4.0]])), all_finite([1.0, np.nan])
    (True, False)
    >>> all_finite([1e308, 1e308])        # the sum overflows; the values are finite
    True
    """
    a = np.asarray(a)
    with np.errstate(over="ignore", invalid="ignore"):
        if a.size == 0 or np.isfinite(a.sum()):
            return True
    return bool(np.isfinite(a).all())

