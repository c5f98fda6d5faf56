"""The first pass's subsample: joined and thinned in the fold's steps (:func:`thinned`), then
read where the total is held (:class:`~dpstats.dask.fold.Held`): its rows below a rate, and
its whole partitions dealt into fold chains.

Each row's uniform was drawn from its global row number in the first pass
(:class:`~dpstats.dask.fold.FusedPass`): the rows below any ``q`` are the rows a
:class:`~dpstats.dask.passes.SamplePass` with the same seed keeps, in the frame's row order
(:func:`in_order`), whatever the partitioning. Nothing here is a release.
"""

from __future__ import annotations

import numpy as np

from .._kernels.design_rows import rows_below

__all__ = ["held_rows", "rows_below_q", "in_order", "whole_chains", "thinned",
           "partition_sample", "sample_rows"]


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
    pieces = in_order(total["sample"])
    if not pieces:
        return np.empty((0, total["sample"]["p"])), np.empty(0)
    parts = []
    for X, y, u, *_ in pieces:
        rows = u < q
        parts.append((X, y) if rows.all() else (X[rows], y[rows]))
    if len(parts) == 1:
        return parts[0]
    return np.concatenate([X for X, _ in parts]), np.concatenate([y for _, y in parts])


def in_order(sample: dict) -> list:
    """A subsample's pieces in partition order (one piece per partition): its rows in the
    frame's row order, whatever the chains that joined them."""
    return sorted(sample["pieces"], key=lambda pc: pc[4])


def whole_chains(total: dict, chains: int) -> list:
    """The held subsample's partitions dealt into ``chains`` fold chains as
    :func:`~dpstats.dask.fold.fold_frame` deals them (partition i to chain ``i % chains``,
    in order), each a list of ``(X, y, part, index)``: only when the subsample holds every row of
    the frame (threshold 1)."""
    assert total["sample"]["thr"] == 1.0
    pieces = in_order(total["sample"])
    return [[(X, y, part, index) for X, y, _, _, part, index in pieces
             if part % chains == k] for k in range(chains)]


def partition_sample(X, y, u, part: int = 0, index=None) -> dict:
    """A partition's rows as a subsample at threshold 1 (no copy: :func:`thinned` filters);
    the partition's number and row index stay with the rows while none is dropped."""
    return {"pieces": [(X, y, u, 1.0, part, index)], "thr": 1.0, "p": X.shape[1]}


def thinned(a: dict, b: dict) -> dict:
    """Two speculative subsamples (rows with their uniforms ``u`` below ``thr``) joined at
    the smaller threshold, halved until at most ``a``'s cap (:data:`~dpstats.dask.fold.
    SAMPLE_ROWS`) rows
    remain. The rows
    below any ``q <= thr`` are then exactly the rows of the frame whose uniform is below
    ``q``: the Bernoulli(``q``) subsample :func:`~dpstats.mechanisms.sampling.seeded_sample`
    draws from the same seed, whatever the partitioning or the thinning. (The threshold
    depends on the row count, but only decides whether the Tukey windows need a pass of
    their own: the rows they read are the same either way.) The rows are kept as pieces
    ``(X, y, u, t, part, index)`` (every ``u < t``; ``index`` None once filtered), filtered only
    when the threshold drops below ``t`` and joined once (:func:`sample_rows`): a chain does
    not copy its whole subsample at each partition. At threshold 1 the pieces are whole
    partitions: every row of the frame is there."""
    thr = min(a["thr"], b["thr"])
    pieces = a["pieces"] + b["pieces"]

    def count(t: float) -> int:
        return sum(len(pc[2]) if pc[3] <= t else int(np.count_nonzero(pc[2] < t))
                   for pc in pieces)

    cap = a["cap"]
    while count(thr) > cap:
        thr /= 2.0
    kept = []
    for X, y, u, tp, part, index in pieces:
        if tp > thr:        # one pass: dpstats._kernels.design_rows.rows_below
            X, y, u, tp, index = *rows_below(np.ascontiguousarray(X), y, u, thr), thr, None
        if len(u) or tp == 1.0:            # whole partitions stay, even empty ones
            kept.append((X, y, u, tp, part, index))
    return {"pieces": kept, "thr": thr, "p": a["p"], "cap": cap}


def sample_rows(sample: dict) -> dict:
    """The subsample's rows joined, in the frame's row order (the pieces in partition
    order; whatever the chains, the same rows in the same order): ``{"X", "y", "u",
    "thr"}``."""
    pieces = in_order(sample)
    if not pieces:
        return {"X": np.empty((0, sample["p"])), "y": np.empty(0), "u": np.empty(0),
                "thr": sample["thr"]}
    return {"X": np.concatenate([pc[0] for pc in pieces]),
            "y": np.concatenate([pc[1] for pc in pieces]),
            "u": np.concatenate([pc[2] for pc in pieces]), "thr": sample["thr"]}
