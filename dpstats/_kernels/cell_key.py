"""The private centre's grid cell of one float64 value, from its bits (numba).

Shared by the in-memory cell counts (:mod:`dpstats._kernels.centre_cells`) and a dask
partition's key counts (:func:`dpstats._kernels.partition_sums.add_cell_keys`): both must give
the same slot for every value, so the rule lives here once.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["cell_slot"]


@njit(cache=True, nogil=True)
def cell_slot(b, min_bits, max_bits, low_bits, half_keys):
    """The counts' slot of the value whose float64 bits (as int64) are ``b``: signed cell keys
    (:data:`dpstats.mechanisms.centre.CELL_KEYS`), zero and -0.0 together.

    >>> import numpy as np
    >>> minus_zero = np.array([-0.0]).view(np.int64)[0]
    >>> int(cell_slot(np.int64(0), 1, 2, 1, 3)) == int(cell_slot(minus_zero, 1, 2, 1, 3))
    True
    """
    mag = b & np.int64(0x7FFFFFFFFFFFFFFF)
    if mag == 0:                        # zero and -0.0
        key = -1
    elif mag < min_bits:
        key = 0
    elif mag >= max_bits:
        key = half_keys + 2
    else:
        off = mag - min_bits
        key = 2 * (off >> low_bits) + (1 if off & ((np.int64(1) << low_bits) - 1) else 0) + 2
    return half_keys + 2 - key if (b < 0 and mag != 0) else half_keys + 4 + key
