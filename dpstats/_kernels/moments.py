"""Numba kernel for the design moments' rows: one block of clipped, scaled columns in one pass.

:func:`clip_block` writes ``U = clip((X[rows, cols] - centre) * inv, -bound, bound)`` for a
block of rows into a reusable Fortran-ordered buffer, which is what
:func:`dpstats.mechanisms.design_moments.clipped_sums` computed with a fancy-indexed copy
(``X[rows, cols]`` is Fortran-ordered) and three numpy passes (subtract, scale, clip). Each
entry is the same IEEE operations in the same order (a subtraction, a product, two comparisons;
no fused or reassociated arithmetic), so the block is the same to the bit and laid out the same
way (each column contiguous), and the caller keeps numpy's ``U.sum(axis=0)`` (a pairwise sum
down each column: a kernel's sequential sums differ in the last bits) and ``U.T @ U`` on it
(``tests/kernels/test_moments.py`` compares the sums with the numpy reference bit for bit and
catches a variant that clips one side late).

Pure and deterministic: no randomness, no privacy logic (the sums are the mechanism's input,
not a release). ``nogil``: the blocks of a design run on threads side by side.
"""

from __future__ import annotations

import threading

import numpy as np
from numba import njit

from .runtime import one_signature, watch_compiles

__all__ = ["clip_block"]

#: The one compiled signature: a C-ordered design, the block's first row and end, the columns,
#: centres, inverse scales, the bound and the output buffer transposed (a Fortran-ordered
#: buffer's transpose is C-ordered, also when it has one column and numba would call it "C").
_SIGNATURE = ("void(float64[:, ::1], int64, int64, intp[::1], float64[::1], float64[::1], "
              "float64, float64[:, ::1])")
_COMPILE_LOCK = threading.Lock()
#: Rows per tile of :func:`_clip_kernel` (a tile of a 21-column design is 10 KB).
_TILE = 64


def clip_block(X: np.ndarray, start: int, stop: int, cols: np.ndarray, centre: np.ndarray,
               inv: np.ndarray, bound: float, out: np.ndarray) -> np.ndarray:
    """Rows ``start:stop`` of ``clip((X[:, cols] - centre) * inv, -bound, bound)`` written to
    ``out[:stop - start]`` (a Fortran-ordered buffer with ``len(cols)`` columns), which is
    returned.

    >>> X = np.array([[5.0, 1.0], [-1.0, 2.0], [0.5, 3.0]])
    >>> out = np.empty((3, 1), order="F")
    >>> U = clip_block(X, 0, 3, np.array([0], dtype=np.intp), np.zeros(1), np.ones(1), 2.0, out)
    >>> U[:, 0].tolist()
    [2.0, -1.0, 0.5]
    """
    if not _clip_kernel.signatures:      # one compile, once across the threads
        with _COMPILE_LOCK:
            one_signature(_clip_kernel, _SIGNATURE)
    _clip_kernel(np.ascontiguousarray(X, dtype=np.float64), int(start), int(stop),
                 np.ascontiguousarray(cols, dtype=np.intp),
                 np.ascontiguousarray(centre, dtype=np.float64),
                 np.ascontiguousarray(inv, dtype=np.float64), float(bound), out.T)
    return out[:stop - start]


@njit(cache=True, nogil=True, boundscheck=False)
def _clip_kernel(X, start, stop, cols, centre, inv, bound, out_t):
    k = cols.shape[0]
    rows = stop - start
    for t0 in range(0, rows, _TILE):        # a tile of rows stays in cache while each of its
        t1 = min(t0 + _TILE, rows)          # columns is written contiguously
        for a in range(k):
            j, c, s = cols[a], centre[a], inv[a]
            for r in range(t0, t1):
                v = (X[start + r, j] - c) * s
                if v < -bound:
                    v = -bound
                elif v > bound:
                    v = bound
                out_t[a, r] = v


watch_compiles()
