"""Lasso (numba): one fit by coordinate descent, and per-group path fits for SubLasso.

:func:`lasso_cd` minimises ``(1/(2n)) ||y - X b||^2 + alpha ||b||_1`` (no intercept), the same
objective as ``statsmodels`` ``OLS.fit_regularized(method="elastic_net", L1_wt=1)``.
:func:`lasso_topk_support` follows one Lasso *path* per group of rows (exactly, by homotopy:
:mod:`.lasso_path`) and reports each group's k leading features, with no alpha and no scale to
choose. It is non-private work inside a group: its output only enters a vote
(:func:`support_votes`) in which one row, living in one group, moves every count by at most 1.
Numpy references (:mod:`.lasso_reference`) implement the same definitions with plain cyclic
sweeps, for the tests.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .lasso_path import homotopy_at_grid
from .runtime import all_finite, run_chunks, watch_compiles

__all__ = ["lasso_cd", "lasso_topk_support", "support_votes"]

#: A column whose within-group SD is below this times its largest |value| counts as constant.
_CONST_REL = 1e-12
#: Smaller groups abstain: with 2 rows every non-constant column is perfectly correlated with y.
_MIN_ROWS = 3
#: Correlations below this times SD(y) count as zero (such features never get a vote).
_ZERO_CORR_REL = 1e-10


# One function for the sweeps (each separate kernel costs its own compile on a cold cache).
@njit(cache=True)
def _cd_solve(Xt, r, beta, colsq, alpha, max_iter, tol):
    """Coordinate descent from ``beta`` (with ``r = y - X beta``) until a full sweep moves no
    coordinate by more than ``tol``; active-set passes in between. Returns sweeps used.

    A sweep is one cyclic coordinate pass (over the active coordinates only in an active-set
    pass); its change is the largest ``|delta b_j| * ||x_j|| / sqrt(n)``. After a full sweep
    above ``tol``, active-set passes run until one is within ``tol``, then a full sweep again.
    """
    d, n = Xt.shape
    sweeps = 0
    active_only = False
    while sweeps < max_iter:
        biggest = 0.0
        for j in range(d):
            if colsq[j] <= 0.0 or (active_only and beta[j] == 0.0):
                continue
            cj = colsq[j] / n
            g = 0.0
            for i in range(n):
                g += Xt[j, i] * r[i]
            z = g / n + cj * beta[j]
            if z > alpha:
                new = (z - alpha) / cj
            elif z < -alpha:
                new = (z + alpha) / cj
            else:
                new = 0.0
            delta = new - beta[j]
            if delta != 0.0:
                for i in range(n):
                    r[i] -= delta * Xt[j, i]
                beta[j] = new
                change = abs(delta) * math.sqrt(cj)
                if change > biggest:
                    biggest = change
        sweeps += 1
        if biggest <= tol:
            if not active_only:
                break
            active_only = False
        else:
            active_only = True
    return sweeps


def _check_xy(X, y) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"need X of shape (n, d) and y of shape (n,); got {X.shape} and "
                         f"{y.shape}")
    if not (all_finite(X) and all_finite(y)):
        raise ValueError("X and y must be finite (no NaN or inf); drop or impute them first")
    return X, y


def lasso_cd(X, y, alpha: float, beta0=None, max_iter: int = 10_000,
             tol: float = 1e-10) -> np.ndarray:
    """Lasso ``argmin_b (1/(2n)) ||y - X b||^2 + alpha ||b||_1`` by coordinate descent.

    No intercept (centre, or include a column of ones, which is then penalised too).

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like, shape (n,)
    alpha : float
        Penalty, ``>= 0``.
    beta0 : array_like, shape (d,), optional
        Warm start (zeros by default).
    max_iter : int
        Maximum number of sweeps over the coordinates.
    tol : float
        Stop when a full sweep changes no ``b_j * ||x_j|| / sqrt(n)`` by more than
        ``tol * sqrt(mean(y^2))`` (scale-free).

    Returns
    -------
    numpy.ndarray, shape (d,)
        Coefficients; exact zeros off the support, and 0 for all-zero columns.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> np.round(lasso_cd(X, X @ [2.0, 0.0], alpha=0.1), 4).tolist()
    [1.85, 0.0]
    """
    X, y = _check_xy(X, y)
    n, d = X.shape
    if not (math.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"alpha must be a finite number >= 0; got {alpha!r}")
    colsq = np.einsum("ij,ij->j", X, X)
    beta = np.zeros(d) if beta0 is None else np.array(beta0, dtype=np.float64).reshape(d)
    beta[colsq <= 0] = 0.0
    r = y - X @ beta
    scale = math.sqrt(float(y @ y) / max(n, 1)) or 1.0
    if n > 0:
        _cd_solve(np.ascontiguousarray(X.T), r, beta, colsq, float(alpha), int(max_iter),
                  float(tol) * scale)
    return beta


@njit(cache=True)
def _group_support(Xt, y, keep, k, n_alphas, min_ratio, max_iter, tol, out):
    """Path fit of one group; ``Xt`` (d x n_g) and ``y`` are overwritten (standardised).

    Plain loops rather than array expressions: the same sums in the same order (numba's
    ``mean``/``sum`` add sequentially), with far less to compile.
    """
    d, ng = Xt.shape
    ymean = 0.0
    ymax = 0.0
    for i in range(ng):
        ymean += y[i]
        ymax = max(ymax, abs(y[i]))
    ymean /= ng
    ss = 0.0
    for i in range(ng):
        y[i] -= ymean
        ss += y[i] * y[i]
    ysd = math.sqrt(ss / ng)
    if ysd <= _CONST_REL * ymax:
        return
    colsq = np.zeros(d)
    corr = np.zeros(d)
    for j in range(d):
        if not keep[j]:
            continue
        mean = 0.0
        xmax = 0.0
        for i in range(ng):
            mean += Xt[j, i]
            xmax = max(xmax, abs(Xt[j, i]))
        mean /= ng
        ss = 0.0
        for i in range(ng):
            Xt[j, i] -= mean
            ss += Xt[j, i] * Xt[j, i]
        sd = math.sqrt(ss / ng)
        if sd <= _CONST_REL * xmax:
            keep[j] = False
            continue
        g = 0.0
        for i in range(ng):
            Xt[j, i] /= sd
            g += Xt[j, i] * y[i]
        sq = 0.0
        for i in range(ng):
            sq += Xt[j, i] * Xt[j, i]
        colsq[j] = sq
        corr[j] = abs(g) / ng
    alpha_max = 0.0
    n_keep = 0
    for j in range(d):
        keep[j] = keep[j] and corr[j] > _ZERO_CORR_REL * ysd
        alpha_max = max(alpha_max, corr[j])
        if keep[j]:
            n_keep += 1
        else:
            colsq[j] = 0.0          # never enters the fit
    if alpha_max <= _ZERO_CORR_REL * ysd:
        return
    # at most n_g - 1 coefficients can be active after centring: stop as soon as that is reached
    target = min(k, ng - 1, n_keep)
    beta = np.zeros(d)
    if not homotopy_at_grid(Xt, y, keep, alpha_max, target, n_alphas, min_ratio, beta):
        beta[:] = 0.0          # degenerate path (collinear actives): coordinate descent
        r = y.copy()
        for step in range(1, n_alphas):
            alpha = alpha_max * min_ratio ** (step / (n_alphas - 1))
            _cd_solve(Xt, r, beta, colsq, alpha, max_iter, tol * ysd)
            nonzero = 0
            for j in range(d):
                if beta[j] != 0.0:
                    nonzero += 1
            if nonzero >= target:
                break
    # report: the active features by decreasing |coefficient|, then the kept ones by decreasing
    # |correlation|, until k are listed (ties: lower index first)
    taken = np.zeros(d, dtype=np.bool_)
    m = 0
    for by_corr in (False, True):
        while m < k:
            best = -1
            best_value = 0.0
            for j in range(d):
                if taken[j] or not (keep[j] if by_corr else beta[j] != 0.0):
                    continue
                value = corr[j] if by_corr else abs(beta[j])
                if best < 0 or value > best_value:
                    best = j
                    best_value = value
            if best < 0:
                break
            taken[best] = True
            out[m] = best
            m += 1


# Serial, releasing the GIL: :func:`.runtime.run_chunks` runs ranges of groups on threads.
# A ``parallel=True`` loop over the groups cost about 4 s more to compile on a cold cache.
@njit(cache=True, nogil=True)
def _support_kernel(X, y, order, offsets, keep, k, n_alphas, min_ratio, max_iter, tol, out,
                    g0, g1):
    d = X.shape[1]
    for g in range(g0, g1):
        lo = offsets[g]
        ng = offsets[g + 1] - lo
        if ng < _MIN_ROWS:
            continue
        Xt = np.empty((d, ng))
        yg = np.empty(ng)
        for i in range(ng):
            row = order[lo + i]
            yg[i] = y[row]
            for j in range(d):
                Xt[j, i] = X[row, j]
        _group_support(Xt, yg, keep.copy(), k, n_alphas, min_ratio, max_iter, tol, out[g])


def _writeable(a: np.ndarray) -> np.ndarray:
    """``a``, copied when read-only (a read-only array would compile a second variant)."""
    return a if a.flags.writeable else a.copy()


def _prepare_groups(X, y, group_labels, n_groups, k, intercept_col, n_alphas, alpha_min_ratio):
    X, y = _check_xy(X, y)
    n, d = X.shape
    labels = np.asarray(group_labels)
    if labels.shape != (n,) or not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"group_labels must be {n} integers (one per row); got dtype "
                         f"{labels.dtype} and shape {labels.shape}")
    if n and (labels.min() < 0 or labels.max() >= n_groups):
        raise ValueError(f"group_labels must lie in [0, n_groups={n_groups})")
    if int(k) < 1:
        raise ValueError(f"k must be >= 1; got {k!r}")
    if not -1 <= int(intercept_col) < d:
        raise ValueError(f"intercept_col must be -1 (none) or a column index < {d}; got "
                         f"{intercept_col!r}")
    if int(n_alphas) < 2 or not 0 < alpha_min_ratio < 1:
        raise ValueError("need n_alphas >= 2 and 0 < alpha_min_ratio < 1")
    X = _writeable(np.ascontiguousarray(X))     # one compiled layout and type
    y = _writeable(np.ascontiguousarray(y))
    order = np.argsort(labels, kind="stable").astype(np.int64)
    offsets = np.concatenate(([0], np.cumsum(np.bincount(labels, minlength=int(n_groups)))))
    keep = np.ones(d, dtype=np.bool_)
    if intercept_col >= 0:
        keep[int(intercept_col)] = False
    return X, y, order, offsets.astype(np.int64), keep


def lasso_topk_support(X, y, group_labels, n_groups: int, k: int, intercept_col: int = -1, *,
                       n_alphas: int = 100, alpha_min_ratio: float = 1e-4,
                       max_iter: int = 1000, tol: float = 1e-7) -> np.ndarray:
    """Each group's k leading Lasso features, from a Lasso path stopped at k active features.

    For every group of rows, non-privately: centre ``y``; centre and scale each column to unit
    RMS *within the group* (scale-free); drop the intercept column and every column that is
    constant in the group; solve the Lasso down the geometric grid
    ``alpha_max * alpha_min_ratio ** (i / (n_alphas - 1))``, ``i = 1, 2, ...``, where
    ``alpha_max = max_j |x_j^T y| / n_g`` (all-zero fit) -- exactly, by following the path's
    breakpoints (:mod:`dpstats._kernels.lasso_path`; coordinate descent with warm starts when
    the path is degenerate, with ``max_iter``, ``tol``); stop at the first alpha with at least
    ``min(k, n_g - 1)`` non-zero coefficients (a centred Lasso has at most ``n_g - 1``) and
    report the k largest ``|coefficient|`` (standardised scale). If fewer than k are active
    there (small ``n_g``, or the grid ran out), the rest is filled by largest
    ``|correlation with y|``. Features whose correlation with ``y`` is zero in the group get no
    vote from it, and groups with fewer than 3 rows (with 2 rows every non-constant column is
    perfectly correlated with ``y``) or constant ``y`` vote for nothing; rows are padded with -1.
    Ties go to the lower column index. Groups run in parallel.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like, shape (n,)
    group_labels : array_like of int, shape (n,)
        Group of each row, in ``[0, n_groups)``; empty groups are allowed.
    n_groups : int
    k : int
        Features reported per group.
    intercept_col : int
        Column never reported (handled by centring), or -1 for none.
    n_alphas, alpha_min_ratio : int, float
        Path grid (100 values down to ``1e-4 * alpha_max`` by default).
    max_iter, tol : int, float
        Coordinate-descent sweeps per alpha, and tolerance relative to SD(y) in the group.

    Returns
    -------
    numpy.ndarray of int64, shape (n_groups, k)
        Row g lists group g's features by decreasing importance (distinct column indices),
        padded with -1. Turn it into vote counts with :func:`support_votes`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.sin(np.outer(np.arange(400), [1.0, 2.1, 3.3, 4.7, 5.2, 6.9]))
    >>> y = 3 * X[:, 2] - 2 * X[:, 4] + 0.1 * np.cos(np.arange(400))
    >>> lasso_topk_support(X, y, np.repeat([0, 1], 200), 2, k=2).tolist()
    [[2, 4], [2, 4]]
    """
    X, y, order, offsets, keep = _prepare_groups(X, y, group_labels, n_groups, k,
                                                 intercept_col, n_alphas, alpha_min_ratio)
    out = np.full((int(n_groups), int(k)), -1, dtype=np.int64)
    run_chunks(_support_kernel, int(n_groups), X.size, X, y, order, offsets, keep, int(k),
               int(n_alphas), float(alpha_min_ratio), int(max_iter), float(tol), out)
    return out


def support_votes(support, d: int) -> np.ndarray:
    """Per-feature vote counts from a :func:`lasso_topk_support` matrix (-1 entries ignored).

    Each group votes at most once per feature, so every count has add/remove-one-row
    sensitivity 1 when each row belongs to one group.

    >>> support_votes(np.array([[2, 0], [2, -1]]), 4).tolist()
    [1, 0, 2, 0]
    """
    s = np.asarray(support)
    return np.bincount(s[s >= 0].ravel(), minlength=d).astype(np.int64)


watch_compiles()   # counts real compiles (runtime.compile_stats; the notice is prepare.py)
