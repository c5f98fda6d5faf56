"""Numba kernel: one lightly ridge-regularised logistic regression per group of rows.

Used by the Tukey mechanism for GLMs (:mod:`dpstats.estimators.tukey.glm`), which needs one
model per random group, for all groups at once (a Python loop over thousands of groups would
dominate the fit). Pure and deterministic: no randomness, no privacy logic. The plain-numpy
reference :func:`group_logistic_reference` runs the same algorithm and is used by the tests.

Objective of one group (rows ``i`` of the group, ``n_g`` of them, label ``y_i`` in {0, 1}):

    f(b) = (1 / n_g) sum_i [log(1 + exp(a_i . b)) - y_i a_i . b] + (ridge / 2) ||b||^2,

where ``a_i`` is row i with each column divided by its root mean square *within the group*
(the coefficients are scaled back afterwards). The ridge term (default ``1e-6``) is there only
to keep the problem well posed: small groups are often (quasi-)separable, and a constant or
empty column would make the plain maximum-likelihood estimate infinite or non-unique. Because
the columns have unit RMS, the same ``ridge`` is equally light for every column scale, and the
solution is the unregularised MLE to about ``1e-6`` relative accuracy on well-posed groups. On a
separable group the coefficients are finite but large (``||b|| <= sqrt(2 ln 2 / ridge)`` in
scaled units), which the Tukey mechanism's depth tolerates as outliers. As in
:func:`dpstats._kernels.tukey.group_ols`, a column that is constant within the group, other than
the first non-zero constant column (the intercept), gets coefficient 0, and an empty group
gives zeros. Every model depends on its own group's rows only.

Solver: Newton's method with backtracking (Armijo) line search from ``b = 0``; the objective
is strongly convex, so it converges from any start. It stops when the Newton decrement
``g' H^-1 g / 2`` falls below ``tol`` or after ``max_iter`` steps.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .runtime import watch_compiles
from .tukey import _CONST_REL, group_order

__all__ = ["group_logistic", "group_logistic_reference", "DEFAULT_RIDGE"]

#: Default ridge on the unit-RMS scale (see the module docstring).
DEFAULT_RIDGE = 1e-6


@njit(cache=True, parallel=True)
def group_logistic(X: np.ndarray, y: np.ndarray, labels: np.ndarray, m: int,
                   ridge: float = DEFAULT_RIDGE, max_iter: int = 100,
                   tol: float = 1e-20) -> np.ndarray:
    """Ridge-stabilised logistic regression coefficients for every group of rows.

    Parameters
    ----------
    X : (n, p) float64 array
    y : (n,) float64 array of 0/1 labels
    labels : (n,) int64 array of group labels in ``[0, m)``
    m : int
        Number of groups.
    ridge : float
        Ridge weight on the unit-RMS scale (module docstring); must be > 0.
    max_iter : int
        Most Newton steps per group.
    tol : float
        Stop when the Newton decrement ``g' H^-1 g / 2`` is at most this.

    Returns
    -------
    (m, p) float64 array
        Row g is the fit on the rows labelled g (zeros for an empty group).

    Notes
    -----
    The per-group solver is written out in this one function (Cholesky solve included)
    rather than split into helpers: numba re-optimises every inlined callee inside the
    parallel loop, and the split version took about 2.5 times as long to compile.
    """
    n, p = X.shape
    order, starts = group_order(labels, m)
    out = np.zeros((m, p))
    for g in prange(m):
        a0 = starts[g]
        ng = starts[g + 1] - a0
        if ng == 0:
            continue
        A = np.empty((ng, p))
        yg = np.empty(ng)
        for r in range(ng):
            yg[r] = y[order[a0 + r]]
            for j in range(p):
                A[r, j] = X[order[a0 + r], j]
        # unit-RMS scaling; extra constant columns get coefficient 0 (as in group_ols)
        scale = np.ones(p)
        drop = np.zeros(p, dtype=np.bool_)
        seen = False
        for j in range(p):
            ss, lo, hi, big = 0.0, A[0, j], A[0, j], abs(A[0, j])
            for r in range(ng):
                v = A[r, j]
                ss += v * v
                lo, hi, big = min(lo, v), max(hi, v), max(big, abs(v))
            ss = np.sqrt(ss / ng)
            if ss > 0.0 and np.isfinite(ss):
                scale[j] = ss
            if hi - lo <= _CONST_REL * big:
                if seen or A[0, j] == 0.0:
                    drop[j] = True
                else:
                    seen = True
        for r in range(ng):
            for j in range(p):
                A[r, j] = 0.0 if drop[j] else A[r, j] / scale[j]
        # damped Newton from b = 0 (objective log 2, all linear predictors 0)
        b, cand, eta = np.zeros(p), np.zeros(p), np.zeros(ng)
        grad, step = np.empty(p), np.empty(p)
        H, L = np.empty((p, p)), np.empty((p, p))
        f = np.log(2.0)
        for _ in range(max_iter):
            for j in range(p):
                grad[j] = ridge * b[j]
                for k in range(p):
                    H[j, k] = ridge if j == k else 0.0
            for r in range(ng):
                e = eta[r]
                mu = 1.0 / (1.0 + np.exp(-e)) if e >= 0.0 else np.exp(e) / (1.0 + np.exp(e))
                res = (mu - yg[r]) / ng
                w = mu * (1.0 - mu) / ng
                for j in range(p):
                    grad[j] += res * A[r, j]
                    for k in range(j + 1):
                        H[j, k] += w * A[r, j] * A[r, k]
            for j in range(p):               # Cholesky H = L L' (lower triangle of H)
                d = H[j, j]
                for k in range(j):
                    d -= L[j, k] * L[j, k]
                L[j, j] = np.sqrt(d)
                for i in range(j + 1, p):
                    t = H[i, j]
                    for k in range(j):
                        t -= L[i, k] * L[j, k]
                    L[i, j] = t / L[j, j]
            for i in range(p):               # step = H^-1 grad
                t = grad[i]
                for k in range(i):
                    t -= L[i, k] * step[k]
                step[i] = t / L[i, i]
            for i in range(p - 1, -1, -1):
                t = step[i]
                for k in range(i + 1, p):
                    t -= L[k, i] * step[k]
                step[i] = t / L[i, i]
            dec = 0.0
            for j in range(p):
                dec += grad[j] * step[j]
            if dec / 2.0 <= tol:
                break
            t, fc = 1.0, f
            while True:                      # backtracking (Armijo) line search
                pen = 0.0
                for j in range(p):
                    cand[j] = b[j] - t * step[j]
                    pen += cand[j] * cand[j]
                tot = 0.0
                for r in range(ng):
                    e = 0.0
                    for j in range(p):
                        e += A[r, j] * cand[j]
                    eta[r] = e
                    tot += max(e, 0.0) + np.log1p(np.exp(-abs(e))) - yg[r] * e
                fc = tot / ng + 0.5 * ridge * pen
                if fc <= f - 0.25 * t * dec or t < 1e-12:
                    break
                t *= 0.5
            b[:] = cand
            f = fc
        for j in range(p):
            out[g, j] = 0.0 if drop[j] else b[j] / scale[j]
    return out


def _reference_fit(Xg: np.ndarray, yg: np.ndarray, ridge: float, max_iter: int,
                   tol: float) -> np.ndarray:
    n_g, p = Xg.shape
    scale = np.sqrt((Xg**2).mean(axis=0))
    scale[~(scale > 0) | ~np.isfinite(scale)] = 1.0
    span = Xg.max(axis=0) - Xg.min(axis=0)
    const = span <= _CONST_REL * np.abs(Xg).max(axis=0)
    first = [j for j in np.flatnonzero(const) if Xg[0, j] != 0.0][:1]
    drop = const.copy()
    drop[first] = False
    A = np.where(drop, 0.0, Xg / scale)

    def objective(b):
        eta = A @ b
        return np.mean(np.logaddexp(0.0, eta) - yg * eta) + 0.5 * ridge * (b @ b)

    b = np.zeros(p)
    f = objective(b)
    for _ in range(max_iter):
        mu = 1.0 / (1.0 + np.exp(-(A @ b)))
        g = A.T @ (mu - yg) / n_g + ridge * b
        H = (A.T * (mu * (1.0 - mu))) @ A / n_g + ridge * np.eye(p)
        step = np.linalg.solve(H, g)
        dec = float(g @ step)
        if dec / 2.0 <= tol:
            break
        t = 1.0
        while True:
            cand = b - t * step
            fc = objective(cand)
            if fc <= f - 0.25 * t * dec or t < 1e-12:
                break
            t *= 0.5
        b, f = cand, fc
    return np.where(drop, 0.0, b / scale)


def group_logistic_reference(X: np.ndarray, y: np.ndarray, labels: np.ndarray, m: int,
                             ridge: float = DEFAULT_RIDGE, max_iter: int = 100,
                             tol: float = 1e-20) -> np.ndarray:
    """Plain numpy reference for :func:`group_logistic` (a Python loop over groups)."""
    out = np.zeros((m, X.shape[1]))
    for g in range(m):
        rows = labels == g
        if rows.any():
            out[g] = _reference_fit(X[rows], y[rows], ridge, max_iter, tol)
    return out


watch_compiles()   # the first real compile says so on stderr (see runtime.compile_notice)
