"""The restricted exponential mechanism over approximate Tukey depth (002 Algorithms 3-4).

**The output lives on a public grid.** A point drawn in floating point uniformly from a
data-dependent box (``lo + (hi - lo) U``) has low bits that depend on the box's edges: a value
can be possible under one data set and impossible under its neighbour (the gap-in-support
channel of Mironov 2012 that the grid noise of :mod:`dpstats.mechanisms.noise` closes for
additive noise). Here the base set of the exponential mechanism is the lattice ``GRID * Z^p``
with ``GRID = 2^-1074`` (:data:`dpstats._kernels.depth.GRID`), a public constant:

* every finite float64 is a multiple of ``GRID``, so the depth boxes' edges (float64 model
  coordinates) lie exactly on the grid and nothing is rounded before sampling;
* the mechanism is the exponential mechanism over the countable set of grid points of depth
  ``>= t``, with counting measure: ``P(y) ~ exp(eps s(y) / c)``, ``s(y) = min(depth(y), D)``
  and ``D = floor(m/2)`` public. (The cap only matters on ties: with m odd, the coordinate-wise
  median of the models is one grid point of depth ``D + 1``; it belongs to the depth-``D``
  box, which is sampled whole. Lebesgue measure never saw it.) The score of a grid point
  changes by at most 1 between neighbours, whatever the base measure, and the PTR lemmas
  (002 Lemma 3.6, 003 Lemma 8.5) only use the base measure's additivity and monotonicity on
  nested boxes, so they hold with *numbers of grid points* in place of volumes. Both the test
  (:func:`dpstats.mechanisms.ptr.ptr_check`) and this mechanism use the same counts, from
  :func:`dpstats._kernels.depth.log_widths` (``b - a + GRID`` per side);
* the chosen grid point is drawn exactly: integer grid indices of the box ends (exact, from
  each float's integer ratio) and uniform integers of any size
  (:func:`dpstats.mechanisms.discrete.uniform_below`). Only the last step is float: the grid
  point ``k * GRID`` is rounded to the nearest float64 (CPython's ``int / int`` is correctly
  rounded), a fixed function of the released grid point, i.e. post-processing.

The choices of a depth and of a shell are indices drawn by Gumbel-max on float64 log weights,
as every exponential mechanism in dpstats (see :mod:`dpstats.mechanisms.noise`): float error
perturbs their probabilities by relative amounts near ``2^-50`` and every index keeps positive
probability, so no support leaks. The grid costs no utility: a side of width ``w`` holds
``w / GRID + 1`` points, so the weights are the volumes of before up to one cell per side
(``2^-1074``), bit-identical in float64 for widths above ``2^-1020``.

**The sampled depth is not released.** It is a data-dependent statistic the point does not
determine (a neighbour can make one depth far more likely), so :func:`restricted_tukey_em`
returns the point only.
"""

from __future__ import annotations

import math

import numpy as np

from .._kernels.depth import GRID, log_depth_volumes, log_exact_volumes, max_depth
from . import noise as _noise
from .accountant import Ledger
from .choice import exponential
from .discrete import uniform_below

__all__ = ["restricted_tukey_em", "sample_point_with_depth", "grid_index", "grid_value", "GRID"]

#: ``1 / GRID`` as an exact integer: grid index ``k`` is the value ``k / _PER_UNIT``.
_PER_UNIT = 1 << 1074


def grid_index(x: float) -> int:
    """The integer ``k`` with ``x = k * GRID``, exactly (every finite float64 is one).

    >>> grid_index(1.5) == 3 * 2**1073, grid_index(-GRID)
    (True, -1)
    """
    num, den = float(x).as_integer_ratio()      # den is a power of two <= 2^1074
    return num * (_PER_UNIT // den)


def grid_value(k: int) -> float:
    """The float64 nearest to the grid point ``k * GRID`` (post-processing of ``k``)."""
    return int(k) / _PER_UNIT


def _log_count(n: int) -> float:
    return math.log(n) if n > 0 else -math.inf


def _shell_log_counts(A, B, A2, B2) -> np.ndarray:
    """Log numbers of grid points of the p shells ``C_j`` (exact integer counts, then log).

    ``C_j``: coordinates ``< j`` in the inner side ``[A2, B2]``, coordinate ``j`` in the outer
    side minus the inner one, coordinates ``> j`` in the outer side ``[A, B]`` (grid indices).
    """
    p = len(A)
    log_out = [_log_count(B[j] - A[j] + 1) for j in range(p)]
    log_in = [_log_count(B2[j] - A2[j] + 1) for j in range(p)]
    log_shell = [_log_count((A2[j] - A[j]) + (B[j] - B2[j])) for j in range(p)]
    before = np.concatenate(([0.0], np.cumsum(log_in)[:-1]))
    after = np.concatenate((np.cumsum(log_out[::-1])[::-1][1:], [0.0]))
    return before + np.array(log_shell) + after


def sample_point_with_depth(S: np.ndarray, i: int, rng: np.random.Generator) -> np.ndarray:
    """Uniform grid point of approximate Tukey depth **exactly** ``i`` (002 Alg. 4).

    The grid points of the region split into p disjoint box shells ``C_j``: depth > i in
    coordinates < j, exactly i in coordinate j, >= i in coordinates > j. For ``i = D`` the
    region is the whole depth-``D`` box (the score is capped at ``D``). A shell is chosen with
    probability proportional to its number of grid points, then a uniform grid point of it, by
    exact uniform integers; so every grid point of the region has the same probability. The
    result is that grid point rounded to float64 (see the module docstring).
    """
    m, p = S.shape
    D = max_depth(m)
    if not (1 <= i <= D):
        raise ValueError(f"depth must be in 1..{D}; got {i}")
    A = [grid_index(v) for v in S[i - 1]]
    B = [grid_index(v) for v in S[m - i]]
    if i == D:          # no deeper region: the whole box
        u = uniform_below([b - a + 1 for a, b in zip(A, B, strict=True)], rng)
        return np.array([grid_value(a + v) for a, v in zip(A, u, strict=True)])
    A2 = [grid_index(v) for v in S[i]]
    B2 = [grid_index(v) for v in S[m - i - 1]]
    log_c = _shell_log_counts(A, B, A2, B2)
    if not np.isfinite(log_c).any():
        raise ValueError("the region of this depth has no grid point")
    noisy = log_c + _noise.gumbel_noise(1.0, p, rng)
    noisy[~np.isfinite(log_c)] = -np.inf
    js = int(np.argmax(noisy))
    a_left = A2[js] - A[js]                       # grid points in [lo, lo2)
    bounds = [B2[j] - A2[j] + 1 for j in range(js)] + [a_left + (B[js] - B2[js])] \
        + [B[j] - A[j] + 1 for j in range(js + 1, p)]
    u = uniform_below(bounds, rng)
    ks = [A2[j] + u[j] for j in range(js)]
    ks.append(A[js] + u[js] if u[js] < a_left else B2[js] + 1 + (u[js] - a_left))
    ks += [A[j] + u[j] for j in range(js + 1, p)]
    return np.array([grid_value(k) for k in ks])


def restricted_tukey_em(S: np.ndarray, t: int, eps: float, rng: np.random.Generator,
                        ledger: Ledger | None = None, *, delta: float = 0.0,
                        monotone: bool = False, stage: str | None = None,
                        note: str = "") -> np.ndarray | None:
    """Sample a grid point of high approximate Tukey depth, restricted to depth >= t.

    Chooses depth ``i`` in ``{t, ..., floor(m/2)}`` with probability proportional to
    ``W_i exp(eps i / c)`` by Gumbel-max on log weights (``W_i`` the number of grid points of
    depth exactly i, in units of ``GRID^p``), then a uniform grid point of exactly that depth:
    together, each grid point ``y`` of depth ``>= t`` has probability proportional to
    ``exp(eps min(depth(y), D) / c)``, the exponential mechanism over the grid (module
    docstring). Depth changes by at
    most 1 when one row is added or removed (that changes one model). ``c = 2`` by default:
    replacing a model can raise the depth in one region and lower it in another, so the score
    is not monotone. ``monotone=True`` (c = 1) is the form of 002 section 7.3, valid when a
    neighbour adds or removes a whole model. Only (eps, delta)-DP once a PTR test has passed
    (``delta`` is charged here for that reason).

    The chosen depth stays inside: it is not a function of the released point's law alone
    and is never returned.

    Parameters
    ----------
    S : (m, p) array
        Models sorted per coordinate (after tie-breaking jitter).
    t : int
        Depth restriction.
    note : str
        Appended to the ledger entry's detail (e.g. :data:`dpstats.mechanisms.ptr.PAPER_NOTE`).

    Returns
    -------
    The point (float64 array of shape (p,)), or None if no admissible region has a grid point.
    """
    m = S.shape[0]
    D = max_depth(m)
    logW = log_exact_volumes(log_depth_volumes(S))
    depths = np.arange(t, D + 1)
    if ledger is not None:
        ledger.charge("restricted exponential", eps, delta, stage=stage,
                      detail=f"Tukey depth >= {t} of {D}; score sensitivity 1"
                             + (", monotone" if monotone else "") + note)
    log_base = logW[t:D + 1]
    if depths.size == 0 or not np.isfinite(log_base).any():
        return None
    k = exponential(depths.astype(float), 1.0, eps, rng, None, log_base=log_base,
                    monotone=monotone)
    return sample_point_with_depth(S, int(depths[k]), rng)
