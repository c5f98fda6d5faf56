"""Rows a transform makes non-finite are missing rows: dropped silently, never reported.

``np.log(x)`` at ``x = 0``, ``I(1 / x)`` at ``x = 0`` or ``I(x ** 1000)`` give infinities, and
``np.log(-1)`` or ``np.sqrt(-1)`` give NaN. Refusing the data (or warning) when that happens
would tell whether one row has such a value, so those rows are dropped like rows with a
missing input (formulaic already drops the NaN ones; this module drops the infinite ones).
An infinity that is in the data itself (a raw input of ``inf``) is still refused by
:func:`dpstats.formula.checks._check_values`, as before: only values a transform produced are
dropped here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["infinite_inputs", "drop_nonfinite"]


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


def drop_nonfinite(X: np.ndarray, y: np.ndarray, raw_infinite: np.ndarray,
                   dropped: set[int]) -> tuple[np.ndarray, np.ndarray]:
    """Drop the rows of ``(X, y)`` whose values a transform made non-finite.

    Parameters
    ----------
    X, y : numpy.ndarray
        The design (n x p) and response (n,) that formulaic built, after it dropped the rows
        ``dropped`` (NaN produced by a transform) from the frame's rows.
    raw_infinite : numpy.ndarray
        :func:`infinite_inputs` of the frame (one entry per frame row). Rows with an infinite
        input are kept, so that the data check refuses them as before.
    dropped : set of int
        Frame rows formulaic dropped; the other rows are those of ``X``, in order.

    Returns
    -------
    (X, y)
        Without the rows that have a non-finite value but no infinite input; the same arrays
        when there are none. How many rows were dropped is not returned.

    Examples
    --------
    >>> X = np.array([[1.0, np.inf], [1.0, 2.0], [1.0, -np.inf]])
    >>> Xk, yk = drop_nonfinite(X, np.array([1.0, 2.0, 3.0]), np.array([0, 0, 1, 1], bool), {0})
    >>> Xk.tolist(), yk.tolist()
    ([[1.0, 2.0], [1.0, -inf]], [2.0, 3.0])
    """
    raw = np.delete(raw_infinite, sorted(dropped)) if dropped else raw_infinite
    if raw.shape[0] != X.shape[0]:      # rows not matched: keep every row if any input is
        raw = np.full(X.shape[0], bool(raw_infinite.any()))   # infinite (refused later)
    bad = ~(np.isfinite(X).all(axis=1) & np.isfinite(y)) & ~raw
    if not bad.any():
        return X, y
    keep = ~bad
    return np.ascontiguousarray(X[keep]), np.ascontiguousarray(y[keep])
