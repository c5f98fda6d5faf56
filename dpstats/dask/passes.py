"""Passes over a dask frame: one function per partition, summed into a small aggregate.

Each pass is a picklable object called on the workers as ``pass_(partition, index)``; it
builds the partition's design (:class:`~dpstats.dask.design.PartitionDesign`) and returns
statistics whose size does not grow with the rows (counts, histograms over public grids,
distinct-value counts on the centre's public grid, Gram matrices), computed by one-pass numba
kernels where numpy would make several passes (:mod:`dpstats._kernels.partition_sums`: the
same values). :func:`reduce_frame` adds them up in a tree, on the workers; the per-group sums,
whose size grows with the number of groups, are folded instead (:func:`dpstats.dask.fold.
fold_frame`: one accumulator per worker chain). Only the total, or what a finishing step
computes from it on a worker, comes back to the client. None of them is a release: the mechanisms of
:mod:`dpstats.mechanisms` release them on the client.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from .._kernels.row_sums import GridMatrix, resolve, tdot_fixed
from ..formula.discovery import level_histograms
from ..mechanisms.bounds import to_unit
from ..mechanisms.centre import CELL_KEYS, cells_from_counts, merge_cells
from ..mechanisms.gdp import CELLS_PER_OCTAVE, grid_cells
from ..mechanisms.sampling import seeded_sample
from .design import PartitionDesign
from .numbering import PARTITION_BITS, partition_key, row_starts, seeded_labels, start_of

__all__ = ["reduce_frame", "merge", "LevelsPass", "FirstPass", "GramPass",
           "GroupPass", "group_sums", "sums_of", "log_counts", "cell_counts", "column_cells",
           "SamplePass", "sample_frame", "RAW_MAX_ROWS", "first_counts", "kept_columns",
           "row_starts", "partition_key", "seeded_labels", "PARTITION_BITS"]

#: Below this many rows the centre uses the raw distinct values (as in memory, where
#: :func:`~dpstats.mechanisms.centre.private_centre_value` switches to stand-ins from it on).
RAW_MAX_ROWS = 1 << 18


def reduce_frame(ddf, fn, finish=None):
    """``fn(partition, index)`` on every partition of ``ddf``, merged pairwise on the workers
    (:func:`merge`); the total, or ``finish(total)`` computed on a worker, is the only thing
    computed back to the client."""
    import dask
    tasks = [dask.delayed(fn)(part, i) for i, part in enumerate(ddf.to_delayed())]
    while len(tasks) > 1:
        tasks = [dask.delayed(merge)(*tasks[i:i + 2]) if i + 1 < len(tasks) else tasks[i]
                 for i in range(0, len(tasks), 2)]
    total = dask.delayed(resolve)(tasks[0])      # exact sums (FixedSum) to floats, once
    total = total if finish is None else dask.delayed(finish)(total)
    return dask.compute(total)[0]


def merge(a: dict, b: dict) -> dict:
    """Two partial aggregates added up key by key (counts and arrays add; level counts and
    distinct-value counts merge; raw distinct values stay only while both sides have them)."""
    out = {}
    for key, va in a.items():
        vb = b[key]
        if key == "levels":
            out[key] = [dict(Counter(x) + Counter(y)) for x, y in zip(va, vb, strict=True)]
        elif key == "rows":                   # design rows per partition: disjoint keys
            out[key] = {**va, **vb}
        elif key in ("cells", "raw"):
            out[key] = None if va is None or vb is None else \
                [merge_cells(x, y) for x, y in zip(va, vb, strict=True)]
        else:
            out[key] = va + vb
    return out


def log_counts(cols: np.ndarray, y: np.ndarray | None = None,
               out: np.ndarray | None = None) -> np.ndarray:
    """:func:`~dpstats.mechanisms.gdp.log_histograms` of ``cols`` (and, given, of ``y`` as
    one more column, without stacking them) by the one-pass kernel
    (:func:`dpstats._kernels.partition_sums.add_log_histograms`: the same cells), added into
    ``out`` (int64, one row per column) when given, else returned as floats.

    >>> from dpstats.mechanisms.gdp import log_histograms
    >>> cols = np.array([[-3.0, 0.0], [1.5, 2.0]])
    >>> bool((log_counts(cols) == log_histograms(cols)).all())
    True
    >>> bool((log_counts(cols[:, :1], cols[:, 1]) == log_histograms(cols)).all())
    True
    """
    from .._kernels.partition_sums import add_log_histograms, log_table
    cells = grid_cells()
    k = cols.shape[1] + (y is not None)
    counts = np.zeros((k, cells), dtype=np.int64) if out is None else out
    octaves = (cells - 1) // (4 * CELLS_PER_OCTAVE)           # the grid's octaves on each side
    table = log_table(CELLS_PER_OCTAVE, octaves)
    add_log_histograms(counts, _bits(cols), *table, CELLS_PER_OCTAVE, octaves)
    if y is not None:
        add_log_histograms(counts[-1:], _bits(y)[:, None], *table, CELLS_PER_OCTAVE, octaves)
    return counts.astype(np.float64) if out is None else out


def _bits(values: np.ndarray) -> np.ndarray:
    """A C-ordered float64 array's values viewed as int64 (no copy when it is one already)."""
    return np.ascontiguousarray(values, dtype=np.float64).view(np.int64)


def cell_counts(X: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The private centre's cell-key counts of every column of ``X`` (p, 2 keys + 7; int64),
    added into ``out`` when given: :func:`column_cells` before the keys become values
    (:func:`~dpstats.mechanisms.centre.cells_from_counts`), so that partitions add up as
    arrays. ``X`` is read in place, row by row (:func:`dpstats._kernels.partition_sums.
    add_cell_keys`; no column is copied)."""
    from .._kernels.partition_sums import add_cell_keys
    lo, hi, low, half = CELL_KEYS
    counts = np.zeros((X.shape[1], 2 * half + 7), dtype=np.int64) if out is None else out
    add_cell_keys(counts, _bits(X), lo, hi, low, half)
    return counts


def first_counts(X: np.ndarray, y: np.ndarray, hist: np.ndarray, keys: np.ndarray | None,
                 centre: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`log_counts` of ``(X, y)`` added into ``hist`` and, with ``centre``,
    :func:`cell_counts` of ``X`` into ``keys`` (None: new), the two kernels on two threads
    when ``X`` is large (:func:`dpstats._kernels.runtime.run_chunks`: each releases the GIL
    and writes its own integer counts, so the counts are the same as one after the other).

    >>> X = np.array([[1.0, -0.5], [3.0, 0.0]])
    >>> h, k = first_counts(X, X[:, 0], np.zeros((3, grid_cells()), dtype=np.int64), None, True)
    >>> bool((h == log_counts(X, X[:, 0])).all()), bool((k == cell_counts(X)).all())
    (True, True)
    """
    from .._kernels.runtime import run_chunks
    out = [hist, keys]
    tasks = [lambda: log_counts(X, y, hist)] + ([lambda: cell_counts(X, keys)] if centre else [])

    def run(lo, hi):
        for i in range(lo, hi):
            out[i] = tasks[i]()
    run_chunks(run, len(tasks), X.size)
    return out[0], out[1]


def kept_columns(X: np.ndarray, keep) -> np.ndarray:
    """``X[:, keep]`` (``keep`` None: ``X``), or ``X`` itself, not copied, when ``keep`` is
    every column in order (the same values: a 1e6 x 10 copy was a quarter of the Tukey models'
    step on the worker).

    >>> X = np.arange(6.0).reshape(3, 2)
    >>> kept_columns(X, (0, 1)) is X, kept_columns(X, [1]).ravel().tolist()
    (True, [1.0, 3.0, 5.0])
    """
    if keep is None or list(keep) == list(range(X.shape[1])):
        return X
    return X[:, list(keep)]


def column_cells(X: np.ndarray) -> list:
    """:func:`~dpstats.mechanisms.centre.centre_cells` of every column of ``X`` by the
    one-pass kernel (:func:`cell_counts`: the same cells).

    >>> from dpstats.mechanisms.centre import centre_cells
    >>> X = np.array([[1.0, -0.0], [1.0001, -3.0], [1e30, 2.0]])
    >>> all(bool((a[0] == b[0]).all() and (a[1] == b[1]).all())
    ...     for a, b in zip(column_cells(X), [centre_cells(X[:, j]) for j in range(2)]))
    True
    """
    return [cells_from_counts(row) for row in cell_counts(X)]


def _unique(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.unique(v, return_counts=True)


@dataclass(frozen=True)
class LevelsPass:
    """Level counts of the undeclared category columns (the input of
    :func:`~dpstats.mechanisms.levels.private_levels`)."""

    design: PartitionDesign
    variables: tuple[str, ...]
    columns: tuple[str, ...]

    def __call__(self, pdf, part: int) -> dict:
        return {"levels": level_histograms(self.design.frame(pdf), self.variables,
                                           self.columns)}


@dataclass(frozen=True)
class FirstPass:
    """Row count, log-scale histograms of every design column and of ``y`` (the private
    bounds' input) and, with ``centre``, each column's distinct values on the centre's grid
    (and the raw ones while a partition is small). Also each partition's design row count
    (``"rows"``, ``{partition: rows}``): never released, it numbers the rows for the later
    passes' labels and subsamples (:func:`row_starts`)."""

    design: PartitionDesign
    centre: bool = False

    def __call__(self, pdf, part: int) -> dict:
        out = self.stats(*self.design(pdf))
        out["rows"] = {int(part): out["n"]}
        return out

    def stats(self, X: np.ndarray, y: np.ndarray) -> dict:
        """The statistics of one partition's design ``(X, y)``."""
        out = {"n": int(X.shape[0]), "hist": log_counts(X, y)}
        if self.centre:
            out["cells"] = column_cells(X)
            out["raw"] = [_unique(X[:, j]) for j in range(X.shape[1])] \
                if X.shape[0] < RAW_MAX_ROWS else None
        return out


def _unit(values, lo, hi, clip: float) -> np.ndarray:
    """:func:`to_unit` (``clip == 1``), or the same affine map clipped to ``+-clip``."""
    if clip == 1.0:
        return to_unit(values, lo, hi)
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    with np.errstate(over="ignore"):
        out = (np.asarray(values, dtype=np.float64) - (lo / 2.0 + hi / 2.0)) / (hi / 2.0 - lo / 2.0)
    return np.clip(out, -clip, clip)


@dataclass(frozen=True)
class GramPass:
    """``X'X`` and ``X'y`` of the kept columns mapped into the released clip box, as
    :func:`dpstats.estimators.bounded.bounded_design` maps them; with ``theta``, BAS's
    round statistic ``X'clip(y - X theta, -1, 1)`` instead."""

    design: PartitionDesign
    keep: tuple[int, ...]
    clip_lo: np.ndarray
    clip_hi: np.ndarray
    intercept_col: int | None
    y_box: tuple[float, float] | None

    theta: np.ndarray | None = None
    gradient: tuple | None = None        # DP-GD: (row scale s, loss, clip)
    unclipped: float | None = None       # BAS rounds: residual rows clipped to this, not 1

    def mapped(self, pdf, raw=None, clip: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
        """The partition's kept columns and ``y`` mapped into the unit box (``clip`` > 1:
        the same map, clipped to ``[-clip, clip]``, as ``BoundedDesign.unclipped``)."""
        X, y = self.design(pdf) if raw is None else raw
        X = X[:, list(self.keep)]
        Xs = np.zeros_like(X)
        box = np.isfinite(self.clip_lo)
        if box.any():
            Xs[:, box] = _unit(X[:, box], self.clip_lo[box], self.clip_hi[box], clip)
        if self.intercept_col is not None:
            Xs[:, self.intercept_col] = 1.0
        return Xs, (y if self.y_box is None else _unit(y, *self.y_box, clip))  # 0/1: as it is

    def __call__(self, pdf, part: int) -> dict:
        raw = self.design(pdf)
        Xs, ys = self.mapped(pdf, raw)
        b = math.sqrt(len(self.keep))      # rows in the unit box: L2 norm <= sqrt(columns)
        if self.gradient is not None:      # one DP-GD step: the clipped gradient sum
            from ..estimators.dpgd import gradient_fixed
            s, loss, clip = self.gradient
            return {"grad": gradient_fixed(Xs / s, ys, self.theta, loss, clip)}
        if self.theta is not None:         # one boosting round: X'clip(y_r - X_r theta, -1, 1)
            Xr, yr = (Xs, ys) if self.unclipped is None else \
                self.mapped(pdf, raw, clip=self.unclipped)
            return {"grad": tdot_fixed(Xs, np.clip(yr - Xr @ self.theta, -1.0, 1.0), b, 1.0)}
        grid = GridMatrix(Xs, b)          # the rows quantised once for both sums: the same bits
        return {"gram": grid.tdot_fixed(), "xty": grid.tdot_fixed(ys, 1.0)}


#: A partition's group sums are taken in two halves of its rows, on two threads, when it has
#: at least this many rows and this many per group (:func:`group_sums`; below, one call: with
#: few rows per group the per-group products dominate and a second pass over the groups
#: costs more than a thread saves).
SPLIT_ROWS, SPLIT_PER_GROUP = 1 << 18, 64


def group_sums(X: np.ndarray, y: np.ndarray, labels: np.ndarray, m: int,
               acc: np.ndarray | None = None) -> np.ndarray:
    """Per-group sufficient statistics of ``(X, y)`` added into ``acc`` (m, K) (zeros when
    None): :func:`dpstats._kernels.partition_sums.add_group_sums`, one serial pass over the
    rows; :func:`sums_of` names its columns. A large partition with many rows per group
    (:data:`SPLIT_ROWS`, :data:`SPLIT_PER_GROUP`) is summed in two halves on two threads
    (:func:`dpstats._kernels.runtime.run_chunks`; the first half into ``acc``, the second into
    zeros, then added): the split is fixed by the rows and ``m``, not by the threads, so the
    floats are the same on one thread or two.

    >>> X = np.array([[1.0, 2.0], [1.0, 3.0], [1.0, 4.0]])
    >>> s = sums_of(group_sums(X, np.array([1.0, 2.0, 3.0]), np.array([0, 1, 0]), 2), 2)
    >>> full_gram(s["tri"], 2)[0].tolist(), s["xty"][:, 1].tolist()
    ([[2.0, 6.0], [6.0, 20.0]], [2.0, 6.0])
    """
    from .._kernels.partition_sums import add_group_sums, group_sums_width
    from .._kernels.runtime import run_chunks
    if acc is None:
        acc = np.zeros((int(m), group_sums_width(X.shape[1])))
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    n = X.shape[0]
    if n < SPLIT_ROWS or n < SPLIT_PER_GROUP * int(m):
        add_group_sums(acc, X, y, labels)
        return acc
    half, other = n // 2, np.zeros_like(acc)
    pieces = [(acc, 0, half), (other, half, n)]

    def run(lo, hi):
        for out, a, b in pieces[lo:hi]:
            add_group_sums(out, X[a:b], y[a:b], labels[a:b])
    run_chunks(run, 2, X.size)
    acc += other
    return acc


def sums_of(acc: np.ndarray, p: int) -> dict:
    """The columns of a group-sums accumulator by name: upper triangles of ``X'X`` (k, m),
    ``X'y`` (p, m), column sums (p, m), row counts, sums and sums of squares of ``y`` (m,)."""
    k = p * (p + 1) // 2
    return {"tri": acc[:, :k].T, "xty": acc[:, k:k + p].T, "sum": acc[:, k + p:k + 2 * p].T,
            "count": acc[:, k + 2 * p], "ysum": acc[:, k + 2 * p + 1],
            "yy": acc[:, k + 2 * p + 2]}


def full_gram(tri: np.ndarray, p: int) -> np.ndarray:
    """The (m, p, p) Gram matrices from their upper triangles (k, m)."""
    iu = np.triu_indices(p)
    gram = np.zeros((tri.shape[1], p, p))
    gram[:, iu[0], iu[1]] = tri.T
    gram[:, iu[1], iu[0]] = tri.T
    return gram


@dataclass(frozen=True)
class GroupPass:
    """Per-group sums of the kept columns (:func:`group_sums`), the groups given by random
    labels: ``source(start, index, n, m, seed)`` (:func:`seeded_labels`; tests inject another
    source to compare with the in-memory labels), ``start`` the partition's first global row
    ``starts[part]`` (no ``starts``: :func:`partition_key`). Run by :func:`fold_frame`: each
    call adds one partition into the chain's accumulator (None: a new one)."""

    design: PartitionDesign
    keep: tuple[int, ...]
    m: int
    seed: int
    source: object = seeded_labels
    starts: tuple[int, ...] = ()

    def __call__(self, acc, pdf, part: int) -> np.ndarray:
        X, y = self.design(pdf)
        X = kept_columns(X, self.keep)
        start = start_of(self.starts, part)
        labels = np.asarray(self.source(start, pdf.index, X.shape[0], self.m, self.seed))
        return group_sums(X, y, labels, self.m, acc)


@dataclass(frozen=True)
class SamplePass:
    """The ``keep`` columns and ``y`` of a Bernoulli(``q``) subsample of the partition's design
    rows (each row kept independently: :func:`~dpstats.mechanisms.sampling.seeded_sample` of
    the rows numbered from ``starts[part]``: the same rows whatever the partitioning)."""

    design: PartitionDesign
    keep: tuple[int, ...]
    q: float
    seed: int
    starts: tuple[int, ...] = ()

    def __call__(self, pdf, part: int) -> tuple[np.ndarray, np.ndarray]:
        X, y = self.design(pdf)
        rows = seeded_sample(self.seed, start_of(self.starts, part), X.shape[0], self.q)
        return X[rows][:, list(self.keep)], y[rows]


def sample_frame(ddf, fn) -> tuple[np.ndarray, np.ndarray]:
    """The subsample of every partition (:class:`SamplePass`), in partition order."""
    import dask
    parts = dask.compute(*[dask.delayed(fn)(part, i)
                           for i, part in enumerate(ddf.to_delayed())])
    return (np.ascontiguousarray(np.concatenate([x for x, _ in parts])),
            np.concatenate([y for _, y in parts]))
