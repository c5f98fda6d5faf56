"""The statistics an estimator asks a dask frame for, computed on the workers.

An :class:`Engine` is passed to an estimator as ``engine=`` (:mod:`dpstats.estimators.adassp`,
:mod:`dpstats.estimators.tukey.linear`); the estimator then runs its in-memory code on a design
with no rows, and asks the engine for the statistics its releases read:

* ``counts_of(features, label)``: the log-scale histograms of the private bounds (from the
  first pass, :class:`~dpstats.dask.passes.FirstPass`);
* ``gram(bounded)``: ``X'X`` and ``X'y`` of the rows mapped into the released clip box (one
  pass, :class:`~dpstats.dask.passes.GramPass`);
* ``cells(j)``: column ``j``'s distinct values and counts for the private centre;
* ``fit_models(X, y, m, rng)``: the Tukey mechanism's ``m`` group fits, from per-group Gram
  matrices (one pass, :class:`~dpstats.dask.passes.GroupPass`: each partition's group sums by
  one numba kernel, folded into one accumulator per worker chain, never one (m, K) array per
  partition; the m small systems are solved on a worker). The group labels are random:
  one seed is drawn on the client by :func:`~dpstats.mechanisms.sampling.group_seed`, and each
  row's label is a counter-based draw from it and the row's global number in the design
  (:mod:`dpstats.dask.numbering`, the numbers from the first pass's row counts), so every
  row's label is uniform and independent of the data and of every other row's, and the labels
  do not depend on the partitioning. Each group's model is
  the minimum-norm least-squares solution from its Gram matrix. When the first pass already
  took the group sums at this ``m`` (:mod:`dpstats.dask.speculate`, the seed then drawn
  before it), they are used and no pass runs; nor does one when that pass's subsample holds
  every row of the frame (below 2^21 rows): the group sums at the chosen ``m`` are then taken
  from those rows on their worker (:func:`held_models`: the same floats as the pass).

The releases, their order and their sensitivities are the estimator's own; with the same
group labels (an injected :data:`LABELS` source in tests) a seeded fit equals the in-memory
fit up to floating-point rounding (sums over partitions add in another order).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..mechanisms.sampling import group_seed
from .design import PartitionDesign
from .fold import (
    add_partials,
    chain_count,
    chain_sums,
    fold_frame,
    groups_of,
    pairwise,
    whole_chains,
)
from .numbering import row_starts
from .passes import (
    RAW_MAX_ROWS,
    GramPass,
    GroupPass,
    SamplePass,
    full_gram,
    reduce_frame,
    sample_frame,
    seeded_labels,
    sums_of,
)
from .pseudo import LassoVotes
from .speculate import kept_sums

__all__ = ["Engine", "solve_groups", "LABELS"]

#: Test hook: a picklable ``source(start, index, n, m, seed) -> labels`` that replaces the
#: seeded labels (to compare with the in-memory labels); None in every fit.
LABELS = None
#: Relative cut-off of the small eigenvalues of a group's scaled Gram matrix.
_RCOND = 1e-12
#: A column whose spread within a group is below this (relative) is constant there.
_CONST_REL = 1e-12


def _dropped(gram: np.ndarray, tot: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Columns a group's fit leaves at 0, as the in-memory kernel does
    (:func:`dpstats._kernels.tukey.group_ols`): a column that is 0 in the group, and every
    column constant within it after the first (the intercept)."""
    sq = np.einsum("gii->gi", gram)
    spread = sq * count[:, None] - tot * tot                  # n^2 times the variance
    const = spread <= _CONST_REL * sq * np.maximum(count[:, None], 1.0)
    const &= count[:, None] > 0
    zero = sq == 0.0
    first = np.cumsum(const, axis=1) == 1
    return zero | (const & ~first)


def solve_groups(gram: np.ndarray, xty: np.ndarray, tot: np.ndarray | None = None,
                 count: np.ndarray | None = None) -> np.ndarray:
    """Least-squares coefficients of every group from its ``X'X`` (m, p, p) and ``X'y``
    (m, p), as the in-memory kernel fits them: columns that are 0 or (after the first)
    constant in the group get 0 (with the column sums ``tot`` and row counts ``count``); a
    full-rank group is solved with columns scaled to unit norm; a rank-deficient one takes the
    minimum-norm solution in the original coordinates (the pseudo-inverse of its Gram matrix).

    >>> G = np.array([[[2.0, 3.0], [3.0, 5.0]]])
    >>> np.round(solve_groups(G, np.array([[5.0, 8.0]])), 10).tolist()
    [[1.0, 1.0]]
    """
    gram, xty = gram.copy(), xty.copy()
    if tot is not None:
        drop = _dropped(gram, tot, count)
        gram[drop[:, :, None] | drop[:, None, :]] = 0.0
        xty[drop] = 0.0
    d = np.sqrt(np.einsum("gii->gi", gram))
    s = np.where(d > 0, d, 1.0)
    A = gram / (s[:, :, None] * s[:, None, :])
    w = np.linalg.eigvalsh(A)                     # the rank test only (half of eigh's cost)
    full = w[:, 0] > _RCOND * np.maximum(w[:, -1], 0.0)
    beta = np.zeros_like(xty)
    if full.any():
        beta[full] = np.linalg.solve(A[full], (xty[full] / s[full])[:, :, None])[:, :, 0] \
            / s[full]
    if (~full).any():
        pinv = np.linalg.pinv(gram[~full], rcond=_RCOND, hermitian=True)
        beta[~full] = np.einsum("gij,gj->gi", pinv, xty[~full])
    return np.ascontiguousarray(beta)


@dataclass(frozen=True)
class Finish:
    """The end of a group pass, on a worker: ``fn`` of the named group sums
    (:func:`~dpstats.dask.passes.sums_of`) of ``p`` columns."""

    fn: object
    p: int

    def __call__(self, acc: np.ndarray):
        return self.fn(sums_of(acc, self.p))


def models_of(sums: dict) -> np.ndarray:
    """The (m, p) group models from the summed per-group statistics (run on a worker: only
    the models, the Tukey mechanism's input, come back to the client)."""
    p = sums["xty"].shape[0]
    return solve_groups(full_gram(sums["tri"], p), np.ascontiguousarray(sums["xty"].T),
                        np.ascontiguousarray(sums["sum"].T), sums["count"])


def _source():
    """The group labels' source: :func:`~dpstats.dask.passes.seeded_labels`, or the tests'."""
    return seeded_labels if LABELS is None else LABELS


def guessed_models(total: dict, p: int, keep) -> np.ndarray:
    """The group models of the ``keep`` columns from a held first pass's sums of all ``p``
    columns (:mod:`.speculate`; on the worker holding them: only the models move)."""
    return Finish(models_of, len(keep))(kept_sums(groups_of(total), p, keep))


def held_models(total: dict, keep, m: int, seed: int, source, chains: int) -> np.ndarray:
    """The group models at ``m`` of the ``keep`` columns from a held first pass whose
    subsample holds every row: the sums a :class:`~dpstats.dask.passes.GroupPass` with
    ``chains`` chains takes (the same rows, labels, kernel and order: the same floats),
    without reading the frame again."""
    starts = row_starts(total["rows"])
    sums = pairwise([chain_sums(chain, m, seed, source, keep, starts)
                     for chain in whole_chains(total, chains)], add_partials)
    return Finish(models_of, len(keep))(sums)


class Engine:
    """Statistics of the ``keep`` design columns of a dask frame (see the module docstring).

    ``first`` is the first pass's total (row count, histograms, centre counts); ``prefetch``
    (:class:`~dpstats.dask.speculate.Prefetch`, or None) the Tukey labels' seed drawn before
    it and the group sums it took at a guessed number of models."""

    def __init__(self, ddf, design: PartitionDesign, first: dict, keep, prefetch=None):
        self.ddf, self.design, self.first, self.keep = ddf, design, first, tuple(keep)
        self.prefetch = prefetch
        self.starts = row_starts(first["rows"])   # each partition's first row (not released)

    def counts_of(self, features, label: bool) -> np.ndarray:
        """Histogram rows of the (kept-column) ``features`` and, with ``label``, of ``y``."""
        rows = [self.keep[j] for j in features] + ([-1] if label else [])
        return self.first["hist"][rows]

    def gram(self, bounded) -> tuple[np.ndarray, np.ndarray]:
        """``(X'X, X'y)`` of the kept columns mapped like ``bounded`` (a BoundedDesign)."""
        out = reduce_frame(self.ddf, GramPass(self.design, self.keep, bounded.clip_lo,
                                              bounded.clip_hi, bounded.intercept_col,
                                              bounded.y_box))
        return out["gram"], out["xty"]

    def boost_stats(self, bounded, C: float, resid_box: float | None = None):
        """BAS on rows divided by ``C``: ``(X'X / C^2, round)``, ``round(theta)`` one pass
        for ``X'clip(y - X theta / C, -1, 1) / C`` (the rows of ``bounded.X / C``; with
        ``resid_box`` the residual's ``X`` and ``y`` are clipped to that many half-widths of
        the box instead of 1, as ``BoundedDesign.unclipped``)."""
        gp = GramPass(self.design, self.keep, bounded.clip_lo, bounded.clip_hi,
                      bounded.intercept_col, bounded.y_box, unclipped=resid_box)
        gram = reduce_frame(self.ddf, gp)["gram"] / (C * C)

        def round_(theta):
            step = replace(gp, theta=np.asarray(theta, dtype=np.float64) / C)
            return reduce_frame(self.ddf, step)["grad"] / C
        return gram, round_

    def gradient(self, bounded, s: float, loss: str, clip: float):
        """DP-GD's clipped gradient sum on the rows ``bounded.X / s``: one pass per call."""
        gp = GramPass(self.design, self.keep, bounded.clip_lo, bounded.clip_hi,
                      bounded.intercept_col, bounded.y_box, gradient=(s, loss, clip))

        def step(theta):
            return reduce_frame(self.ddf, replace(gp, theta=np.asarray(theta, float)))["grad"]
        return step

    def cells(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """Distinct values and counts of kept column ``j`` (raw below
        :data:`~dpstats.dask.passes.RAW_MAX_ROWS` rows in all, as in memory)."""
        raw = self.first.get("raw")
        src = raw if raw is not None and self.first["n"] < RAW_MAX_ROWS else self.first["cells"]
        return src[self.keep[j]]

    def fit_models(self, X, y, m: int, rng) -> np.ndarray:
        """The ``m`` group fits (``X``, ``y``: no rows; only the shape is read)."""
        pre, self.prefetch = self.prefetch, None         # the first Tukey fit's only
        if pre is None:
            return self._groups(m, rng, models_of)
        if pre.held is not None and pre.m == int(m):    # the first pass's sums: no pass
            return pre.held.apply(guessed_models, pre.p, self.keep)
        if pre.held is not None and pre.whole:          # every row held: no pass either
            chains = chain_count(self.ddf.npartitions)
            return pre.held.apply(held_models, self.keep, int(m), pre.seed, _source(), chains)
        return self._groups(m, rng, models_of, seed=pre.seed)

    def _groups(self, m: int, rng, finish, seed: int | None = None):
        seed = group_seed(rng) if seed is None else seed
        return fold_frame(self.ddf, GroupPass(self.design, self.keep, int(m), seed, _source(),
                                              self.starts), Finish(finish, len(self.keep)))

    def lasso_votes(self, m: int, k: int, rng) -> np.ndarray:
        """SubLasso's votes of ``m`` random groups (:class:`~dpstats.dask.pseudo.LassoVotes`:
        each group's Lasso from its own sufficient statistics, on a worker)."""
        return self._groups(m, rng, LassoVotes(int(k)))

    def sample(self, q: float, rng) -> tuple[np.ndarray, np.ndarray]:
        """The kept columns and ``y`` of a Bernoulli(``q``) subsample of the rows, on the
        client (one seed drawn from ``rng``; each row kept by its global number's draw)."""
        return sample_frame(self.ddf, SamplePass(self.design, self.keep, float(q),
                                                 group_seed(rng), self.starts))
