"""Numba kernels over the rows of a dask partition: a numeric design built in one pass, and a
subsample's rows kept below a threshold.

Pure and deterministic: no randomness, no privacy logic; ``nogil``.

* :func:`numeric_rows`: the design ``[1, x_1 .. x_k]`` and response of numeric columns, with
  exactly the row rules of :mod:`dpstats.formula.nonfinite` (a row with a NaN, an infinity or a
  value beyond ``MAX_ABS`` in magnitude in any column it uses is dropped; a nonzero value below
  ``MIN_SCALE`` in magnitude becomes 0), in one pass over the columns, writing the design
  directly (the formula path copies the columns block by block, then masks them, then scans
  the design again). :mod:`dpstats.dask.numeric` decides when it applies;
  ``tests/dask/test_numeric_design.py`` compares it with :func:`~dpstats.formula.design.
  build_design` value by value.
* :func:`rows_below`: the rows of ``(X, y, u)`` whose ``u`` is below a threshold, in one pass
  (numpy's boolean indexing of ``X`` made a mask pass and a gather per array).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .runtime import watch_compiles

__all__ = ["numeric_rows", "rows_below"]


@njit(cache=True, nogil=True)
def numeric_rows(values: np.ndarray, label: int, cols: np.ndarray, intercept: bool,
                 max_abs: float, min_scale: float, X: np.ndarray, y_out: np.ndarray) -> int:
    """Write the kept rows of the design into ``X`` (n, intercept + k) and ``y_out`` (n,);
    return how many were kept (the first rows of ``X`` and ``y_out``).

    ``values``: the frame's float64 values (n, w; any layout: a pandas block's transposed
    view is read in place); ``label``: the response's column; ``cols``: the k term columns.
    """
    n = values.shape[0]
    k = cols.shape[0]
    first = 1 if intercept else 0
    at = 0
    for i in range(n):
        v = values[i, label]
        if not abs(v) <= max_abs:               # NaN, infinite or too large: drop the row
            continue
        ok = True
        for j in range(k):
            if not abs(values[i, cols[j]]) <= max_abs:
                ok = False
                break
        if not ok:
            continue
        y_out[at] = 0.0 if (abs(v) < min_scale and v != 0.0) else v
        if first:
            X[at, 0] = 1.0
        for j in range(k):
            w = values[i, cols[j]]
            X[at, first + j] = 0.0 if (abs(w) < min_scale and w != 0.0) else w
        at += 1
    return at


@njit(cache=True, nogil=True)
def rows_below(X: np.ndarray, y: np.ndarray, u: np.ndarray, thr: float):
    """``(X[k], y[k], u[k])`` for ``k = u < thr``: new C-ordered arrays, rows in order."""
    n, p = X.shape
    m = 0
    for i in range(n):
        if u[i] < thr:
            m += 1
    Xk = np.empty((m, p))
    yk = np.empty(m)
    uk = np.empty(m)
    at = 0
    for i in range(n):
        if u[i] < thr:
            for j in range(p):
                Xk[at, j] = X[i, j]
            yk[at] = y[i]
            uk[at] = u[i]
            at += 1
    return Xk, yk, uk


watch_compiles()
