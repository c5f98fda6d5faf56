"""Per-group OLS for the Tukey mechanism: plain numpy on small designs, the numba kernel on large.

Compiling the numba kernel (:func:`dpstats._kernels.tukey.group_ols`) costs about 13-19 s of CPU
once, with an empty cache; the vectorised numpy version
(:func:`dpstats._kernels.tukey_numpy.group_ols_numpy`, same results to about 1e-11 relative) is
three to four times slower warm but compiles nothing. :func:`group_ols` takes the numpy path
while the public work estimate ``m * p**2`` is at most :data:`NUMPY_MAX_WORK` (Tukey's ``m`` is
at least ``n_hat / (3 p)``, so this is about ``n p / 3`` rows x columns, read from the number of
groups and columns only, both public), and the kernel above it, announcing its compile first
(:func:`dpstats._kernels.prepare.prepare` of the unit ``"tukey"``) when the cache lacks it.

Measured on the two-core test machine (CPU seconds per call, numpy / numba warm; groups of
``3 p`` rows): n=20,640 p=9: 0.022 / 0.003; n=1e5 p=20: 0.16 / 0.05; n=3e5 p=20 (m p^2 = 2e6):
0.49 / 0.14; n=1e6 p=20: 1.6 / 0.48. At the threshold numpy costs about 0.35 s more per fit,
so about forty such fits before the compile would have paid off.
"""

from __future__ import annotations

import numpy as np

__all__ = ["group_ols", "uses_kernel", "NUMPY_MAX_WORK"]

#: Largest ``m * p**2`` (groups x columns squared, both public) solved in plain numpy.
NUMPY_MAX_WORK = 2_000_000


#: Most rows per model per column that ``m="auto"`` gives a group
#: (:data:`dpstats.estimators.tukey.choose_m.ROWS_PER_COLUMN`; a test checks they agree). The
#: numpy path batches groups of equal size, and with groups of tens of rows per column it is
#: up to 20 x slower than the kernel (n=3e5, p=21, 476 groups: 4.0 s against 0.2 s CPU), so
#: the public work estimate assumes groups that large: ``m p^2 * GROUP_ROWS_PER_COLUMN / 3``.
GROUP_ROWS_PER_COLUMN = 30.0


def uses_kernel(m: int, p: int) -> bool:
    """Whether :func:`group_ols` takes the numba kernel for ``m`` groups of ``p`` columns
    (public: the number of groups and columns only).

    >>> uses_kernel(764, 9), uses_kernel(1_587, 21), uses_kernel(16_666, 20)
    (False, True, True)
    """
    return int(m) * int(p) * int(p) * GROUP_ROWS_PER_COLUMN / 3.0 > NUMPY_MAX_WORK


def group_ols(X: np.ndarray, y: np.ndarray, labels: np.ndarray, m: int) -> np.ndarray:
    """OLS coefficients for every group of rows: numpy below :data:`NUMPY_MAX_WORK`, the
    numba kernel above (its compile announced first when the cache lacks it).

    Parameters
    ----------
    X : (n, p) float64 array
    y : (n,) float64 array
    labels : (n,) int64 array of group labels in ``[0, m)``
    m : int
        Number of groups.

    Returns
    -------
    (m, p) float64 array
        Row g is the (minimum-norm) least-squares solution on the rows labelled g; an empty
        group gives zeros (see :func:`dpstats._kernels.tukey.group_ols`).

    Examples
    --------
    >>> X = np.c_[np.ones(4), [0., 1., 0., 2.]]
    >>> group_ols(X, 3.0 - X[:, 1], np.array([0, 0, 1, 1]), 2).round(12)
    array([[ 3., -1.],
           [ 3., -1.]])
    """
    if not uses_kernel(m, X.shape[1]):
        from .tukey_numpy import group_ols_numpy
        return group_ols_numpy(X, y, labels, m)
    from .prepare import prepare
    prepare(("tukey",))                 # the notice, before the compile (public m and p only)
    from .tukey import group_ols as kernel
    return kernel(X, y, labels, m)
