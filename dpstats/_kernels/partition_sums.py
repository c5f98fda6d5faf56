"""Numba kernels for the per-partition statistics of a dask fit: one serial pass over the rows.

Pure and deterministic: no randomness, no privacy logic; ``nogil`` (a dask worker's threads
can run them side by side). Each adds into an accumulator the caller owns, so the partitions
of a dask frame fold into one array per worker chain (:mod:`dpstats.dask.passes`):

* :func:`add_group_sums`: per-group sufficient statistics of ``(X, y)``, one row of ``acc``
  (m, K) per group: the upper triangle of ``X'X`` (row-major, the order of
  ``np.triu_indices(p)``), ``X'y``, the column sums, the row count, ``sum y`` and ``sum y^2``
  (``K = p (p + 1) / 2 + 2 p + 3``). Each group's sums add its rows in row order, as
  ``np.bincount`` with weights does.
* :func:`add_log_histograms`: counts of every column over the fixed log-scale grid of
  :func:`dpstats.mechanisms.gdp.log_grid_index` (the same cell for every value: the index is
  computed by the same formula, ``floor(c log2 |v|)`` clipped, mirrored for negatives).

The numpy references are :func:`group_sums_reference` and the mechanisms' own functions; the
tests compare them.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .runtime import watch_compiles

__all__ = ["add_group_sums", "add_log_histograms", "group_sums_width", "group_sums_reference"]


def group_sums_width(p: int) -> int:
    """Columns of the group-sums accumulator for ``p`` design columns.

    >>> group_sums_width(3)
    15
    """
    return p * (p + 1) // 2 + 2 * p + 3


@njit(cache=True, nogil=True)
def add_group_sums(acc: np.ndarray, X: np.ndarray, y: np.ndarray, labels: np.ndarray) -> None:
    """Add every row of ``(X, y)`` to its group's row of ``acc`` (see the module docstring)."""
    n, p = X.shape
    for i in range(n):
        row = acc[labels[i]]
        yi = y[i]
        k = 0
        for a in range(p):
            xa = X[i, a]
            for b in range(a, p):
                row[k] += xa * X[i, b]
                k += 1
        for a in range(p):
            row[k + a] += X[i, a] * yi
        k += p
        for a in range(p):
            row[k + a] += X[i, a]
        k += p
        row[k] += 1.0
        row[k + 1] += yi
        row[k + 2] += yi * yi


@njit(cache=True, nogil=True)
def add_log_histograms(counts: np.ndarray, cols: np.ndarray, per_octave: int,
                       octaves: int) -> None:
    """Add the log-grid cell counts of every column of ``cols`` (n, k) to ``counts`` (k,
    cells): the cells of :func:`dpstats.mechanisms.gdp.log_grid_index` with ``octaves``
    octaves on each side of 1."""
    n, k = cols.shape
    zero = 2 * octaves * per_octave
    lo = -octaves * per_octave
    hi = octaves * per_octave - 1
    for i in range(n):
        for j in range(k):
            v = cols[i, j]
            if v > 0.0 or v < 0.0:
                c = math.floor(per_octave * math.log2(abs(v)))
                c = min(max(c, lo), hi) - lo
                counts[j, zero + 1 + c if v > 0.0 else zero - 1 - c] += 1
            else:                  # zero (and NaN, as log_grid_index puts it)
                counts[j, zero] += 1


def group_sums_reference(X: np.ndarray, y: np.ndarray, labels: np.ndarray, m: int) -> np.ndarray:
    """:func:`add_group_sums` into zeros, in numpy (``np.bincount`` with weights).

    >>> X = np.array([[1.0, 2.0], [1.0, 3.0], [1.0, 4.0]])
    >>> group_sums_reference(X, np.array([1.0, 2.0, 3.0]), np.array([0, 1, 0]), 2)[0].tolist()
    [2.0, 6.0, 20.0, 4.0, 14.0, 2.0, 6.0, 2.0, 4.0, 10.0]
    """
    p = X.shape[1]
    iu = np.triu_indices(p)
    cols = [X[:, i] * X[:, j] for i, j in zip(*iu, strict=True)] + [X[:, i] * y for i in range(p)]
    cols += [X[:, i] for i in range(p)] + [np.ones_like(y), y, y * y]
    return np.column_stack([np.bincount(labels, weights=c, minlength=m) for c in cols])


watch_compiles()   # counts real compiles (runtime.compile_stats; the notice is prepare.py)
