"""Kendall statistics from ranks: rank every column once, then count discordant pairs per pivot.

DPKendall scores every candidate column against the label and then against each picked column.
:func:`dpstats._kernels.kendall.kendall_scaled_tiebroken` re-sorts (value, row position) pairs
of every column for every pivot. Here each column (and the label) is replaced once by its
0-based ranks in a given row order, ties broken by position in that order
(:func:`permuted_ranks`: a stable LSD radix sort, columns in parallel), so that every later
count works on ``int32`` permutations: :func:`discordant_ranked` puts the rows in the pivot's
order (the inverse of its ranks, no sort needed) and counts the inversions of each column with
a bitset and a Fenwick tree over its 64-bit words, columns in parallel.

With ties broken by position the ranks of a column order every pair of rows exactly as the
pairs ``(value, position)`` do, so the counts equal those of
:func:`~dpstats._kernels.kendall.kendall_scaled_tiebroken` on the rows in that order, integer for
integer, and those of :func:`~dpstats._kernels.kendall.kendall_scaled` on the ranks
(:func:`~dpstats._kernels.kendall.stable_ranks`). Pure and deterministic (no randomness).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .runtime import one_signature, run_chunks, watch_compiles

watch_compiles()   # counts real compiles (runtime.compile_stats; the notice is prepare.py)

__all__ = ["permuted_ranks", "discordant_ranked", "MAX_ROWS"]

#: Ranks are int32.
MAX_ROWS = 2**31 - 1
#: Digit width of the radix sort (2048 buckets: the histogram stays in L1).
_DIGIT_BITS = 11


@njit(cache=True, boundscheck=False)
def _float_key(v):
    """An unsigned key with the order of the float ``v`` (-0.0 and 0.0 share one key)."""
    b = np.float64(v + 0.0).view(np.int64)  # + 0.0 turns -0.0 into 0.0
    if b < 0:
        return np.uint64(~b)
    return np.uint64(b) | np.uint64(0x8000000000000000)


@njit(cache=True, boundscheck=False)
def _radix_order(keys, idx, keys2, idx2, hist, off):
    """Stable LSD radix sort of ``keys``, carrying ``idx``; returns the sorted ``idx``.

    ``hist`` (passes x 2**_DIGIT_BITS) and ``off`` (2**_DIGIT_BITS) are scratch space.
    """
    n = keys.shape[0]
    nb = 1 << _DIGIT_BITS
    mask = np.uint64(nb - 1)
    npass = hist.shape[0]
    hist[:] = 0
    for i in range(n):
        k = keys[i]
        for p in range(npass):
            hist[p, (k >> np.uint64(p * _DIGIT_BITS)) & mask] += 1
    for p in range(npass):
        trivial = False
        s = 0
        for b in range(nb):
            if hist[p, b] == n:
                trivial = True
            off[b] = s
            s += hist[p, b]
        if trivial:                      # every key has the same digit: nothing moves
            continue
        sh = np.uint64(p * _DIGIT_BITS)
        for i in range(n):
            k = keys[i]
            b = (k >> sh) & mask
            o = off[b]
            off[b] = o + 1
            keys2[o] = k
            idx2[o] = idx[i]
        keys, keys2 = keys2, keys
        idx, idx2 = idx2, idx
    return idx


# Serial kernels releasing the GIL, run on threads over ranges of columns by
# :func:`.runtime.run_chunks` (a ``parallel=True`` loop cost seconds more to compile). One
# signature, X of any layout ("A"): a design column subset, a Fortran design and the
# C-contiguous response column all run this one compile (two lazily compiled layouts cost 1.2 s
# more on a cold cache); it compiles (or loads from the cache) at the first call.
_RANKS_SIGNATURE = "void(float64[:, :], int64[::1], int32[:, ::1], int64, int64)"


@njit(cache=True, nogil=True, boundscheck=False)
def _ranks_kernel(X, perm, R, lo, hi):
    n = X.shape[0]                              # scratch space once per range of columns
    npass = (64 + _DIGIT_BITS - 1) // _DIGIT_BITS
    keys = np.empty(n, dtype=np.uint64)
    keys2 = np.empty(n, dtype=np.uint64)
    idx = np.empty(n, dtype=np.int32)
    idx2 = np.empty(n, dtype=np.int32)
    hist = np.empty((npass, 1 << _DIGIT_BITS), dtype=np.int64)
    off = np.empty(1 << _DIGIT_BITS, dtype=np.int64)
    for j in range(lo, hi):
        for i in range(n):
            keys[i] = _float_key(X[perm[i], j])
            idx[i] = i
        # stable: ties keep their row order. Radix at every n: a comparison sort for small
        # columns (np.argsort's mergesort) cost about 2 s more to compile on a cold cache, to
        # save microseconds of digit histograms.
        order = _radix_order(keys, idx, keys2, idx2, hist, off)
        for r in range(n):
            R[j, order[r]] = r


def permuted_ranks(X, perm=None) -> np.ndarray:
    """Ranks of every column of ``X[perm]``, ties broken by position, as a ``(d, n)`` array.

    Equals ``stable_ranks(X[perm]).T`` (:func:`dpstats._kernels.kendall.stable_ranks`) without
    materialising ``X[perm]``: each column is gathered in the order ``perm`` and ranked by a
    stable radix sort on order-preserving integer keys. Columns run in parallel.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Finite values (any memory layout).
    perm : array_like of int, shape (n,), optional
        A permutation of ``0..n-1``: row ``i`` of the result's order is row ``perm[i]`` of
        ``X``. Default: the identity.

    Returns
    -------
    numpy.ndarray of int32, shape (d, n)
        Row ``j`` is a permutation of ``0..n-1``: the rank of ``X[perm[i], j]`` among the
        column, equal values ranked by ``i``.

    Examples
    --------
    >>> permuted_ranks([[2.0, 0.0], [1.0, 0.0], [2.0, 5.0]]).tolist()
    [[1, 0, 2], [0, 1, 2]]
    >>> permuted_ranks([[2.0], [1.0], [2.0]], [2, 1, 0]).tolist()
    [[1, 0, 2]]
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array (n rows x d columns); got shape {X.shape}")
    n = X.shape[0]
    if n > MAX_ROWS:
        raise ValueError(f"at most {MAX_ROWS} rows are supported (int32 ranks); got {n}")
    if np.isnan(X).any():
        raise ValueError("ranks need data without NaN; drop or impute them first")
    if perm is None:
        perm = np.arange(n, dtype=np.int64)
    perm = np.ascontiguousarray(perm, dtype=np.int64)
    if perm.shape != (n,):
        raise ValueError(f"perm must be a permutation of the {n} rows; got shape {perm.shape}")
    if not X.flags.writeable:   # the one signature takes writeable arrays (values unchanged)
        X = X.copy(order="K")
    if not perm.flags.writeable:
        perm = perm.copy()
    R = np.empty((X.shape[1], n), dtype=np.int32)
    one_signature(_ranks_kernel, _RANKS_SIGNATURE)
    run_chunks(_ranks_kernel, X.shape[1], X.size, X, perm, R)
    return R


@njit(cache=True, boundscheck=False, inline="always")
def _popcount(x):
    """Set bits of the uint64 ``x`` (SWAR; branch-free)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(cache=True, boundscheck=False)
def _inversions(a, words, tree):
    """#{i < j : a[i] > a[j]} for the int32 permutation ``a`` of ``0..n-1`` (left intact).

    The values seen so far are kept as a bitset (``words``: ceil(n / 64) uint64) with a Fenwick
    tree of per-word counts (``tree``: ceil(n / 64) + 1 int32): "how many earlier values are
    below v" is a Fenwick prefix over whole words plus a popcount inside v's word. The tree is
    64 times smaller than one over values, so it stays in cache and has 6 fewer levels:
    measured 1.4-2x faster than a value-indexed Fenwick tree up to 3e5 rows and 2.7x faster
    than a merge sort at 1e6 (``benchmarks/speed_synthetic.py`` times the whole selection).
    """
    n = a.shape[0]
    nw = (n + 63) >> 6
    for i in range(nw):
        words[i] = 0
    for i in range(nw + 1):
        tree[i] = 0
    one = np.uint64(1)
    inv = 0
    for i in range(n):
        v = a[i]
        w = v >> 6
        bit = one << np.uint64(v & 63)
        seen = np.int64(_popcount(words[w] & (bit - one)))   # earlier values in v's word, < v
        k = w
        while k > 0:                                         # earlier values in lower words
            seen += tree[k]
            k -= k & -k
        inv += i - seen
        words[w] |= bit
        k = w + 1
        while k <= nw:
            tree[k] += 1
            k += k & -k
    return inv


@njit(cache=True, nogil=True, boundscheck=False)
def _discordant_kernel(R, order, cols, out, lo, hi):
    n = order.shape[0]                          # scratch space once per range of columns
    a = np.empty(n, dtype=np.int32)
    words = np.empty((n + 63) >> 6, dtype=np.uint64)
    tree = np.empty(((n + 63) >> 6) + 1, dtype=np.int32)
    for t in range(lo, hi):
        c = cols[t]
        for i in range(n):
            a[i] = R[c, order[i]]
        out[t] = _inversions(a, words, tree)


def discordant_ranked(R: np.ndarray, pivot: np.ndarray, cols=None) -> np.ndarray:
    """Strictly discordant pairs of rank rows ``R[cols]`` with the rank vector ``pivot``.

    Parameters
    ----------
    R : numpy.ndarray of int32, shape (d, n)
        Ranks from :func:`permuted_ranks` (each row a permutation of ``0..n-1``).
    pivot : numpy.ndarray of int32, shape (n,)
        Ranks of the reference vector (the label's, or a row of ``R``).
    cols : array_like of int, optional
        Rows of ``R`` to score (default: all).

    Returns
    -------
    numpy.ndarray of int64, shape (len(cols),)
        ``D_c = #{i < i' : (R[c, i] - R[c, i']) * (pivot[i] - pivot[i']) < 0}``; with
        ``n / 2 - 2 D / (n - 1)`` this is the scaled Kendall correlation.

    Examples
    --------
    >>> import numpy as np
    >>> R = permuted_ranks([[0.0, 3.0], [1.0, 2.0], [2.0, 1.0]])
    >>> discordant_ranked(R, R[0]).tolist()
    [0, 3]
    """
    R = np.ascontiguousarray(R, dtype=np.int32)
    pivot = np.ascontiguousarray(pivot, dtype=np.int32)
    if R.ndim != 2 or pivot.shape != (R.shape[1],):
        raise ValueError(f"need R of shape (d, n) and pivot of shape (n,); got {R.shape} and "
                         f"{pivot.shape}")
    cols = (np.arange(R.shape[0], dtype=np.int64) if cols is None
            else np.asarray(cols, dtype=np.int64).reshape(-1))
    order = np.empty(pivot.shape[0], dtype=np.int64)
    order[pivot] = np.arange(pivot.shape[0], dtype=np.int64)
    out = np.empty(cols.shape[0], dtype=np.int64)
    run_chunks(_discordant_kernel, cols.shape[0], pivot.shape[0] * cols.shape[0], R, order,
               cols, out)
    return out

