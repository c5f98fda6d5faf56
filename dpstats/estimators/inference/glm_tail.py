"""What a private clipping box moves in a logistic fit, from released counts only.

dp_glm's objective perturbation fits the features clipped to the box released by the
log-histogram bounds (:func:`dpstats.estimators.bounds_release.histogram_bounds`). The box
ends at the outermost cell whose noisy count clears the detection threshold, so it cuts the
rows of sparser cells beyond it: the long right tail of a skewed covariate, and even the
outer 0.5-1% on each side of a Gaussian one. The clipped fit estimates the coefficients of
the clipped inputs, not the model's; :mod:`.glm`'s bootstrap covers the former, and the gap
(the intercept for a one-sided tail, the slope for a two-sided one) is of the order of the
standard error at 20,000 rows (design-notes.md, issue 16).

Neighbours: add/remove one row. Nothing here is released or charged: it reads the noisy
histograms the bounds already released (kept as :class:`~dpstats.estimators.bounds_release.
HistCounts` on the design's bounds), the released box, Fisher information and coefficients.
Post-processing.

**The move** (an omitted-variable bias). On the fitted scale (rows ``u_i`` divided by
``s``) the model's linear predictor of a cut row is ``u_i . theta + theta_j d_ij``, ``d_ij``
the part of feature ``j`` the box cut (in half-widths, divided by ``s``). The clipped fit's
score at ``theta`` is then ``g = sum_i [sigmoid(u_i . theta + theta_j d_ij) -
sigmoid(u_i . theta)] u_i`` over the cut rows, and the clipped fit's coefficients are about
``theta + C^-1 g`` (``C`` the Fisher information). :func:`tail_score` estimates ``g`` from
released values: per feature and side, the noisy counts of the cells beyond the box and their
centres' distances from it (:meth:`HistCounts.tail`, cells up to :data:`TAIL_MOVE`
half-widths beyond it) give the cut rows and their ``d_ij``; each cut row's ``u_i`` is the
mean fitted row (``C[:, 0] / C_00``, information-weighted) with feature ``j`` at its box
edge. The sigmoid's difference, not its first-order term ``w_i theta_j d_ij``: the cut rows
sit where the linear predictor is far from 0 and their weights are small (first order
doubled the slopes' move in the simulation below). :mod:`.glm` adds ``C_k^-1 g`` to each
draw's bias, so the intervals hold the model's coefficients, not only the clipped
fit's. A side whose released sum does not clear :data:`TAIL_Z` sd of its noise is left
out. The counts are noisy (the cells past the box are sparse: their noise is of the
order of the signal) and ``g`` is linear in them, so each plausible information ``C_k`` gets
its own plausible counts (the released ones minus a fresh draw of their noise, as the
parametric bootstrap of :mod:`.glm` treats the information), at :data:`TAIL_SPREAD` times
their noise: the estimate's approximations (the mean row, the cells' centres, the reach) err
by about as much again, and :mod:`.glm` centres these fits at the estimated move.

:data:`TAIL_MOVE`: cells whose inner edge lies within 2 half-widths of the box. Derived by
data-independent simulation: for the centred log-normal covariate of
``benchmarks/glm_coverage.py`` (sigma 0.75, 4e6 draws), whose released box at 20,000 rows
ends at 2.4-3.4 sd with half-widths of 1.8-2.3 sd, the rows within 2 half-widths of the box
carry 67-73% of the cut distance ``sum (x - hi)+`` (within 1: 36-41%), while the logistic
move of a row saturates with its distance; a Gaussian covariate's cut lies within one
half-width (99.8%). Each further cell adds a full cell's noise to a sum of a few hundred
rows. In the skewed cell (500 fits, design-notes.md) reach 0.5 / 1 / 2 gave the intercept
0.877 / 0.915 / 0.960. The farther tail is left out: the move is an estimate, not a bound.
"""

from __future__ import annotations

import math

import numpy as np

from ...mechanisms.simulation import released_seed, simulation_noise

__all__ = ["TAIL_MOVE", "TAIL_SPREAD", "tail_score", "tail_bias"]

#: How far beyond the box (in half-widths) released cells count toward the cut tail.
TAIL_MOVE = 2.0
#: A side of a column enters the move only when its released sum ``count @ move`` clears
#: this many sd of its noise (``sigma ||move||``): below it the estimate is noise, and a noisy
#: shift in each fit's draws cost Gaussian cells coverage (n = 100,000: worst 0.934 -> 0.918
#: without the gate, 0.934 with it; design-notes.md).
TAIL_Z = 3.0
#: The plausible tails' spread in units of the counts' noise. The move's estimate errs by more
#: than the counts' noise: over the skewed cell's 439 fits with a move (benchmarks/
#: glm_coverage.py, n 20,000, eps 1), sd(clipped fit - truth - estimated move) against the
#: sampling sd leaves 0.021-0.044 (original scale) for the estimate's own error, 1.5-2.3 times
#: the draws' median spread (0.0095-0.020). At 1 the centred fits' z sd reached 1.12 (worst
#: coefficient 0.916); at 2 0.89-1.05 (design-notes.md, "the cut tail's fits centred").
TAIL_SPREAD = 2.0
#: Plausible tails drawn (one per plausible information of :mod:`.glm`, cycled).
TAIL_DRAWS = 200
#: The salt of the plausible tails' seed (public; distinct from the other bootstraps').
SEED = 16_2027


def tail_score(design, kept, s: float, C: np.ndarray, theta: np.ndarray,
               draws: int = TAIL_DRAWS) -> np.ndarray | None:
    """``(draws, len(kept))`` plausible scores ``g`` on the fitted scale (module docstring):
    ``g`` is linear in the released counts, and each draw takes the counts minus a fresh
    Gaussian of the released noise sd (its seed a function of the released counts,
    information and coefficients: each fit its own draws), so the draws carry the tail's
    noise into the intervals. None when no column's box was released as a histogram, or
    without an intercept among ``kept``.

    ``design`` the :class:`~dpstats.estimators.bounded.BoundedDesign`, ``kept`` its fitted
    columns (design indices), ``s`` the row scale, ``C`` the released Fisher information on
    them and ``theta`` the released coefficients (fitted scale).
    """
    kept = list(kept)
    hist = getattr(design.bounds, "hist", None)
    icol = design.intercept_col
    cols = {} if hist is None else {j: r for j, r in hist.cols.items() if j in kept}
    if not cols or icol not in kept:
        return None
    C = (np.asarray(C, dtype=np.float64) + np.asarray(C, dtype=np.float64).T) / 2.0
    theta = np.asarray(theta, dtype=np.float64)
    i0 = kept.index(icol)
    if not C[i0, i0] > 0:
        return None
    u_bar = C[:, i0] / C[i0, i0] / s                    # the mean fitted row
    counts, rows = [], []                               # g = counts @ rows
    for j, row in cols.items():
        half = float(design.half[j])
        if not (half > 0 and math.isfinite(half)):
            continue
        k = kept.index(j)
        for (count, dist), edge in zip(hist.tail(row, design.clip_lo[j], design.clip_hi[j],
                                                 TAIL_MOVE * half), (1.0, -1.0), strict=True):
            u = u_bar.copy()
            u[k] = edge / s
            eta = float(u @ theta)
            move = _sigmoid(eta + theta[k] * edge * dist / half / s) - _sigmoid(eta)
            if not abs(float(count @ move)) > TAIL_Z * hist.sigma * np.linalg.norm(move):
                continue                                 # the side's counts are noise
            counts.append(count)
            rows.append(move[:, None] * u[None, :])
    if not counts:
        return None
    counts, rows = np.concatenate(counts), np.vstack(rows)
    seed = released_seed(counts, C, theta, salt=SEED)    # released values: fits differ
    xi = simulation_noise({"tail": (draws, counts.size)}, seed=seed)["tail"]
    return (counts[None, :] - TAIL_SPREAD * hist.sigma * xi) @ rows


def _sigmoid(t):
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(t, dtype=np.float64)))


def tail_bias(Cs: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``C_k^-1 g_k`` for each plausible information ``C_k`` and score ``g_k`` (``(K, p)``;
    ``g`` has at least ``K`` rows, or one): the clipped fit's coefficients minus the model's,
    on the fitted scale.

    >>> tail_bias(np.array([np.eye(2) * 4.0]), np.array([[1.0, 2.0]])).tolist()
    [[0.25, 0.5]]
    """
    g = np.atleast_2d(g)
    g = np.broadcast_to(g[:1], Cs.shape[:2]) if g.shape[0] == 1 else g[:Cs.shape[0]]
    return np.linalg.solve(Cs, g[..., None])[..., 0]
