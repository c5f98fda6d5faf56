"""Numba kernels for the per-partition statistics of a dask fit: one serial pass over the rows.

Pure and deterministic: no randomness, no privacy logic; ``nogil`` (a dask worker's threads
can run them side by side). Each adds into an accumulator the caller owns, so the partitions
of a dask frame fold into one array per worker chain (:mod:`dpstats.dask.passes`):

* :func:`add_group_sums`: per-group sufficient statistics of ``(X, y)``, one row of ``acc``
  (m, K) per group: the upper triangle of ``X'X`` (row-major, the order of
  ``np.triu_indices(p)``), ``X'y``, the column sums, the row count, ``sum y`` and ``sum y^2``
  (``K = p (p + 1) / 2 + 2 p + 3``), by one small matrix product per group (equal to the
  row-by-row sums up to rounding).
* :func:`add_cell_keys`: the private centre's cell-key counts of a column (the stand-ins of
  :func:`dpstats.mechanisms.centre.centre_cells`, from each value's bits).
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

from .cell_key import cell_slot
from .runtime import watch_compiles

__all__ = ["add_group_sums", "add_log_histograms", "add_cell_keys", "group_sums_width",
           "group_sums_reference", "CHUNK_ROWS"]


def group_sums_width(p: int) -> int:
    """Columns of the group-sums accumulator for ``p`` design columns.

    >>> group_sums_width(3)
    15
    """
    return p * (p + 1) // 2 + 2 * p + 3


#: Rows of a group multiplied at once (bounds the kernel's scratch memory).
CHUNK_ROWS = 4096


@njit(cache=True, nogil=True)
def add_group_sums(acc: np.ndarray, X: np.ndarray, y: np.ndarray, labels: np.ndarray) -> None:
    """Add every row of ``(X, y)`` to its group's row of ``acc`` (see the module docstring).

    The rows are visited group by group (a stable counting sort of the labels); a group's rows
    ``Z = [X, y, 1]`` (in chunks of :data:`CHUNK_ROWS`) give every sum at once as ``Z'Z`` (one
    small matrix product), added to the group's row of ``acc``: ``acc`` is read and written in
    order, not at a random row per data row (whose cache misses dominated), and the products run
    in BLAS (1e6 rows x 10 columns into 33,333 groups: 0.07 s of CPU against 0.26 s row by row).
    """
    n, p = X.shape
    m = acc.shape[0]
    starts = np.zeros(m + 1, dtype=np.int64)
    for i in range(n):
        starts[labels[i] + 1] += 1
    for g in range(m):
        starts[g + 1] += starts[g]
    fill = starts[:m].copy()
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        g = labels[i]
        order[fill[g]] = i
        fill[g] += 1
    Z = np.empty((CHUNK_ROWS, p + 2))
    for g in range(m):
        for lo in range(starts[g], starts[g + 1], CHUNK_ROWS):
            q = min(CHUNK_ROWS, starts[g + 1] - lo)
            for r in range(q):
                i = order[lo + r]
                for a in range(p):
                    Z[r, a] = X[i, a]
                Z[r, p] = y[i]
                Z[r, p + 1] = 1.0
            Zg = Z[:q]
            _add_products(acc[g], Zg.T @ Zg, p)


@njit(cache=True, nogil=True)
def _add_products(row: np.ndarray, G: np.ndarray, p: int) -> None:
    """Add ``G = Z'Z`` of ``Z = [X, y, 1]`` to an accumulator row, in its order."""
    k = 0
    for a in range(p):
        for b in range(a, p):
            row[k] += G[a, b]
            k += 1
    for a in range(p):
        row[k + a] += G[a, p]
    k += p
    for a in range(p):
        row[k + a] += G[a, p + 1]
    k += p
    row[k] += G[p + 1, p + 1]
    row[k + 1] += G[p, p + 1]
    row[k + 2] += G[p, p]


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
                e = np.floor(per_octave * math.log2(abs(v)))        # a float: inf stays
                c = hi if e >= hi else (lo if e <= lo else int(e))
                c -= lo
                counts[j, zero + 1 + c if v > 0.0 else zero - 1 - c] += 1
            else:                  # zero (and NaN, as log_grid_index puts it)
                counts[j, zero] += 1


@njit(cache=True, nogil=True)
def add_cell_keys(counts: np.ndarray, bits: np.ndarray, min_bits: int, max_bits: int,
                  low_bits: int, half_keys: int) -> None:
    """Add the signed cell key counts of one column (``bits``: its float64 values viewed as
    int64) to ``counts``: the keys of the private centre's stand-ins
    (:data:`dpstats.mechanisms.centre.CELL_KEYS`, :func:`~dpstats.mechanisms.centre.
    cells_from_counts` turns them into values), computed from each value's bits."""
    for i in range(bits.shape[0]):
        counts[cell_slot(bits[i], min_bits, max_bits, low_bits, half_keys)] += 1


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
