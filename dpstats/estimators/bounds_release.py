"""How the private bounds of a bounded design are released (:mod:`dpstats.estimators.bounded`).

A *releaser* ``release(plan, X, y) -> Bounds`` releases the parts of a
:class:`BoundsPlan` that are not public, through the mechanisms of
:mod:`dpstats.mechanisms` (which charge the ledger). Neighbours: add/remove one row.

* :func:`hist_release`: one release of log-scale histograms of every bounded column
  (:func:`histogram_bounds`, L2 sensitivity ``sqrt(k)`` for ``k`` columns), through a Gaussian
  mechanism (:func:`gaussian_hist_release`) or a part of a Gaussian-DP plan;
* :func:`quantile_release`: :func:`~dpstats.mechanisms.bounds.private_bounds`, exponential
  mechanism quantiles, ``eps``-DP;
* :func:`abs_quantile_release`: symmetric bounds from one
  :func:`~dpstats.mechanisms.bounds.private_quantile` of ``|x_j|`` per column, ``eps``-DP.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from ..mechanisms.additive import analytic_gaussian_sigma, gaussian
from ..mechanisms.bounds import Bounds, private_bounds, private_quantile
from ..mechanisms.gdp import (
    CELLS_PER_OCTAVE,
    detection_threshold,
    log_grid_edges,
    log_histograms,
    octave_sums,
    spans_from_histograms,
)

__all__ = ["BoundsPlan", "Releaser", "HistCounts", "ISOLATED_ALPHA", "drop_isolated",
           "histogram_bounds", "hist_release", "gaussian_hist_release",
           "quantile_release", "abs_quantile_release"]


@dataclass(frozen=True)
class BoundsPlan:
    """The user's bounds for one design, parsed, and what must be released privately.

    ``features`` are the non-intercept columns; ``known`` maps some of them to public ranges
    known by construction (e.g. 0/1 indicators), which override any other bound; ``label``
    says whether the label is mapped too (False for a 0/1 label).
    """

    given: Bounds
    features: tuple[int, ...]
    intercept_col: int | None
    known: Mapping[int, tuple[float, float]] = field(default_factory=dict)
    label: bool = True

    @property
    def auto_x(self) -> bool:
        """The feature bounds were left to ``"auto"``."""
        return self.given.x_lo is None and bool(self.features)

    @property
    def private_features(self) -> tuple[int, ...]:
        """Features whose bounds are released privately."""
        return tuple(j for j in self.features if self.auto_x and j not in self.known)

    @property
    def need_x(self) -> bool:
        return bool(self.private_features)

    @property
    def need_y(self) -> bool:
        return self.label and self.given.y_lo is None

    @property
    def private(self) -> bool:
        """Something must be released (and charged)."""
        return self.need_x or self.need_y

    def source(self, *, coarse: bool = False) -> str:
        """Where the bounds come from: "public", "private", or for a mix "mixed" (``coarse``)
        or e.g. "private x, public y"."""
        if not self.private:
            return "public"
        public_x = len(self.private_features) < len(self.features)
        public_y = self.label and not self.need_y
        if not (public_x or public_y):
            return "private"
        if coarse or self.known:
            return "mixed"
        parts = ([("x", self.need_x)] if self.features else []) + \
            ([("y", self.need_y)] if self.label else [])
        return ", ".join(f"{'private' if priv else 'public'} {what}" for what, priv in parts)

@dataclass(frozen=True)
class HistCounts:
    """The released noisy log-histograms behind :func:`histogram_bounds` (one row per bounded
    feature, :func:`~dpstats.mechanisms.gdp.log_histograms`' grid), kept so that later steps
    can read them again: post-processing of a release already charged, free. ``sigma``: the
    noise sd of one cell. ``cols``: design column -> row, for the columns whose box these
    counts gave (set by :mod:`dpstats.estimators.bounded`; empty until then).
    """

    noisy: np.ndarray
    sigma: float
    cols: Mapping[int, int] = field(default_factory=dict)

    def tail(self, row: int, lo: float, hi: float, reach: float):
        """What the released counts of ``row`` say lies outside the box ``[lo, hi]``, up to
        ``reach`` beyond it: ``((counts, distances) above, (counts, distances) below)``, the
        noisy counts of the cells past each edge (centre beyond it, inner edge within
        ``reach``) and their centres' distances from that edge (capped at ``reach``).

        >>> from dpstats.mechanisms.gdp import grid_cells, log_grid_index
        >>> h = HistCounts(np.zeros((1, grid_cells())), 1.0)
        >>> h.noisy[0, log_grid_index(2.0)] = 10.0       # 10 rows in [2, 2^1.25)
        >>> (c, a), (c_lo, a_lo) = h.tail(0, -2.0, 2.0, 1.0)
        >>> c.tolist(), np.round(a, 3).tolist(), c_lo.tolist()
        ([10.0, 0.0, 0.0], [0.189, 0.603, 1.0], [0.0, 0.0, 0.0])
        """
        left, right = log_grid_edges(np.arange(self.noisy.shape[1]))
        centre = left / 2.0 + right / 2.0
        up = (centre > hi) & (left < hi + reach)
        down = (centre < lo) & (right > lo - reach)
        c = self.noisy[row]
        return ((c[up], np.minimum(centre[up] - hi, reach)),
                (c[down], np.minimum(lo - centre[down], reach)))

    def for_columns(self, cols: Mapping[int, int]) -> HistCounts:
        """The same counts with the design column -> row map ``cols``."""
        return replace(self, cols=dict(cols))


#: ``releaser(plan, X, y) -> Bounds``: releases the parts ``plan`` needs (x aligned with
#: ``plan.features``; parts it does not release may be None or NaN).
Releaser = Callable[[BoundsPlan, np.ndarray, np.ndarray], Bounds]



#: Family-wise false-positive rate (over all cells) that an isolated outer cell must clear
#: before it may widen a span more than :data:`ISOLATED_WIDEN`-fold (:func:`drop_isolated`).
ISOLATED_ALPHA = 1e-6
#: An isolated outer cell that would widen the span of the other cells by more than this
#: factor must clear :data:`ISOLATED_ALPHA`.
ISOLATED_WIDEN = 16.0
#: An isolated cell whose neighbours' noisy counts sum above this many sd of their noise
#: (one-sided 1%) has data near it and is kept.
NEAR_Z = 2.326


def drop_isolated(noisy: np.ndarray, threshold: float, strict: float,
                  per_octave: int = CELLS_PER_OCTAVE, sigma: float | None = None) -> np.ndarray:
    """``noisy`` (k, cells) with each row's *isolated far outer cells* set to 0: a cell above
    ``threshold`` that is the lowest or highest such cell, has no neighbour above
    ``threshold``, would widen the span of the other such cells (at least two: a 0/1
    column's two cells are both kept) more than :data:`ISOLATED_WIDEN`-fold and does not
    clear ``strict``. Empty cells clear
    :func:`~dpstats.mechanisms.gdp.detection_threshold` (1% over all cells) now and then, and
    most cells of the log grid lie far from any data: one such cell alone widened a span
    16-fold or more (a column mapped to a sliver of the unit box). Data rarely sit in one
    cell far apart from all the others, and then clear ``strict`` (:data:`ISOLATED_ALPHA`)
    once they hold a few dozen rows more; an isolated cell next to the span (a sparse cell of
    real data beside a noisy empty one) is kept as before. With the cells' noise sd
    ``sigma``, a cell whose neighbours (an octave on each side) hold more than
    :data:`NEAR_Z` sd of their summed noise is kept too: data spread thinly over many cells,
    one of which crossed the threshold (a corpus column, benchmarks/bounds_isolated_corpus.py).
    Post-processing of released counts.

    >>> from dpstats.mechanisms.gdp import grid_cells
    >>> v = np.zeros((1, grid_cells())); v[0, [773, 774, 775, 850]] = [50.0, 80.0, 60.0, 45.0]
    >>> np.flatnonzero(drop_isolated(v, 40.0, 60.0)[0]).tolist()
    [773, 774, 775]
    >>> v[0, 850] = 70.0                                 # clears the strict threshold: kept
    >>> np.flatnonzero(drop_isolated(v, 40.0, 60.0)[0]).tolist()
    [773, 774, 775, 850]
    >>> v[0, 850], v[0, 778] = 0.0, 45.0                # isolated but near: kept
    >>> np.flatnonzero(drop_isolated(v, 40.0, 60.0)[0]).tolist()
    [773, 774, 775, 778]
    >>> v[0, 778], v[0, [846, 847, 848, 849, 850]] = 0.0, [30.0, 35.0, 45.0, 30.0, 20.0]
    >>> np.flatnonzero(drop_isolated(v, 40.0, 60.0, sigma=10.0)[0] > 40).tolist()
    [773, 774, 775, 848]
    """
    out = np.array(noisy, dtype=np.float64)
    left, right = log_grid_edges(np.arange(out.shape[1]), per_octave)
    for row in out:
        hit = list(np.flatnonzero(row > threshold))
        for end in (0, -1):                              # the lowest, then the highest
            while len(hit) > 2:
                i = hit[end]
                near = hit[end + 1] if end == 0 else hit[end - 1]
                rest = right[hit[-1] if end == 0 else near] - left[near if end == 0 else hit[0]]
                wide = right[hit[-1]] - left[hit[0]]
                if abs(near - i) == 1 or row[i] > strict or not wide > ISOLATED_WIDEN * rest:
                    break
                if sigma is not None:                    # data spread thinly nearby?
                    nb = [c for c in range(i - per_octave, i + per_octave + 1)
                          if c != i and 0 <= c < row.size]
                    if row[nb].sum() > NEAR_Z * sigma * math.sqrt(len(nb)):
                        break
                row[i] = 0.0
                hit.pop(end)
    return out


def _spans(noisy: np.ndarray, sigma: float, n_cells: int, per_octave: int):
    """Spans of released histograms: cells above the detection threshold, isolated far
    outer ones only above the strict one (:func:`drop_isolated`)."""
    kept = drop_isolated(noisy, detection_threshold(sigma, n_cells),
                         detection_threshold(sigma, n_cells, ISOLATED_ALPHA), per_octave, sigma)
    return spans_from_histograms(kept, detection_threshold(sigma, n_cells), per_octave)


def histogram_bounds(X, y, release, counts=None) -> Bounds:
    """Private bounds from one Gaussian release of log-scale histograms of every column.

    The counts of each column of ``X`` (n, d) and of ``y`` over the public grid of
    :func:`~dpstats.mechanisms.gdp.log_histograms` (4 cells per octave, |v| in [2^-64, 2^64],
    and {0}) are stacked: adding or removing one row changes one count per column, so the
    stack has L2 sensitivity ``sqrt(k)`` for ``k`` columns. ``release(counts, sensitivity)``
    is a mechanism returning ``(noisy counts, sigma)``. Each column's bounds are the outer
    edges of its cells whose noisy count clears
    :func:`~dpstats.mechanisms.gdp.detection_threshold` (empty cells exceed it with
    probability about 1% in all); a column with no such cell gets ``(-2^64, 2^64)`` (it is then
    nearly constant after mapping); an isolated outer cell must clear a stricter threshold
    (:func:`drop_isolated`). Everything after the release is post-processing.
    ``counts``: these counts computed elsewhere (summed over the partitions of a dask frame,
    :mod:`dpstats.dask`); ``X`` and ``y`` then only give the shapes.
    """
    if counts is None:
        parts = [a for a in (X, None if y is None else np.asarray(y)[:, None]) if a is not None]
        counts = log_histograms(np.hstack(parts))
    noisy, sigma = release(counts.ravel(), math.sqrt(counts.shape[0]))
    noisy = np.reshape(noisy, counts.shape)
    lo, hi = _spans(noisy, sigma, counts.size, CELLS_PER_OCTAVE)
    # Columns with nothing above the threshold: retry on whole octaves. Summing the released
    # counts of the CELLS_PER_OCTAVE cells of each octave is post-processing; the sum's noise
    # is sigma * sqrt(CELLS_PER_OCTAVE) while its count grows CELLS_PER_OCTAVE-fold.
    miss = np.flatnonzero(hi >= 2.0 ** 64)
    if miss.size:
        c_lo, c_hi = _spans(octave_sums(noisy[miss]), sigma * math.sqrt(CELLS_PER_OCTAVE),
                            counts.size, 1)
        lo[miss], hi[miss] = c_lo, c_hi
    d = 0 if X is None else X.shape[1]
    return Bounds(lo[:d] if X is not None else None, hi[:d] if X is not None else None,
                  float(lo[-1]) if y is not None else None,
                  float(hi[-1]) if y is not None else None, source="private", mode="hist",
                  hist=HistCounts(noisy[:d], float(sigma)) if d else None)


def hist_release(release, counts_of=None) -> Releaser:
    """Releaser of :func:`histogram_bounds` through ``release(counts, sensitivity) ->
    (noisy counts, sigma)`` (a Gaussian mechanism or a part of a Gaussian-DP plan). One
    histogram covers every ``"auto"`` feature (known ones too) and the label if needed.
    ``counts_of(features, label) -> counts``: the histograms computed elsewhere (dask)."""
    def run(plan: BoundsPlan, X, y) -> Bounds:
        feats = list(plan.features) if plan.auto_x else []
        Xf = X[:, feats] if plan.auto_x else None
        counts = None if counts_of is None else counts_of(feats, plan.need_y)
        return histogram_bounds(Xf, y if plan.need_y else None, release, counts)
    return run


def gaussian_hist_release(eps: float, delta: float, rng, ledger, *, stage: str,
                          counts_of=None) -> Releaser:
    """:func:`hist_release` through one :func:`~dpstats.mechanisms.additive.gaussian` release
    at ``(eps, delta)`` (analytic calibration), charged as ``"<stage>: bounds"``."""
    def release(counts, sensitivity):
        out = gaussian(counts, sensitivity, eps, delta, rng, ledger, stage=f"{stage}: bounds",
                       what="log-scale histograms of the bounded columns")
        return out, analytic_gaussian_sigma(sensitivity, eps, delta)
    return hist_release(release, counts_of)


def quantile_release(eps: float, q: float, rng, ledger, *, stage: str,
                     mode: str = "auto") -> Releaser:
    """Releaser of :func:`~dpstats.mechanisms.bounds.private_bounds` (``eps``-DP, exponential
    mechanism quantiles with tail mass ``q``), charged to ``ledger`` as ``"<stage>: bounds"``."""
    def run(plan: BoundsPlan, X, y) -> Bounds:
        Xf = X[:, list(plan.features)] if plan.need_x else None
        return private_bounds(Xf, y if plan.need_y else None, eps, rng, ledger, mode=mode,
                              q=q, stage=f"{stage}: bounds")
    return run


def abs_quantile_release(eps: float, q: float, rng, ledger, *, stage: str,
                         names=None) -> Releaser:
    """Releaser of symmetric bounds ``[-B, B]`` per private feature (and the label): ``B`` the
    private ``(1 - q)``-quantile of ``|x_j|``, rounded up
    (:func:`~dpstats.mechanisms.bounds.private_quantile`); ``eps`` split evenly, pure DP."""
    def run(plan: BoundsPlan, X, y) -> Bounds:
        cols = plan.private_features
        each = eps / (len(cols) + plan.need_y)
        half = np.full(len(plan.features), np.nan)
        for j in cols:
            name = names[j] if names is not None else f"x[{j}]"
            half[plan.features.index(j)] = private_quantile(
                np.abs(X[:, j]), 1.0 - q, each, rng, ledger, stage=f"{stage}: bounds",
                what=f"bound B of |{name}|", rounding="up")
        y_half = None
        if plan.need_y:
            y_half = private_quantile(np.abs(y), 1.0 - q, each, rng, ledger,
                                      stage=f"{stage}: bounds", what="bound B of |y|",
                                      rounding="up")
        return Bounds(-half, half, None if y_half is None else -y_half, y_half,
                      source="private", eps=eps)
    return run
