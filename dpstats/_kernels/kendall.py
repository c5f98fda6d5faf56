"""Scaled Kendall rank correlation in O(n log n) per column (numba), with a numpy reference.

The statistic is the (n/2)-scaled tau-a of 003 (section 3.1),

    tau_hat(x, y) = n/2 - 2 * D / (n - 1),

where ``D`` is the number of *strictly discordant* pairs, ``(x_i - x_j)(y_i - y_j) < 0``. On
tie-free data ``tau_hat = (n/2) * tau_a = (C - D) / (n - 1)``. Under add/remove-one-row its
sensitivity is 3/2 (003 Lemma 3.2). For ``n < 2`` there are no pairs and ``tau_hat = n/2``,
which keeps the sensitivity bound 3/2 between ``n = 0, 1, 2``.

Ties. A tied pair is neither concordant nor discordant (it simply does not count in ``D``), which
is exactly the paper's definition; the 3/2 bound still holds because its proof only uses
``0 <= D <= n(n-1)/2`` and that one row adds between 0 and n discordant pairs. But ties push
``tau_hat`` towards ``+n/2`` (a constant column scores ``n/2``, "perfect correlation"), so
**callers must break ties before calling**, with data-independent random jitter or random
ranks, never with tau-b normalisation. Inputs must be finite (NaN raises ``ValueError``).

Algorithm: rows are sorted by ``y`` once (stable argsort; runs of tied ``y`` are then sorted by
the column, so they add no inversions), and for each column the strict inversions of that column
in ``y``-order are counted by a bottom-up merge sort. Columns run in parallel (``prange``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .runtime import watch_compiles

__all__ = ["kendall_scaled", "kendall_scaled_against_column", "kendall_scaled_reference",
           "discordant_counts", "stable_ranks", "stable_ranks_reference",
           "kendall_scaled_tiebroken"]


@njit(cache=True)
def _count_inversions(a, buf):
    """Sort ``a`` (destroying it) and return #{i < j : a[i] > a[j]} (strict inversions)."""
    n = a.shape[0]
    inv = 0
    src = a
    dst = buf
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            o = lo
            while i < mid and j < hi:
                if src[j] < src[i]:  # strict: equal values are not an inversion
                    dst[o] = src[j]
                    j += 1
                    inv += mid - i
                else:
                    dst[o] = src[i]
                    i += 1
                o += 1
            while i < mid:
                dst[o] = src[i]
                i += 1
                o += 1
            while j < hi:
                dst[o] = src[j]
                j += 1
                o += 1
            lo += 2 * width
        tmp = src
        src = dst
        dst = tmp
        width *= 2
    return inv


@njit(cache=True, parallel=True)
def _discordant_kernel(X, perm, tie_lo, tie_hi):
    """Strictly discordant pair counts of every column of ``X`` against the order ``perm``.

    ``perm`` sorts the reference vector ascending; ``[tie_lo[r], tie_hi[r])`` are the runs of
    positions in that order where the reference vector is tied (length >= 2).
    """
    n, d = X.shape
    out = np.empty(d, dtype=np.int64)
    for j in prange(d):
        a = np.empty(n, dtype=np.float64)
        buf = np.empty(n, dtype=np.float64)
        for i in range(n):
            a[i] = X[perm[i], j]
        for r in range(tie_lo.shape[0]):
            lo = tie_lo[r]
            hi = tie_hi[r]
            a[lo:hi] = np.sort(a[lo:hi])
        out[j] = _count_inversions(a, buf)
    return out


def _as_inputs(X, v) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array (n rows x d columns); got shape {X.shape}")
    if v.ndim != 1 or v.shape[0] != X.shape[0]:
        raise ValueError(f"the reference vector must be 1-D with {X.shape[0]} entries (one per "
                         f"row of X); got shape {v.shape}")
    if not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X)             # one compiled layout fewer
    if np.isnan(X).any() or np.isnan(v).any():
        raise ValueError("Kendall correlation needs data without NaN; drop or impute them first")
    return X, v


def discordant_counts(X, v) -> np.ndarray:
    """Number of strictly discordant pairs of each column of ``X`` with ``v``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Columns to score (C or Fortran order).
    v : array_like, shape (n,)
        Reference vector (the label, or a selected feature).

    Returns
    -------
    numpy.ndarray of int64, shape (d,)
        ``D_j = #{i < i' : (X[i, j] - X[i', j]) * (v[i] - v[i']) < 0}``.

    Examples
    --------
    >>> discordant_counts([[1.0], [2.0], [3.0]], [3.0, 2.0, 1.0]).tolist()
    [3]
    """
    X, v = _as_inputs(X, v)
    n = v.shape[0]
    perm = np.argsort(v, kind="stable")
    vs = v[perm]
    brk = np.flatnonzero(np.diff(vs) != 0) + 1
    starts = np.concatenate(([0], brk))
    ends = np.concatenate((brk, [n]))
    tied = (ends - starts) > 1
    tie_lo = starts[tied].astype(np.int64)
    tie_hi = ends[tied].astype(np.int64)
    return _discordant_kernel(X, perm.astype(np.int64), tie_lo, tie_hi)


def _scale(D: np.ndarray, n: int) -> np.ndarray:
    if n < 2:
        return np.full(D.shape, n / 2.0)
    return n / 2.0 - 2.0 * D.astype(np.float64) / (n - 1)


def kendall_scaled(X, y) -> np.ndarray:
    """Scaled Kendall correlation ``tau_hat_j = n/2 - 2 D_j / (n - 1)`` of every column with ``y``.

    O(d n log n) time: ``y`` is sorted once, columns are processed in parallel. Sensitivity 3/2
    under add/remove one row (003 Lemma 3.2). Ties must be broken by the caller (see the module
    docstring); on tie-free data this equals ``(n/2) * scipy.stats.kendalltau(x, y)``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Feature columns (C or Fortran order), finite.
    y : array_like, shape (n,)
        Label (or any reference vector), finite.

    Returns
    -------
    numpy.ndarray, shape (d,)
        Values in ``[-n/2, n/2]``; ``n/2`` for every column when ``n < 2``.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(5.0)
    >>> kendall_scaled(np.column_stack([x, -x]), x).tolist()
    [2.5, -2.5]
    """
    X, y = _as_inputs(X, y)
    return _scale(discordant_counts(X, y), y.shape[0])


def kendall_scaled_against_column(X, col: int) -> np.ndarray:
    """Scaled Kendall correlation of every column of ``X`` with column ``col`` of ``X``.

    This is what DPKendall needs after each pick: sort once by the newly selected feature and
    count inversions of every other column. Entry ``col`` itself is ``n/2`` on tie-free data.

    Parameters
    ----------
    X : array_like, shape (n, d)
    col : int
        Index of the reference column.

    Returns
    -------
    numpy.ndarray, shape (d,)

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, -1.0]])
    >>> kendall_scaled_against_column(X, 0).tolist()
    [1.5, -1.5]
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or not (-X.shape[1] <= int(col) < X.shape[1]):
        raise ValueError(f"col must index a column of the 2-D array X; got col={col!r} for "
                         f"shape {X.shape}")
    return kendall_scaled(X, np.array(X[:, int(col)]))


def kendall_scaled_reference(X, y) -> np.ndarray:
    """Plain-numpy O(d n^2) reference for :func:`kendall_scaled` (for tests).

    Examples
    --------
    >>> kendall_scaled_reference([[1.0], [2.0], [0.0]], [1.0, 2.0, 3.0]).tolist()
    [-0.5]
    """
    X, y = _as_inputs(X, y)
    n, d = X.shape
    iu = np.triu_indices(n, k=1)
    dy = np.sign(y[:, None] - y[None, :])[iu]
    D = np.empty(d, dtype=np.int64)
    for j in range(d):
        dx = np.sign(X[:, j][:, None] - X[:, j][None, :])[iu]
        D[j] = int(np.count_nonzero(dx * dy < 0))
    return _scale(D, n)


@njit(cache=True, parallel=True)
def _ranks_kernel(X):
    n, d = X.shape
    R = np.empty((n, d), dtype=np.float64)
    for j in prange(d):
        col = np.empty(n, dtype=np.float64)
        for i in range(n):
            col[i] = X[i, j]
        order = np.argsort(col, kind="mergesort")
        for r in range(n):
            R[order[r], j] = r
    return R


def stable_ranks(X) -> np.ndarray:
    """0-based ranks of every column, ties broken by row position (stable sort).

    Deterministic: callers that need *random* tie-breaking permute the rows with
    data-independent randomness first (Kendall tau is invariant to a common row permutation).
    Columns run in parallel.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Finite values.

    Returns
    -------
    numpy.ndarray of float64, shape (n, d)
        Each column is a permutation of ``0..n-1``.

    Examples
    --------
    >>> stable_ranks([[2.0], [1.0], [2.0]]).ravel().tolist()
    [1.0, 0.0, 2.0]
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array; got shape {X.shape}")
    if np.isnan(X).any():
        raise ValueError("ranks need data without NaN; drop or impute them first")
    return _ranks_kernel(np.ascontiguousarray(X))


def stable_ranks_reference(X) -> np.ndarray:
    """Numpy reference for :func:`stable_ranks` (for tests).

    >>> stable_ranks_reference([[2.0], [1.0], [2.0]]).ravel().tolist()
    [1.0, 0.0, 2.0]
    """
    X = np.asarray(X, dtype=np.float64)
    R = np.empty_like(X)
    for j in range(X.shape[1]):
        R[np.argsort(X[:, j], kind="stable"), j] = np.arange(X.shape[0])
    return R


@njit(cache=True)
def _count_inversions_keyed(a, p, buf_a, buf_p):
    """Sort pairs ``(a, p)`` lexicographically (destroying them); return the strict inversions.

    With distinct ``p`` every pair of positions is ordered, so there are no ties.
    """
    n = a.shape[0]
    inv = 0
    sa, sp, da, dp = a, p, buf_a, buf_p
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, o = lo, mid, lo
            while i < mid and j < hi:
                if sa[j] < sa[i] or (sa[j] == sa[i] and sp[j] < sp[i]):
                    da[o] = sa[j]
                    dp[o] = sp[j]
                    j += 1
                    inv += mid - i
                else:
                    da[o] = sa[i]
                    dp[o] = sp[i]
                    i += 1
                o += 1
            while i < mid:
                da[o] = sa[i]
                dp[o] = sp[i]
                i += 1
                o += 1
            while j < hi:
                da[o] = sa[j]
                dp[o] = sp[j]
                j += 1
                o += 1
            lo += 2 * width
        sa, da = da, sa
        sp, dp = dp, sp
        width *= 2
    return inv


@njit(cache=True, parallel=True)
def _discordant_tiebreak_kernel(X, order):
    n, d = X.shape
    out = np.empty(d, dtype=np.int64)
    for j in prange(d):
        a = np.empty(n, dtype=np.float64)
        p = np.empty(n, dtype=np.int64)
        for i in range(n):
            r = order[i]
            a[i] = X[r, j]
            p[i] = r
        out[j] = _count_inversions_keyed(a, p, np.empty(n, dtype=np.float64),
                                         np.empty(n, dtype=np.int64))
    return out


def kendall_scaled_tiebroken(X, v) -> np.ndarray:
    """:func:`kendall_scaled` with every tie broken by row position, in O(n log n) per column.

    Equal to ``kendall_scaled(stable_ranks(X), stable_ranks(v[:, None])[:, 0])`` without
    computing ranks: values are compared as pairs ``(value, row index)``. Callers that need
    *random* tie-breaking permute the rows with data-independent randomness first. Pass ``X``
    in Fortran order for speed (each column is gathered in the order of ``v``).

    Examples
    --------
    >>> import numpy as np
    >>> kendall_scaled_tiebroken(np.array([[0.0], [0.0], [1.0]]), np.array([1.0, 2.0, 3.0]))
    array([1.5])
    """
    X, v = _as_inputs(X, v)
    order = np.argsort(v, kind="stable").astype(np.int64)
    return _scale(_discordant_tiebreak_kernel(X, order), v.shape[0])


watch_compiles()   # counts real compiles (runtime.compile_stats; the notice is prepare.py)
