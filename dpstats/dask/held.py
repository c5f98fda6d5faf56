"""Reading a first pass's total where it is held (:class:`~dpstats.dask.fold.Held`): its
subsample's rows below a rate, and its whole partitions dealt into fold chains.

While the subsample holds every row of the frame (threshold 1), each row's uniform is drawn
again from its global row number (:func:`renumbered`): the rows below any ``q`` are then the
rows a :class:`~dpstats.dask.passes.SamplePass` with the same seed keeps, whatever the
partitioning. Nothing here is a release.
"""

from __future__ import annotations

import numpy as np

from ..mechanisms.sampling import seeded_uniforms
from .numbering import row_starts

__all__ = ["held_rows", "rows_below_q", "renumbered", "whole_chains"]


def held_rows(total: dict, q: float, keep) -> tuple[np.ndarray, np.ndarray]:
    """The ``keep`` columns and ``y`` of the held subsample's rows whose uniform is below
    ``q`` (at most its threshold), in the order of :func:`~dpstats.dask.fold.sample_rows`
    (the same rows and values as filtering its joined arrays; only these come to the
    client)."""
    X, y = rows_below_q(total, q)
    return np.ascontiguousarray(X[:, list(keep)]), y


def rows_below_q(total: dict, q: float) -> tuple[np.ndarray, np.ndarray]:
    """Every design column and ``y`` of the held subsample's rows below ``q``, in the order of
    :func:`~dpstats.dask.fold.sample_rows`; a piece whose rows are all below ``q`` is not
    copied, nor is a single piece joined (so at ``q = 1`` on one partition these are the partition's
    own arrays: read them, never write)."""
    if total["sample"]["thr"] == 1.0:
        total = {**total, "sample": renumbered(total)}
    pieces = total["sample"]["pieces"]
    if not pieces:
        return np.empty((0, total["sample"]["p"])), np.empty(0)
    parts = []
    for X, y, u, *_ in pieces:
        rows = u < q
        parts.append((X, y) if rows.all() else (X[rows], y[rows]))
    if len(parts) == 1:
        return parts[0]
    return np.concatenate([X for X, _ in parts]), np.concatenate([y for _, y in parts])


def renumbered(total: dict) -> dict:
    """A fold total's subsample at threshold 1 (every row of the frame, whole partitions)
    with each row's uniform drawn again from its global row number
    (:func:`~dpstats.dask.numbering.row_starts`; in the pass they were keyed by partition):
    the rows below any ``q`` are then the rows :class:`~dpstats.dask.passes.SamplePass`
    keeps with the same seed, whatever the partitioning, and in the same order (the pieces in
    partition order)."""
    sample, starts = total["sample"], row_starts(total["rows"])
    pieces = [(X, y, seeded_uniforms(total["useed"], starts[part], len(u)), tp, part, index)
              for X, y, u, tp, part, index in sorted(sample["pieces"], key=lambda pc: pc[4])]
    return {**sample, "pieces": pieces}


def whole_chains(total: dict, chains: int) -> list:
    """The held subsample's partitions dealt into ``chains`` fold chains as
    :func:`~dpstats.dask.fold.fold_frame` deals them (partition i to chain ``i % chains``,
    in order), each a list of ``(X, y, part, index)``: only when the subsample holds every row of
    the frame (threshold 1)."""
    assert total["sample"]["thr"] == 1.0
    pieces = sorted(total["sample"]["pieces"], key=lambda pc: pc[4])
    return [[(X, y, part, index) for X, y, _, _, part, index in pieces
             if part % chains == k] for k in range(chains)]
