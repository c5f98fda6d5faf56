"""Per-group OLS in plain numpy: what :func:`dpstats._kernels.tukey.group_ols` computes, without
a numba compile.

Compiling the numba group-OLS kernel costs about 13-19 s of CPU once (with an empty cache); on
small and moderate designs the vectorised numpy version below takes milliseconds to a second,
so :func:`dpstats._kernels.tukey.group_ols` uses it below a size threshold
(:data:`dpstats._kernels.tukey.NUMPY_MAX_WORK`) and the kernel above it.

Same semantics as the kernel: each group's columns are scaled by their norms within the group,
a column constant within the group other than the first non-zero one (the intercept) gets
coefficient 0, the solution is the minimum-norm least-squares one in the *original* coordinates
(singular values below ``_RCOND`` times the largest count as zero), an empty group gives zeros.
Groups of equal size are solved together by one batched SVD (numpy's stacked ``linalg``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["group_ols_numpy"]

#: Same constants as the numba kernel (:mod:`dpstats._kernels.tukey`).
_CONST_REL = 1e-12
_RCOND = 1e-12


def _solve_batch(Xg: np.ndarray, yg: np.ndarray) -> np.ndarray:
    """Minimum-norm least squares for ``b`` groups of ``k`` rows each: ``Xg`` (b, k, p),
    ``yg`` (b, k); returns (b, p)."""
    b, _, p = Xg.shape
    s = np.einsum("bkp,bkp->bp", Xg, Xg)
    scale = np.ones((b, p))
    good = (s > 0.0) & np.isfinite(s)
    scale[good] = np.sqrt(s[good])
    big = np.abs(Xg).max(axis=1)
    const = Xg.max(axis=1) - Xg.min(axis=1) <= _CONST_REL * big
    first = Xg[:, 0, :] != 0.0
    keepable = const & first               # the first of these stays (the intercept)
    kept = keepable & (np.cumsum(keepable, axis=1) == 1)
    drop = const & ~kept
    A = np.where(drop[:, None, :], 0.0, Xg / scale[:, None, :])
    u, sv, vt = np.linalg.svd(A, full_matrices=False)
    top = sv[:, :1]
    keep = (sv > _RCOND * top) & (top > 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        coef = np.where(keep, np.einsum("bkr,bk->br", u, yg) / sv, 0.0)
    beta = np.einsum("brp,br->bp", vt, coef) / scale
    rank = keep.sum(axis=1)                # keep is a prefix: singular values are sorted
    beta[rank == 0] = 0.0
    for r in np.unique(rank[(rank > 0) & (rank < p)]):
        # rank deficient: minimum norm in the original coordinates (the same gauge in every
        # group), i.e. project onto D . rowspace(A) of the kept singular vectors
        sel = np.flatnonzero(rank == r)
        B = np.swapaxes(vt[sel, :r, :] * scale[sel, None, :], 1, 2)      # (g, p, r)
        q, _ = np.linalg.qr(B)
        beta[sel] = np.einsum("gpr,gr->gp", q, np.einsum("gpr,gp->gr", q, beta[sel]))
    return beta


def group_ols_numpy(X: np.ndarray, y: np.ndarray, labels: np.ndarray, m: int) -> np.ndarray:
    """OLS coefficients for every group of rows, in numpy (no compile).

    Parameters
    ----------
    X : (n, p) float64 array
    y : (n,) float64 array
    labels : (n,) int array of group labels in ``[0, m)``
    m : int
        Number of groups.

    Returns
    -------
    (m, p) float64 array
        Row g is the (minimum-norm) least-squares solution on the rows labelled g, as
        :func:`dpstats._kernels.tukey.group_ols` computes it; an empty group gives zeros.

    Examples
    --------
    >>> X = np.c_[np.ones(6), [0., 1., 2., 0., 1., 3.]]
    >>> group_ols_numpy(X, 1.0 + 2.0 * X[:, 1], np.array([0, 0, 0, 1, 1, 1]), 3).round(12)
    array([[1., 2.],
           [1., 2.],
           [0., 0.]])
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    p = X.shape[1]
    out = np.zeros((m, p))
    if labels.size == 0 or m == 0:
        return out
    counts = np.bincount(labels, minlength=m)
    order = np.argsort(labels, kind="stable")
    starts = np.concatenate(([0], np.cumsum(counts)))[:m]
    for k in np.unique(counts[counts > 0]):            # groups of equal size: one batch
        groups = np.flatnonzero(counts == k)
        rows = order[starts[groups][:, None] + np.arange(k)]        # (b, k)
        out[groups] = _solve_batch(X[rows], y[rows])
    return out
