"""Private centring of the regression columns for the Tukey mechanism.

Approximate Tukey depth looks at each coordinate separately, so the region of depth >= i is a
box and the released point is drawn uniformly from a box shell. When a column is far from zero
(longitude near -120, pH near 3), every group's intercept is tightly tied to that column's
slope (intercept ~ ybar - slope * xbar), the box ignores the tie, and a point drawn from it has
an intercept that does not match its slopes: predictions are off by orders of magnitude.

Re-parametrising every group's model by its prediction at a centre ``c`` near the data
(intercept + c . slopes, the intercept it would have had on ``x - c``) removes the tie: the
intercept coordinate becomes roughly the mean label. The released ``(a, slopes)`` maps back to
the original parametrisation by ``intercept = a - c . slopes`` (post-processing). ``c`` must be
public or private: here each column's centre is released by
:func:`dpstats.mechanisms.private_centre_value` (eps-DP under add/remove one row: exponential
mechanism with the 1-D Tukey depth, sensitivity 1 and monotone, on a public grid of relative
spacing 1/1024). Only a coarse centre is needed (within about one standard deviation of the
data removes the tie), but it must not fail on ties: a median utility that counts ties on one
side only scores every candidate about -n/2 on a column that is mostly one value and then
returns a nearly arbitrary grid point (1e20 measured on elevators); a 1/8-octave grid is off by
one to several standard deviations on columns with |mean| >> sd (longitude, a year).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ...mechanisms import private_centre_value
from ...mechanisms.accountant import Ledger
from ...mechanisms.centre import centre_cells

__all__ = ["private_centre", "CENTRE_SHARE"]

#: Share of the Tukey stage's eps spent on the private medians (all columns together).
CENTRE_SHARE = 0.05
#: From this many rows on, the columns' grid cells are counted on threads first (numpy releases
#: the GIL; the counts are what the mechanism computes itself, so the release is unchanged).
THREADED_ROWS = 1 << 18


def kernel_cells(X: np.ndarray, cols) -> dict:
    """``{j: centre_cells(X[:, j])}`` for ``j`` in ``cols`` by the one-pass numba kernel
    (:func:`dpstats._kernels.centre_cells.column_cells`: the same values and counts, about four
    times less CPU), the columns on threads side by side (the kernel releases the GIL); the
    columns of a C-ordered ``X`` are read in place.

    >>> X = np.array([[1.0, 2.0], [1.0, -0.5], [1.0, 2.0]])
    >>> u, c = kernel_cells(X, [1])[1]
    >>> u.tolist(), c.tolist()
    ([-0.5, 2.0], [1, 2])
    """
    import threading

    from ..._kernels.centre_cells import cell_count_buffer, column_cells
    from ...mechanisms.centre import CELL_KEYS
    local = threading.local()

    def count(j):
        if not hasattr(local, "buf"):          # one zeroed buffer per thread, left zeroed
            local.buf = cell_count_buffer(CELL_KEYS[3])
        return column_cells(X[:, j], local.buf, CELL_KEYS)
    cols = list(cols)
    workers = min(len(cols), os.cpu_count() or 1)
    if workers <= 1:
        return {j: count(j) for j in cols}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(zip(cols, pool.map(count, cols), strict=True))


def private_centre(X: np.ndarray, intercept_col: int, eps: float, rng: np.random.Generator,
                   ledger: Ledger | None = None, *, names=None,
                   stage: str = "regression", cells=None, kernel: bool = False) -> np.ndarray:
    """Private centres (1-D Tukey medians) of every non-intercept column (0 for the intercept).

    ``eps`` is split evenly over the columns (basic composition); each centre is eps_j-DP under
    add/remove one row. ``cells(j) -> (values, counts)``: column ``j``'s distinct values and
    counts computed elsewhere (a dask frame's partitions, merged). ``kernel``: count them by the
    numba kernel (:func:`kernel_cells`; the caller decides from public sizes and has compiled
    it: the same release, faster).

    >>> import numpy as np
    >>> X = np.column_stack([np.ones(4001), np.linspace(-124.0, -116.0, 4001)])
    >>> c = private_centre(X, 0, 5.0, np.random.default_rng(1))
    >>> float(c[0]), bool(abs(c[1] + 120) < 2)
    (0.0, True)
    """
    p = X.shape[1]
    cols = [j for j in range(p) if j != intercept_col]
    centre = np.zeros(p)
    if not cols:
        return centre
    each = eps / len(cols)
    if cells is None and kernel:
        cells = kernel_cells(X, cols).__getitem__
    elif cells is None and X.shape[0] >= THREADED_ROWS and len(cols) > 1:
        workers = min(len(cols), os.cpu_count() or 1)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            counted = dict(zip(cols, pool.map(lambda j: centre_cells(X[:, j]), cols),
                               strict=True))
        cells = counted.__getitem__
    for j in cols:
        name = names[j] if names is not None else f"column {j}"
        values, counts = (X[:, j], None) if cells is None else cells(j)
        centre[j] = private_centre_value(values, each, rng, ledger, stage=stage,
                                         what=f"centre of {name}", counts=counts)
    return centre
