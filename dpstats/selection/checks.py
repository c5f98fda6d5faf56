"""Input checks shared by the selectors (run before anything is charged)."""

from __future__ import annotations

import numbers

import numpy as np

from .._kernels.runtime import all_finite
from ..errors import ValidationError

__all__ = ["check_xy_k"]


def check_xy_k(X, y, k) -> tuple[np.ndarray, np.ndarray, int]:
    """Return float arrays ``X`` (n, d), ``y`` (n,) and ``k`` after validating them.

    Raises :class:`~dpstats.errors.ValidationError` naming the argument and the fix.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] == 0:
        raise ValidationError(f"X must be a 2-D array with at least one candidate column; got "
                              f"shape {X.shape}")
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValidationError(f"y must be 1-D with one entry per row of X ({X.shape[0]}); got "
                              f"shape {y.shape}")
    if not (all_finite(X) and all_finite(y)):
        raise ValidationError("X and y must be finite; drop rows with missing values first")
    d = X.shape[1]
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= int(k) <= d:
        raise ValidationError(f"k must be an integer between 1 and the number of candidate "
                              f"columns ({d}); got {k!r}. Use a smaller k or no selection.")
    return X, y, int(k)
