"""Input checks shared by the selectors (run before anything is charged)."""

from __future__ import annotations

import numpy as np

from .._kernels.runtime import all_finite
from ..errors import ValidationError
from .terms import check_k_terms, check_term_of

__all__ = ["check_selector_inputs", "check_generator"]


def check_selector_inputs(X, y, k, term_of=None):
    """Return float arrays ``X`` (n, d) of candidate columns, ``y`` (n,), the number ``k``
    of terms to select and ``term_of`` (the term ``0 .. T-1`` of each column; None: one term
    per column, see :mod:`dpstats.selection.terms`), after validating them.

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
    term_of = check_term_of(term_of, X.shape[1])
    k = check_k_terms(k, int(term_of.max()) + 1)
    return X, y, k, term_of


def check_generator(rng) -> None:
    """Raise :class:`~dpstats.errors.ValidationError` unless ``rng`` is a numpy Generator."""
    if not isinstance(rng, np.random.Generator):
        raise ValidationError(f"rng must be a numpy.random.Generator (see "
                              f"dpstats.mechanisms.rng.as_rng); got {type(rng).__name__}")
