"""Numba kernels for the Tukey mechanism: one OLS fit per group of rows.

Pure and deterministic: no randomness, no privacy logic. The plain-numpy reference
:func:`group_ols_reference` computes the same thing and is used by the tests.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .centre_cells import _cells_kernel  # noqa: F401  (compiled with the "tukey" unit)
from .jacobi_svd import householder_qr, jacobi_svd
from .moments import _clip_kernel  # noqa: F401  (compiled with the "tukey" unit)
from .runtime import watch_compiles

__all__ = ["group_ols", "group_ols_reference", "group_order"]


@njit(cache=True)
def group_order(labels: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Counting sort of rows by group label.

    Returns ``(order, starts)``: rows of group g are ``order[starts[g]:starts[g + 1]]``.
    """
    counts = np.zeros(m + 1, dtype=np.int64)
    for i in range(labels.shape[0]):
        counts[labels[i] + 1] += 1
    for g in range(m):
        counts[g + 1] += counts[g]
    starts = counts.copy()
    fill = counts[:m].copy()
    order = np.empty(labels.shape[0], dtype=np.int64)
    for i in range(labels.shape[0]):
        g = labels[i]
        order[fill[g]] = i
        fill[g] += 1
    return order, starts


#: A column whose within-group range is at most this times its largest |value| is constant.
_CONST_REL = 1e-12
#: Singular values below this times the largest count as zero.
_RCOND = 1e-12
#: Groups with at most this many columns are solved by :func:`jacobi_svd` (no LAPACK call).
JACOBI_MAX_COLS = 12
#: A full-rank group whose triangular factor R has Frobenius condition number below this is
#: solved from R directly (relative error about cond * 1e-16); others take the SVD path.
_QR_COND_MAX = 1e6
#: A group with fewer rows than columns is solved from a QR of X^T (in the original
#: coordinates) only while its column norms span less than this factor: then the scaled
#: matrix the SVD path inspects has condition number below 1e6 * 1e3 < 1 / _RCOND, so both
#: paths see full row rank and return the same minimum-norm solution.
_WIDE_SCALE_RATIO = 1e3


@njit(cache=True)
def _scale_ratio(scale: np.ndarray, drop: np.ndarray) -> float:
    lo = np.inf
    hi = 0.0
    for j in range(scale.shape[0]):
        if not drop[j]:
            lo = min(lo, scale[j])
            hi = max(hi, scale[j])
    return hi / lo if lo > 0.0 else np.inf


@njit(cache=True, boundscheck=False)
def _column_stats(Xg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each column's sum of squares and whether it is constant (its range at most
    :data:`_CONST_REL` times its largest |value|), in one pass over the rows: every column's
    running sum, min and max are taken in row order, as one column at a time would (the same
    values to the bit), with contiguous inner loops."""
    n_g, p = Xg.shape
    ss = np.zeros(p)
    const = np.zeros(p, dtype=np.bool_)
    if n_g == 0:
        return ss, const
    lo = Xg[0].copy()
    hi = Xg[0].copy()
    big = np.abs(Xg[0])
    for i in range(n_g):
        for j in range(p):
            v = Xg[i, j]
            ss[j] += v * v
            lo[j] = min(lo[j], v)
            hi[j] = max(hi[j], v)
            big[j] = max(big[j], abs(v))
    for j in range(p):
        const[j] = hi[j] - lo[j] <= _CONST_REL * big[j]
    return ss, const


@njit(cache=True, boundscheck=False)
def _min_norm_jacobi(A: np.ndarray, yg: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """:func:`_solve_group`'s solution from a one-sided Jacobi SVD of the scaled ``A``."""
    p = A.shape[1]
    qty = yg.copy()
    n_g = householder_qr(A, qty)            # A = Q R: R has A's singular values and vectors
    A = A[:n_g]
    V = np.empty((p, p))
    sv = jacobi_svd(A, V)                   # R V = U diag(sv), U stored in A
    top = sv.max()
    beta = np.zeros(p)
    if not top > 0.0:
        return beta
    keep = np.zeros(p, dtype=np.bool_)
    for i in range(p):
        if sv[i] > _RCOND * top:
            keep[i] = True
            uy = 0.0
            for r in range(n_g):
                uy += A[r, i] * qty[r]
            c = uy / (sv[i] * sv[i])        # (u_i . y) / s_i, with u_i = A[:, i] / s_i
            for j in range(p):
                beta[j] += V[j, i] * c
    for j in range(p):
        beta[j] /= scale[j]
    rank = keep.sum()
    if rank < p:  # minimum norm in the original coordinates: project onto D . rowspace(A)
        Q = np.zeros((p, rank))
        k = 0
        for i in range(p):
            if not keep[i]:
                continue
            for j in range(p):
                Q[j, k] = V[j, i] * scale[j]
            for _ in range(2):              # modified Gram-Schmidt, twice
                for q in range(k):
                    dot = 0.0
                    for j in range(p):
                        dot += Q[j, q] * Q[j, k]
                    for j in range(p):
                        Q[j, k] -= dot * Q[j, q]
            nrm = 0.0
            for j in range(p):
                nrm += Q[j, k] * Q[j, k]
            nrm = np.sqrt(nrm)
            for j in range(p):
                Q[j, k] /= nrm
            k += 1
        proj = np.zeros(p)
        for q in range(rank):
            dot = 0.0
            for j in range(p):
                dot += Q[j, q] * beta[j]
            for j in range(p):
                proj[j] += dot * Q[j, q]
        beta = proj
    return beta


@njit(cache=True, boundscheck=False)
def _r_inverse(R: np.ndarray, k: int, Rinv: np.ndarray) -> bool:
    """Fill ``Rinv`` with the inverse of the upper-triangular ``R[:k, :k]`` (back substitution
    on each unit vector); False when ``R`` is singular or its Frobenius condition number
    reaches :data:`_QR_COND_MAX` (then the SVD path must decide the rank)."""
    nr = 0.0
    ni = 0.0
    for j in range(k):
        for i in range(j, -1, -1):
            acc = 1.0 if i == j else 0.0
            for c in range(i + 1, j + 1):
                acc -= R[i, c] * Rinv[c, j]
            if R[i, i] == 0.0:
                return False
            Rinv[i, j] = acc / R[i, i]
            nr += R[i, j] * R[i, j]
            ni += Rinv[i, j] * Rinv[i, j]
    return np.sqrt(nr * ni) < _QR_COND_MAX          # also False for inf / nan


@njit(cache=True, boundscheck=False)
def _qr_solve(A: np.ndarray, yg: np.ndarray, beta: np.ndarray) -> bool:
    """Least squares by Householder QR and back substitution when ``A`` (n >= p, scaled
    columns) is safely full rank: fills ``beta`` and returns True; False (``beta`` undefined)
    when :func:`_r_inverse` refuses ``R``. The unique solution then equals the SVD path's."""
    p = A.shape[1]
    R = A.copy()
    qty = yg.copy()
    householder_qr(R, qty)
    Rinv = np.zeros((p, p))
    if not _r_inverse(R, p, Rinv):
        return False
    for i in range(p):
        acc = 0.0
        for j in range(i, p):
            acc += Rinv[i, j] * qty[j]
        beta[i] = acc
    return True


@njit(cache=True, boundscheck=False)
def _min_norm_wide(Xt: np.ndarray, yg: np.ndarray, beta: np.ndarray) -> bool:
    """Minimum-norm solution of ``X beta = y`` for a group with fewer rows than columns.

    ``Xt`` is the group's ``X`` transposed (p x n_g, n_g < p, dropped columns zero). With
    ``Xt = Q R`` (:func:`householder_qr`), ``X X^T = R^T R`` and ``beta = X^T (X X^T)^-1 y =
    Xt R^-1 R^-T y``. Fills ``beta`` and returns True when :func:`_r_inverse` accepts ``R``;
    False (``beta`` undefined) otherwise.
    """
    p, k = Xt.shape
    R = Xt.copy()
    householder_qr(R, np.zeros(p))
    Rinv = np.zeros((k, k))
    if not _r_inverse(R, k, Rinv):
        return False
    w = np.zeros(k)
    for i in range(k):                      # w = R^-1 (R^-T y)
        z = 0.0
        for j in range(i + 1):
            z += Rinv[j, i] * yg[j]
        for r in range(i + 1):
            w[r] += Rinv[r, i] * z
    for j in range(p):
        acc = 0.0
        for i in range(k):
            acc += Xt[j, i] * w[i]
        beta[j] = acc
    return True


@njit(cache=True)
def _solve_group(Xg: np.ndarray, yg: np.ndarray) -> np.ndarray:
    """Minimum-norm least squares on one group, with per-group column scaling.

    Columns are scaled by their norms *within the group* before the SVD-based solve (the OLS
    solution is scale-equivariant, and the scaling depends on this group only, so each model
    still depends on its own rows alone). When the group is rank deficient (fewer rows than
    columns, or collinear columns such as a full set of dummies next to the intercept) the
    solution is the one of minimum norm in the *original* coordinates, so every group picks
    the same representative (per-group scaling alone would pick a group-dependent one and
    spread the models along the null direction). A column that is constant within the group, other
    than the first such column (the intercept), carries no information about its slope and is
    collinear with the intercept; it gets coefficient 0 instead of a share of the intercept
    (which, after scaling, would be ``intercept / (2 * value)`` and explodes for small values).
    """
    n_g, p = Xg.shape
    scale = np.ones(p)
    drop = np.zeros(p, dtype=np.bool_)
    seen_constant = False
    ss, const = _column_stats(Xg)
    for j in range(p):
        s = ss[j]
        if s > 0.0 and np.isfinite(s):
            scale[j] = np.sqrt(s)
        if n_g > 0 and const[j]:
            if seen_constant or Xg[0, j] == 0.0:
                drop[j] = True
            else:
                seen_constant = True
    A = np.empty((n_g, p))
    for i in range(n_g):
        for j in range(p):
            A[i, j] = 0.0 if drop[j] else Xg[i, j] / scale[j]
    beta = np.zeros(p)
    if n_g == 0:
        return beta
    if n_g >= p and _qr_solve(A, yg, beta):     # the common, well-conditioned case
        for j in range(p):
            beta[j] /= scale[j]
        return beta
    if n_g < p and _scale_ratio(scale, drop) < _WIDE_SCALE_RATIO:
        Xt = np.empty((p, n_g))                 # fewer rows than columns (a small group)
        for i in range(n_g):
            for j in range(p):
                Xt[j, i] = A[i, j] * scale[j]
        if _min_norm_wide(Xt, yg, beta):
            return beta
        beta[:] = 0.0
    if p <= JACOBI_MAX_COLS:
        return _min_norm_jacobi(A, yg, scale)
    u, sv, vt = np.linalg.svd(A, full_matrices=False)
    r = 0
    while r < sv.shape[0] and sv[r] > _RCOND * sv[0]:
        r += 1
    if r == 0:
        return beta
    ut = np.ascontiguousarray(u[:, :r].T)
    coef = (ut @ yg) / sv[:r]
    sol = np.ascontiguousarray(vt[:r].T) @ coef
    for j in range(p):
        beta[j] = sol[j] / scale[j]
    if r < p:  # rank deficient: the least-squares solution of minimum norm in the original
        # coordinates (one gauge for every group), i.e. project onto D . rowspace(A)
        B = np.empty((p, r))
        for k in range(r):
            for j in range(p):
                B[j, k] = vt[k, j] * scale[j]
        q, _ = np.linalg.qr(B)
        q = np.ascontiguousarray(q)
        beta = q @ (np.ascontiguousarray(q.T) @ beta)
    return beta


@njit(cache=True, parallel=True)
def _group_ols_kernel(X: np.ndarray, y: np.ndarray, labels: np.ndarray, m: int) -> np.ndarray:
    n, p = X.shape
    order, starts = group_order(labels, m)
    out = np.zeros((m, p))
    for g in prange(m):
        a, b = starts[g], starts[g + 1]
        Xg = np.empty((b - a, p))
        yg = np.empty(b - a)
        for r in range(b - a):
            i = order[a + r]
            yg[r] = y[i]
            for j in range(p):
                Xg[r, j] = X[i, j]
        out[g] = _solve_group(Xg, yg)
    return out


def group_ols(X: np.ndarray, y: np.ndarray, labels: np.ndarray, m: int) -> np.ndarray:
    """OLS coefficients for every group of rows (groups in parallel).

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
        group gives zeros.

    Notes
    -----
    Groups with at most :data:`JACOBI_MAX_COLS` columns are solved by Householder QR and a
    one-sided Jacobi SVD written in numba (no LAPACK call: two to five times faster on k + 1
    columns); wider ones call LAPACK's SVD with OpenBLAS held to one thread
    (:func:`~dpstats._kernels.runtime.single_threaded_blas`); small inputs run on one thread
    (:func:`~dpstats._kernels.runtime.kernel_threads`).
    """
    from .runtime import kernel_threads, single_threaded_blas
    with kernel_threads(X.size):
        if X.shape[1] <= JACOBI_MAX_COLS:
            return _group_ols_kernel(X, y, labels, m)
        with single_threaded_blas():
            return _group_ols_kernel(X, y, labels, m)


def group_ols_reference(X: np.ndarray, y: np.ndarray, labels: np.ndarray, m: int) -> np.ndarray:
    """Plain numpy reference for :func:`group_ols` (a Python loop over groups)."""
    p = X.shape[1]
    out = np.zeros((m, p))
    for g in range(m):
        rows = labels == g
        if rows.any():
            Xg = X[rows].copy()
            scale = np.sqrt((Xg**2).sum(axis=0))
            scale[~(scale > 0) | ~np.isfinite(scale)] = 1.0
            rng_ = Xg.max(axis=0) - Xg.min(axis=0)
            const = rng_ <= _CONST_REL * np.abs(Xg).max(axis=0)
            first = [j for j in np.flatnonzero(const) if Xg[0, j] != 0.0][:1]
            drop = const.copy()
            drop[first] = False
            Xg[:, drop] = 0.0
            A = Xg / scale
            u, sv, vt = np.linalg.svd(A, full_matrices=False)
            r = int(np.sum(sv > _RCOND * sv[0])) if sv.size and sv[0] > 0 else 0
            beta = (vt[:r].T @ ((u[:, :r].T @ y[rows]) / sv[:r])) / scale
            if 0 < r < p:
                q, _ = np.linalg.qr((vt[:r] * scale).T)
                beta = q @ (q.T @ beta)
            out[g] = beta
    return out


watch_compiles()   # the first real compile says so on stderr (see runtime.compile_notice)
