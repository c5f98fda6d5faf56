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

from .._kernels.depth import GRID, depth_sides, log_depth_volumes, log_exact_volumes, max_depth
from . import noise as _noise
from .accountant import Ledger
from .choice import exponential
from .discrete import uniform_below

__all__ = ["restricted_tukey_em", "sample_point_with_depth", "sort_with_neutral_votes",
           "neutral_cap", "grid_index", "grid_value", "GRID"]

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


def _shell_log_counts(out_n, in_n) -> np.ndarray:
    """Log numbers of grid points of the p shells ``C_j`` (exact integer counts, then log).

    ``C_j``: coordinates ``< j`` in the inner side, coordinate ``j`` in the outer side minus
    the inner one, coordinates ``> j`` in the outer side; ``out_n`` / ``in_n`` are the
    numbers of grid points of the outer / inner sides (``in_n`` 0 for an empty inner side).
    """
    p = len(out_n)
    log_out = [_log_count(out_n[j]) for j in range(p)]
    log_in = [_log_count(in_n[j]) for j in range(p)]
    log_shell = [_log_count(out_n[j] - in_n[j]) for j in range(p)]
    before = np.concatenate(([0.0], np.cumsum(log_in)[:-1]))
    after = np.concatenate((np.cumsum(log_out[::-1])[::-1][1:], [0.0]))
    return before + np.array(log_shell) + after


def _grid_sides(S: np.ndarray, i: int):
    """Grid indices ``(A, B)`` of the sides of the region of depth >= i, or None per empty
    coordinate; refuses unbounded sides (the mechanism never samples depths that have one)."""
    lo, hi, empty = depth_sides(S, [i])
    if not (np.isfinite(lo) | empty).all() or not (np.isfinite(hi) | empty).all():
        raise ValueError(f"the region of depth >= {i} is unbounded")
    A = [None if e else grid_index(v) for v, e in zip(lo[0], empty[0], strict=True)]
    B = [None if e else grid_index(v) for v, e in zip(hi[0], empty[0], strict=True)]
    return A, B


def sample_point_with_depth(S: np.ndarray, i: int, rng: np.random.Generator) -> np.ndarray:
    """Uniform grid point of approximate Tukey depth **exactly** ``i`` (002 Alg. 4).

    The grid points of the region split into p disjoint box shells ``C_j``: depth > i in
    coordinates < j, exactly i in coordinate j, >= i in coordinates > j. For ``i = D`` the
    region is the whole depth-``D`` box (the score is capped at ``D``). A shell is chosen with
    probability proportional to its number of grid points, then a uniform grid point of it, by
    exact uniform integers; so every grid point of the region has the same probability. The
    result is that grid point rounded to float64 (see the module docstring). Columns of ``S``
    may hold neutral (``+-inf``) and non-voting (``NaN``) entries
    (:func:`sort_with_neutral_votes`); a coordinate whose region of depth ``i + 1`` is empty
    then has the whole side of depth ``i`` as its shell.
    """
    m, p = S.shape
    D = max_depth(m)
    if not (1 <= i <= D):
        raise ValueError(f"depth must be in 1..{D}; got {i}")
    A, B = _grid_sides(S, i)
    if any(a is None for a in A):
        raise ValueError("the region of this depth has no grid point")
    out_n = [b - a + 1 for a, b in zip(A, B, strict=True)]
    if i == D:          # no deeper region: the whole box
        u = uniform_below(out_n, rng)
        return np.array([grid_value(a + v) for a, v in zip(A, u, strict=True)])
    A2, B2 = _grid_sides(S, i + 1)
    in_n = [0 if a is None else b - a + 1 for a, b in zip(A2, B2, strict=True)]
    log_c = _shell_log_counts(out_n, in_n)
    if not np.isfinite(log_c).any():
        raise ValueError("the region of this depth has no grid point")
    noisy = log_c + _noise.gumbel_noise(1.0, p, rng)
    noisy[~np.isfinite(log_c)] = -np.inf
    js = int(np.argmax(noisy))
    bounds = in_n[:js] + [out_n[js] - in_n[js]] + out_n[js + 1:]
    u = uniform_below(bounds, rng)
    ks = [A2[j] + u[j] for j in range(js)]
    if in_n[js] == 0:                             # empty inner side: the whole outer side
        ks.append(A[js] + u[js])
    else:
        a_left = A2[js] - A[js]                   # grid points in [lo, lo2)
        ks.append(A[js] + u[js] if u[js] < a_left else B2[js] + 1 + (u[js] - a_left))
    ks += [A[j] + u[j] for j in range(js + 1, p)]
    return np.array([grid_value(k) for k in ks])


def neutral_cap(t: int) -> int:
    """Largest number of neutral vote pairs per coordinate, ``H = max(0, min(t // 2, t - 2))``
    (public: a function of the public restriction ``t``).

    Coordinate j's region of depth ``>= i`` is bounded exactly when ``i > h_j`` and
    ``h_j <= H``, so every region the mechanism samples (depth ``>= t``) and every exact-depth
    volume the PTR lemma sums (depth ``>= t - 1``) is bounded, while the lemma still has the
    depths ``H + 1 .. t - 1`` (about ``t / 2`` of them) to certify a distance.

    >>> neutral_cap(1), neutral_cap(3), neutral_cap(100)
    (0, 1, 50)
    """
    return max(0, min(t // 2, t - 2))


def sort_with_neutral_votes(models: np.ndarray, identified: np.ndarray, t: int) -> np.ndarray:
    """Sorted model columns in which a model votes only in the coordinates its group
    identifies (the depth score of :func:`restricted_tukey_em` on *partial models*).

    A group whose rows do not identify coordinate j (a factor level absent from the group,
    a column constant in it) has an arbitrary value there (the minimum-norm gauge, usually 0);
    counting it as a vote pulls the coordinate towards that value. Here, with ``m_j`` models
    identifying j and ``u_j = m - m_j`` not, the depth of a point ``y`` in coordinate j is

        ``d_j(y) = min(#{identified b_gj <= y_j}, #{identified b_gj >= y_j}) + h_j``,
        ``h_j = min(floor(u_j / 2), H)``,  ``H = neutral_cap(t)``,

    i.e. ``h_j`` non-identifying models vote "below" and ``h_j`` vote "above" every point
    (entries ``-inf`` / ``+inf``), the others not at all (``NaN``); the score is
    ``min(D, min_j d_j(y))`` with ``D = floor(m/2)`` as before. The neutral votes centre every
    coordinate's depth ladder on the median of its identified values, so a coordinate known to
    a third of the groups still reaches depths near ``D``. With every coordinate identified
    (``u_j = 0``) this is :func:`dpstats.estimators.tukey.linear.jitter_sort` exactly.

    **Privacy (add/remove one row).** With random group labels and m fixed, one row changes
    one group: that model's values *and its identification set* may change. Treat this as
    removing the model, then adding the new one. Removing a model lowers, in each coordinate,
    either a count of identified values (if it identified j) or ``u_j`` by one, hence ``h_j``
    by 0 or 1; either way ``d_j(y)`` falls by 0 or 1 at every ``y``, and so does the score.
    Adding is the mirror image. So the score is monotone with sensitivity 1 under
    add/remove of one (partial) model and has sensitivity 1 under one row, exactly the two
    properties the analysis of the full-model mechanism uses (:func:`restricted_tukey_em`'s
    factor 2, the PTR lemmas' nesting ``V_{i+1}(D) <= V_i(D') <= V_{i-1}(D)`` of the
    regions ``{score >= i}``, and ``ptr_parameters``' replacement argument). The regions are
    still boxes whose grid-point counts the test and the mechanism read from the same
    sorted columns (:func:`dpstats._kernels.depth.depth_sides`); a box may now be unbounded
    (depth ``<= h_j``: infinite count, which only makes the lemma's condition fail) or empty
    (depth above ``m_j/2 + h_j``). The identification set must be a function of the group's
    own rows only (it is: :func:`dpstats._kernels.tukey_identify.group_identified`).

    Parameters
    ----------
    models : (m, p) array
        The models after the tie-breaking jitter (unsorted).
    identified : (m, p) bool array
        Whether group g identifies coordinate j.
    t : int
        The public depth restriction.

    Returns
    -------
    (m, p) array, each column sorted: ``-inf`` entries, identified values, ``+inf``, ``NaN``.

    >>> b = np.array([[1.0, 5.0], [2.0, 0.0], [3.0, 7.0], [4.0, 0.0]])
    >>> ok = np.array([[True, True], [True, False], [True, True], [True, False]])
    >>> sort_with_neutral_votes(b, ok, t=4)[:, 1]
    array([-inf,   5.,   7.,  inf])
    """
    models = np.asarray(models, dtype=np.float64)
    ok = np.asarray(identified, dtype=bool) & ~np.isnan(models)
    m = models.shape[0]
    cap = neutral_cap(t)
    out = np.where(ok, models, np.nan)
    for j in np.flatnonzero(~ok.all(axis=0)):
        h = min((m - int(ok[:, j].sum())) // 2, cap)
        col = np.sort(models[ok[:, j], j])
        out[:, j] = np.concatenate((np.full(h, -np.inf), col, np.full(h, np.inf),
                                    np.full(m - col.size - 2 * h, np.nan)))
    done = ok.all(axis=0)
    out[:, done] = np.sort(out[:, done], axis=0)
    return out


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
