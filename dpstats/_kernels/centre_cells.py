"""Numba kernel for the private centre's counting: a column's grid-cell stand-ins in one pass.

:func:`column_cells` returns exactly what :func:`dpstats.mechanisms.centre.centre_cells` returns
for a column (its distinct stand-ins on the default centre grid, ascending, and their counts),
computed from each value's bits in one pass over the column instead of about fifteen numpy
passes and a ``bincount`` (the counts are scanned only between the lowest and highest slot
touched, so a short column costs no scan of the 4 MB buffer): the key of a value is the one of
:func:`dpstats.mechanisms.centre._cell_representatives` (:data:`~dpstats.mechanisms.centre.
CELL_KEYS`), and the stand-in of a key is the one of
:func:`~dpstats.mechanisms.centre.cells_from_counts`. It reads a column of a C-ordered design
in place (a strided view, no copy) and is ``nogil``, so the columns of a design are counted on
threads side by side (:func:`dpstats.estimators.tukey.centre.private_centre`).

Pure and deterministic: no randomness, no privacy logic (the counts are not a release: they are
the mechanism's input, :func:`dpstats.mechanisms.centre.private_centre_value` with
``counts=``). ``tests/kernels/test_centre_cells.py`` compares it with ``centre_cells`` value by
value, including zeros, signed zeros, grid points, values off the grid and tiny values.
"""

from __future__ import annotations

import threading

import numpy as np
from numba import njit

from .cell_key import cell_slot
from .runtime import one_signature, watch_compiles

__all__ = ["column_cells", "cell_count_buffer"]

#: The one compiled signature: a column of any stride, the contiguous buffer, the four keys.
_SIGNATURE = "UniTuple(int64[::1], 2)(int64[:], int64[::1], int64, int64, int64, int64)"
_COMPILE_LOCK = threading.Lock()


def cell_count_buffer(half_keys: int) -> np.ndarray:
    """A zeroed buffer of signed key counts for :func:`column_cells` (``2 * half_keys + 7``
    entries); :func:`column_cells` leaves it zeroed again, so a thread can reuse it."""
    return np.zeros(2 * half_keys + 7, dtype=np.int64)


def column_cells(col: np.ndarray, counts: np.ndarray, keys: tuple) -> tuple[np.ndarray,
                                                                           np.ndarray]:
    """Distinct stand-ins of the float64 column ``col`` (any stride: a column of a C-ordered
    design is read in place) and their counts, ascending: exactly those of
    :func:`dpstats.mechanisms.centre.centre_cells`.

    ``counts``: a zeroed buffer from :func:`cell_count_buffer` (zeroed again on return).
    ``keys``: :data:`dpstats.mechanisms.centre.CELL_KEYS`.

    >>> from dpstats.mechanisms.centre import CELL_KEYS
    >>> col = np.array([[2.0, 0.0], [1.0, -0.0], [2.0, -3.0]])[:, 0]
    >>> u, c = column_cells(col, cell_count_buffer(CELL_KEYS[3]), CELL_KEYS)
    >>> u.tolist(), c.tolist()
    ([1.0, 2.0], [1, 2])
    """
    bits = np.asarray(col, dtype=np.float64).view(np.int64)
    if not _cells_kernel.signatures:     # one compile for every stride, once across threads
        with _COMPILE_LOCK:
            one_signature(_cells_kernel, _SIGNATURE)
    vbits, cnt = _cells_kernel(bits, counts, *(int(k) for k in keys))
    return vbits.view(np.float64), cnt


@njit(cache=True, nogil=True, boundscheck=False)
def _cells_kernel(bits: np.ndarray, counts: np.ndarray, min_bits: int, max_bits: int,
                  low_bits: int, half_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """The bits of the stand-ins and their counts (see :func:`column_cells`)."""
    distinct = 0
    lo, hi = counts.shape[0], 0            # the slots touched: only they are scanned below
    for i in range(bits.shape[0]):
        slot = cell_slot(bits[i], min_bits, max_bits, low_bits, half_keys)
        if counts[slot] == 0:
            distinct += 1
            lo = min(lo, slot)
            hi = max(hi, slot + 1)
        counts[slot] += 1
    vbits = np.empty(distinct, dtype=np.int64)
    out = np.empty(distinct, dtype=np.int64)
    tiny = np.int64(1023 - 65) << 52         # 2^-65
    huge = np.int64(1023 + 65) << 52         # 2^65
    sign = np.int64(1) << 63
    k_out = 0
    for slot in range(lo, hi):
        c = counts[slot]
        if c == 0:
            continue
        counts[slot] = 0
        pos = slot - (half_keys + 4)
        neg = pos < -1
        k = -pos - 2 if neg else pos
        if k == -1:
            mb = np.int64(0)
        elif k == 0:
            mb = tiny
        elif k == half_keys + 2:
            mb = huge
        else:
            kb = k - 2
            mb = min_bits + ((kb >> 1) << low_bits) + ((kb & 1) << (low_bits - 1))
        vbits[k_out] = (mb | sign) if neg else mb
        out[k_out] = c
        k_out += 1
    return vbits, out


watch_compiles()
