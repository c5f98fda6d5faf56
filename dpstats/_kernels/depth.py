"""Approximate Tukey depth regions of a set of models, in log space (pure numpy).

For m models in R^p sorted per coordinate into ``S`` (shape (m, p), column j sorted), the
region of approximate Tukey depth >= i (i = 1..D, D = floor(m/2)) is the box with sides
``[S[i-1, j], S[m-i, j]]`` (002 Lemma 3.3). All volumes are returned as logarithms: products
of p widths under/overflow float64 long before p = 100.

**Volumes count grid points.** The Tukey mechanism releases a point of the public grid
``GRID * Z^p`` (``GRID = 2^-1074``; see :mod:`dpstats.mechanisms.tukey_em`), so the measure of a
region is its number of grid points times ``GRID^p``. Every finite float64 is a multiple of
``GRID``, so the sides' ends lie on the grid and a closed side ``[a, b]`` holds exactly
``(b - a) / GRID + 1`` grid points: its "width" is ``b - a + GRID``. For any side wider than
``2^-1020`` that is ``b - a`` bit for bit in float64; a tie (``a == b``) holds one point.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["depth_sides", "log_widths", "log_depth_volumes", "log_exact_volumes",
           "approx_tukey_depth", "max_depth", "GRID"]

#: Step of the public grid the Tukey mechanism samples on: 2^-1074, the smallest positive
#: float64, of which every finite float64 is an integer multiple.
GRID = math.ulp(0.0)


def max_depth(m: int) -> int:
    """Largest depth with a region of positive volume: floor(m/2)."""
    return m // 2


def depth_sides(S: np.ndarray, depths) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ends of the sides of the regions of depth >= i, for the depths ``i`` given.

    Returns ``(lo, hi, empty)``, each of shape ``(len(depths), p)``: coordinate j of the
    region of depth >= i is ``[lo, hi]`` (``+-inf`` when unbounded) unless ``empty``. Columns
    may hold non-voting ``NaN`` entries (module docstring).
    """
    m, p = S.shape
    i = np.asarray(depths, dtype=np.int64)[:, None]
    L = m - np.isnan(S).sum(axis=0)[None, :]
    lo_at = i - 1
    hi_at = L - i
    empty = lo_at > hi_at
    cols = np.arange(p)[None, :]
    lo = S[np.clip(lo_at, 0, m - 1), cols]
    hi = S[np.clip(hi_at, 0, m - 1), cols]
    return lo, hi, empty


def log_widths(S: np.ndarray) -> np.ndarray:
    """``L[i-1, j] = log(S[m-i, j] - S[i-1, j] + GRID)`` for depths i = 1..D: the log of
    ``GRID`` times the number of grid points on the side (``log(GRID)`` for a tie; ``+inf``
    for an unbounded side, ``-inf`` for an empty one). Columns with non-voting ``NaN`` entries
    use their own length (:func:`depth_sides`).

    The float64 subtraction and addition are each within a relative ``2^-53`` of the exact
    count, so the log is within about ``2^-52`` of the exact log count (absolute).
    """
    m = S.shape[0]
    D = max_depth(m)
    if not np.isnan(S).any():
        w = S[::-1][:D] - S[:D]
        with np.errstate(invalid="ignore"):
            return np.log(w + GRID)
    lo, hi, empty = depth_sides(S, np.arange(1, D + 1))
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.log(hi - lo + GRID)
    out[empty] = -np.inf
    return out


def log_depth_volumes(S: np.ndarray) -> np.ndarray:
    """``logV[i]`` = log volume of the region of depth >= i, for i = 0..D+1.

    ``logV[0] = +inf`` (depth >= 0 is all of R^p) and ``logV[D+1] = -inf`` (empty), so callers
    can index any depth without special cases.
    """
    L = log_widths(S)
    D = L.shape[0]
    out = np.empty(D + 2)
    out[0] = np.inf
    with np.errstate(invalid="ignore"):
        out[1:D + 1] = L.sum(axis=1)        # +inf + -inf (unbounded and empty) is NaN: empty
    out[D + 1] = -np.inf
    out[1:D + 1][np.isnan(out[1:D + 1])] = -np.inf
    return out


def log_exact_volumes(logV: np.ndarray) -> np.ndarray:
    """``logW[i]`` = log volume of the region of depth exactly i (i = 1..D); index 0 unused.

    ``W_i = V_i - V_{i+1}`` computed as ``a + log1p(-exp(b - a))``.
    """
    a = logV[1:-1]
    b = logV[2:]
    out = np.full(logV.shape[0] - 1, -np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = np.where(np.isfinite(a), b - a, -np.inf)
        w = a + np.log1p(-np.exp(np.minimum(diff, 0.0)))
    w[~np.isfinite(a)] = -np.inf
    w[diff >= 0] = -np.inf
    out[1:] = w
    return out


def approx_tukey_depth(point: np.ndarray, models: np.ndarray) -> int:
    """Approximate Tukey depth of ``point`` w.r.t. the rows of ``models`` (002 Def. 2.5).

    ``min_j min(#{models[:, j] <= point[j]}, #{models[:, j] >= point[j]})``.
    """
    below = (models <= point).sum(axis=0)
    above = (models >= point).sum(axis=0)
    return int(np.minimum(below, above).min())
