"""Values dpstats cannot compute with make a row missing: dropped silently, never reported.

A refusal (or a warning) that depends on whether one row holds such a value would tell whether
that row is in the data, so every rule here acts on each row alone (neighbouring data sets stay
neighbours) and nothing about how many rows it touched is kept:

* an **infinite input** in the data itself (``inf`` or ``-inf`` in a float column) makes its row
  missing, exactly like ``NaN``: the row is dropped before the formula is evaluated
  (:func:`infinite_inputs`);
* a value a **transform makes non-finite** (``np.log(0)``, ``np.sqrt(-1)``, ``I(1 / x)`` at 0,
  ``I(x ** 1000)``) makes its row missing (:func:`usable_rows`; formulaic already drops the
  NaN ones);
* a design or response value **beyond** :data:`MAX_ABS` (1e150) in magnitude makes its row
  missing: squares of such values, and sums of them over rows, overflow float64, and the
  private bounds' grids end far below it;
* a design or response value **below** :data:`MIN_SCALE` (1e-150) in magnitude, but not 0, is
  set to 0 (its square underflows to zero anyway, so no method could use it); a column whose
  values are all that small becomes a column of zeros, which every method handles (its
  coefficient is 0, or withheld with the rest of the fit).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["MAX_ABS", "MIN_SCALE", "infinite_inputs", "usable_rows"]

#: A design or response value beyond this in magnitude makes its row missing.
MAX_ABS = 1e150
#: A design or response value below this in magnitude (and not 0) is set to 0.
MIN_SCALE = 1e-150
_BLOCK = 1 << 16   # rows per block, so no full-size temporary is made


def infinite_inputs(frame: pd.DataFrame) -> np.ndarray:
    """Rows of ``frame`` (complete rows, ready for formulaic) with an infinite float input.

    >>> infinite_inputs(pd.DataFrame({"a": [1.0, np.inf], "g": ["p", "q"]})).tolist()
    [False, True]
    """
    out = np.zeros(frame.shape[0], dtype=bool)
    for col in frame.columns:
        if pd.api.types.is_float_dtype(frame[col].dtype):
            out |= np.isinf(frame[col].to_numpy(dtype=np.float64))
    return out


def usable_rows(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` without the rows that hold a non-finite value or one beyond :data:`MAX_ABS`,
    and with values below :data:`MIN_SCALE` in magnitude set to 0.

    Parameters
    ----------
    X, y : numpy.ndarray
        The design (n x p, float64) and response (n,). Entries below :data:`MIN_SCALE` are set
        to 0 in place (both are the design's own arrays).

    Returns
    -------
    (X, y)
        C-contiguous; the same arrays when no row is dropped. How many rows were dropped or
        values set to 0 is not returned.

    Examples
    --------
    >>> X = np.array([[1.0, np.inf], [1.0, 2e-200], [1.0, -3e200], [1.0, 4.0]])
    >>> Xk, yk = usable_rows(X, np.array([1.0, 2.0, 3.0, 1e-300]))
    >>> Xk.tolist(), yk.tolist()
    ([[1.0, 0.0], [1.0, 4.0]], [2.0, 0.0])
    """
    n = X.shape[0]
    keep = np.empty(n, dtype=bool)
    for lo in range(0, n, _BLOCK):
        keep[lo:lo + _BLOCK] = _usable_block(X[lo:lo + _BLOCK], y[lo:lo + _BLOCK])
    if keep.all():
        return X, y
    return np.ascontiguousarray(X[keep]), np.ascontiguousarray(y[keep])


def _usable_block(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Rows of a block to keep; sets its tiny values to 0 in place."""
    ax, ay = np.abs(X), np.abs(y)
    keep = (ax <= MAX_ABS).all(axis=1) & (ay <= MAX_ABS)     # False for NaN and inf too
    tiny = (ax < MIN_SCALE) & (ax > 0)
    if tiny.any():
        X[tiny] = 0.0
    tiny_y = (ay < MIN_SCALE) & (ay > 0)
    if tiny_y.any():
        y[tiny_y] = 0.0
    return keep
