"""Which coefficients each group of rows identifies, for the Tukey mechanism (issue 15).

Pure and deterministic (no randomness, no privacy logic): plain numpy around the group kernel
:func:`dpstats._kernels.tukey_ols.group_ols` (numpy on small designs): nothing more to compile.
"""

from __future__ import annotations

import numpy as np

from .tukey_ols import group_ols

__all__ = ["group_identified"]


#: Relative tolerance of :func:`group_identified` (the probe solve is exact up to about
#: cond * 1e-16; an unidentified coordinate misses its probe value by O(1)).
_IDENT_RTOL = 1e-7


def group_identified(X: np.ndarray, labels: np.ndarray, m: int,
                     functionals: np.ndarray | None = None) -> np.ndarray:
    """Which linear functionals of the coefficients each group's rows identify: (m, k) bool.

    Functional ``f`` (a row of ``functionals``, default the p coordinates) is identified by
    group g when ``f`` lies in the row space of the group's design ``X_g``: then every
    least-squares solution, the minimum-norm one included, gives ``f . beta`` the same value.
    It is not when a factor level is absent from the group (its dummy and, for the reference
    level, the intercept), when a column is constant in it, or when the group has too few rows.

    Computed with the group kernel itself: the probe label ``y' = X_g w_g`` with
    ``w_g = omega / ||column||_g`` (public constants ``omega_j = sqrt(j + 2)``, scaled by the
    group's own column norms) has the exact fit ``beta = w_g``, and
    :func:`~dpstats._kernels.tukey.group_ols` returns the projection of ``w_g`` onto the row
    space; ``f . beta = f . w_g`` (to a relative :data:`_IDENT_RTOL`) exactly when ``f`` is
    in the row space, unless ``f``'s null-space part happens to be orthogonal to ``w_g``. A
    function of the group's own rows (and public constants) only, so one added row changes
    one group's identification.

    >>> X = np.c_[np.ones(6), [0., 0., 1., 1., 0., 1.], [1., 1., 0., 0., 1., 0.]]
    >>> group_identified(X, np.array([0, 0, 0, 1, 1, 1]), 2).tolist()
    [[False, False, False], [False, False, False]]
    >>> group_identified(X[:, :2], np.array([0, 0, 0, 1, 1, 1]), 2).tolist()
    [[True, True], [True, True]]
    """
    n, p = X.shape
    F = np.eye(p) if functionals is None else np.asarray(functionals, dtype=np.float64)
    norms = np.empty((m, p))
    for j in range(p):
        norms[:, j] = np.sqrt(np.bincount(labels, weights=X[:, j] * X[:, j], minlength=m))
    norms[~(norms > 0) | ~np.isfinite(norms)] = 1.0
    W = np.sqrt(np.arange(p) + 2.0) / norms
    probe = np.zeros(n)
    for j in range(p):
        probe += X[:, j] * W[labels, j]
    fit = group_ols(X, probe, labels, m)
    with np.errstate(invalid="ignore", over="ignore"):
        miss = np.abs((fit - W) @ F.T)
        ok = miss <= _IDENT_RTOL * (np.abs(W) @ np.abs(F).T)
    counts = np.bincount(labels, minlength=m)
    ok[counts == 0] = False
    return ok
