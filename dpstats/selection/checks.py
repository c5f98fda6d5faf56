"""Input checks shared by the selectors (run before anything is charged)."""

from __future__ import annotations

import numbers

import numpy as np

from .._kernels.runtime import all_finite
from ..errors import ValidationError

__all__ = ["check_selector_inputs", "check_generator"]


def check_selector_inputs(X, y, k) -> tuple[np.ndarray, np.ndarray, int]:
    """Return float arrays ``X`` (n, d) of candidate columns, ``y`` (n,) and the number ``k``
    of columns to select, after validating them.

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


def check_generator(rng) -> None:
    """Raise :class:`~dpstats.errors.ValidationError` unless ``rng`` is a numpy Generator."""
    if not isinstance(rng, np.random.Generator):
        raise ValidationError(f"rng must be a numpy.random.Generator (see "
                              f"dpstats.mechanisms.rng.as_rng); got {type(rng).__name__}")
