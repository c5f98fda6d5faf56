"""The Lasso path of one small group by homotopy (LARS with the Lasso modification), numba.

SubLasso's groups hold about p rows each (``m = n_hat / p``), so their columns are nearly
collinear and coordinate descent needs thousands of sweeps per group (diamonds: median 500,
up to 30,000, often stopping at its sweep limit before converging). The Lasso solution is
piecewise linear in the penalty (Efron et al. 2004; Osborne, Presnell & Turlach 2000): between
breakpoints the active set and signs are fixed and

    beta_A(alpha) = beta_A(alpha_0) + (alpha_0 - alpha) * w,   G_AA w = s_A,

where ``G = X'X / n`` and ``s_A`` are the signs of the active correlations. A breakpoint is
where an inactive column's correlation reaches ``alpha`` (it joins) or an active coefficient
reaches 0 (it leaves). Following these breakpoints gives the *exact* solution at every alpha of
:func:`dpstats._kernels.lasso.lasso_topk_support`'s grid in about k steps of O(d n_g) each.

:func:`homotopy_at_grid` returns False when the path is degenerate (collinear active columns,
or too many steps); the caller then falls back to coordinate descent for that group.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .runtime import watch_compiles

__all__ = ["homotopy_at_grid"]

#: A Cholesky pivot below this times the diagonal means collinear active columns.
_PIVOT_REL = 1e-10
#: A column that just left may not rejoin within this fraction of alpha (its own breakpoint,
#: up to rounding); it may rejoin later, e.g. on the other sign's boundary.
_REJOIN_REL = 1e-9
#: Steps allowed per active-set size bound before giving up (drops can add steps).
_STEPS_PER_TARGET = 8


@njit(cache=True, boundscheck=False)
def homotopy_at_grid(Xt, y, keep, alpha_max, target, n_alphas, min_ratio, beta):
    """Exact Lasso solution at the first grid alpha with ``>= target`` non-zeros.

    ``Xt`` (d x n) holds centred columns with unit RMS (zero rows for columns not in ``keep``),
    ``y`` is centred; the objective is ``||y - X b||^2 / (2 n) + alpha ||b||_1`` and the grid
    is ``alpha_max * min_ratio ** (i / (n_alphas - 1))``, ``i = 1 .. n_alphas - 1``. Writes the
    solution at the first grid alpha whose solution has at least ``target`` non-zeros (or at
    the last grid alpha) into ``beta`` and returns True; returns False (``beta`` undefined)
    when the path is degenerate.
    """
    d, n = Xt.shape
    G = np.empty((d, d))
    have = np.zeros(d, dtype=np.bool_)
    c = np.empty(d)                                # current correlations x_j'r / n
    for j in range(d):
        beta[j] = 0.0
        s = 0.0
        if keep[j]:
            for r in range(n):
                s += Xt[j, r] * y[r]
        c[j] = s / n
    active = np.empty(d, dtype=np.int64)
    is_active = np.zeros(d, dtype=np.bool_)
    sign = np.zeros(d)
    w = np.empty(d)
    L = np.empty((d, d))
    a_dir = np.empty(d)
    n_active = 0
    alpha = alpha_max
    grid_i = 1
    next_grid = alpha_max * min_ratio ** (grid_i / (n_alphas - 1))
    joining = -1
    dropped = -1                                   # may not rejoin at its own breakpoint
    best = 0.0
    for j in range(d):                             # the first to join: largest |c| (lowest j)
        if keep[j] and abs(c[j]) > best:
            best = abs(c[j])
            joining = j
    if joining < 0:
        return True                                # nothing correlates: beta = 0
    # (one function: the Gram columns and the Cholesky solve are written inline, since every
    # separate kernel costs its own compile on a cold cache)
    for _ in range(_STEPS_PER_TARGET * (target + 2)):
        if joining >= 0:
            if not have[joining]:                  # Gram column of the joining feature
                for i in range(d):
                    s = 0.0
                    for r in range(n):
                        s += Xt[i, r] * Xt[joining, r]
                    G[i, joining] = s / n
                have[joining] = True
            active[n_active] = joining
            is_active[joining] = True
            sign[joining] = 1.0 if c[joining] > 0 else -1.0
            n_active += 1
        # direction: solve G_AA w = s_A by Cholesky; a (nearly) singular G_AA is degenerate
        for a in range(n_active):
            ja = active[a]
            for b in range(a + 1):
                jb = active[b]
                t = G[ja, jb]
                for q in range(b):
                    t -= L[a, q] * L[b, q]
                if a == b:
                    if t <= _PIVOT_REL * G[ja, ja]:
                        return False
                    L[a, a] = math.sqrt(t)
                else:
                    L[a, b] = t / L[b, b]
        for a in range(n_active):                  # forward: L z = s
            t = sign[active[a]]
            for q in range(a):
                t -= L[a, q] * w[q]
            w[a] = t / L[a, a]
        for a in range(n_active - 1, -1, -1):      # backward: L' w = z
            t = w[a]
            for q in range(a + 1, n_active):
                t -= L[q, a] * w[q]
            w[a] = t / L[a, a]
        for j in range(d):                         # a_j = G_jA w
            t = 0.0
            for q in range(n_active):
                t += G[j, active[q]] * w[q]
            a_dir[j] = t
        gamma = alpha                              # step in alpha to the next breakpoint
        joining = -1
        leaving = -1
        for j in range(d):
            if not keep[j] or is_active[j]:
                continue
            floor = _REJOIN_REL * alpha if j == dropped else 0.0
            if 1.0 - a_dir[j] > 0.0:
                g = (alpha - c[j]) / (1.0 - a_dir[j])
                if floor < g < gamma:
                    gamma, joining = g, j
            if 1.0 + a_dir[j] > 0.0:
                g = (alpha + c[j]) / (1.0 + a_dir[j])
                if floor < g < gamma:
                    gamma, joining = g, j
        for q in range(n_active):
            j = active[q]
            if w[q] * beta[j] < 0.0:
                g = -beta[j] / w[q]
                if 0.0 < g < gamma:
                    gamma, joining, leaving = g, -1, q
        low = alpha - gamma                        # this segment is (low, alpha]
        while next_grid > low and grid_i < n_alphas:
            if n_active >= target or grid_i == n_alphas - 1:
                step = alpha - next_grid
                for q in range(n_active):
                    beta[active[q]] += step * w[q]
                return True
            grid_i += 1
            next_grid = alpha_max * min_ratio ** (grid_i / (n_alphas - 1))
        for q in range(n_active):                  # move to the breakpoint
            beta[active[q]] += gamma * w[q]
        for j in range(d):
            c[j] -= gamma * a_dir[j]
        alpha = low
        dropped = -1
        if leaving >= 0:                           # an active coefficient reached zero
            j = active[leaving]
            dropped = j
            beta[j] = 0.0
            is_active[j] = False
            for q in range(leaving, n_active - 1):
                active[q] = active[q + 1]
            n_active -= 1
        elif joining < 0:
            return False                           # no breakpoint left before alpha = 0
    return False


watch_compiles()   # counts real compiles (runtime.compile_stats; the notice is prepare.py)
