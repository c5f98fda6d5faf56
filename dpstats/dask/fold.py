"""Folds over a dask frame: one accumulator per worker chain, for the aggregates whose size
grows with the number of Tukey groups (:func:`fold_frame`), and the fused first pass
(:class:`FusedPass`: the first pass's statistics and the group sums at a guessed number of
models in one read, :mod:`dpstats.dask.speculate`).

Like every pass of :mod:`dpstats.dask.passes`, nothing here is a release: the totals go to the
mechanisms on the client. The partitioning and the chains change only the order in which
floats are added.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._kernels.design_rows import rows_below
from .._kernels.partition_sums import group_sums_width
from ..mechanisms.centre import cells_from_counts
from ..mechanisms.gdp import grid_cells
from ..mechanisms.sampling import seeded_uniforms
from .held import held_rows, renumbered, rows_below_q, whole_chains
from .passes import (
    RAW_MAX_ROWS,
    FirstPass,
    _unique,
    first_counts,
    group_sums,
    kept_columns,
    merge,
    partition_key,
    row_starts,
    seeded_labels,
)

__all__ = ["fold_frame", "fold_chains", "chain_count", "FusedPass", "fused_total",
           "fused_stats", "groups_of", "add_partials", "held_rows", "rows_below_q", "whole_chains",
           "chain_sums", "Held", "pairwise", "identity", "PIN_CHAINS", "FOLD_CHAINS"]

#: Pin each chain of :func:`fold_frame` to one worker on a distributed client (False: let the
#: scheduler place every step, as before; benchmarks/dask_scale.py compares the two).
PIN_CHAINS = True
#: The chains of every fold (:func:`fold_frame`; fewer when the frame has fewer partitions):
#: a public setting, never the cluster's worker count, so that no released value depends on
#: the cluster. The chains are placed on the listed workers round-robin (placement only).
#: Raise it on a larger cluster for more parallel folds: seeded fits are then comparable only
#: with fits made at the same setting.
FOLD_CHAINS = 2


@dataclass(frozen=True)
class FusedPass:
    """:class:`FirstPass` and, in the same read of each partition, the per-group sums of all
    design columns at ``m`` models with labels from ``source(start, index, n, m, seed)``
    (:mod:`dpstats.dask.speculate`). The global row numbers are not known during this pass
    (it counts the rows): while a chain's subsample holds every row, the labels wait for
    them (``"deferred"``, below), and every row of a frame of at most :data:`SAMPLE_ROWS`
    rows gets its label from its global number, as in every later pass
    (:func:`~dpstats.dask.numbering.row_starts`); once a subsample drops rows, the labels and
    the subsample's uniforms are keyed by partition
    (:func:`~dpstats.dask.numbering.partition_key`: still independent per row, but a seeded
    fit of a larger frame then depends on the partitioning where it uses them). Run by
    :func:`fold_frame` with :func:`fused_total` as the finish: the accumulator holds the row
    count (and each partition's, ``"rows"``), the log-grid counts, the centre's cell-key counts
    (added as arrays over the public keys, no distinct values merged per partition), the raw
    distinct values while every partition is small, the subsample of :func:`thinned` and
    ``"groups"``, one (m, K) array per worker chain. While a chain's subsample still holds every row
    of its partitions, their group sums wait (``"deferred"``): they are taken from those rows
    (:func:`groups_of`: the same floats) only if the guess is used, or when the subsample first
    drops rows; so a guess that misses on a small frame costs no group sums."""

    first: FirstPass
    m: int
    seed: int
    source: object = seeded_labels
    sample_seed: int | None = None
    #: the subsample's cap, read from :data:`SAMPLE_ROWS` where the pass is made (the client)
    cap: int = field(default_factory=lambda: SAMPLE_ROWS)

    def __call__(self, acc, pdf, part: int) -> dict:
        X, y = self.first.design(pdf)
        if acc is None:
            acc = {"n": 0, "hist": None, "keys": None, "raw": [], "groups": None,
                   "deferred": None, "spec": (int(self.m), self.seed, self.source),
                   "rows": {}, "useed": self.sample_seed,
                   "sample": None if self.sample_seed is None else
                   empty_sample(X.shape[1], self.cap)}
            if self.sample_seed is None:
                acc["groups"] = np.zeros((int(self.m), group_sums_width(X.shape[1])))
            else:
                acc["deferred"] = [[]]          # one chain, no partition yet
        if self.sample_seed is not None:
            u = seeded_uniforms(self.sample_seed, partition_key(part), X.shape[0])
            joined = thinned(acc["sample"], partition_sample(X, y, u, part, pdf.index))
            if acc["deferred"] is not None and joined["thr"] < 1.0:
                acc["groups"], acc["deferred"] = groups_of(acc), None   # the rows so far
            acc["sample"] = joined
        acc["n"] += int(X.shape[0])
        acc["rows"][int(part)] = int(X.shape[0])
        acc["hist"], keys = first_counts(X, y, acc["hist"] if acc["hist"] is not None else
                                         np.zeros((X.shape[1] + 1, grid_cells()),
                                                  dtype=np.int64),
                                         acc["keys"], self.first.centre)
        if self.first.centre:
            acc["keys"] = keys
            if acc["raw"] is not None:          # raw values only while every piece is small
                mine = [_unique(X[:, j]) for j in range(X.shape[1])] \
                    if X.shape[0] < RAW_MAX_ROWS else None
                acc["raw"] = mine if not acc["raw"] or mine is None else \
                    merge({"raw": acc["raw"]}, {"raw": mine})["raw"]
        if acc["deferred"] is not None:         # every row of the chain is in its sample
            acc["deferred"][0].append((X, y, part, pdf.index))
        else:
            labels = np.asarray(self.source(partition_key(part), pdf.index, X.shape[0],
                                            self.m, self.seed))
            acc["groups"] = group_sums(X, y, labels, self.m, acc["groups"])
        return acc


def chain_sums(pieces, m: int, seed: int, source, keep=None, starts=None) -> np.ndarray:
    """One chain's group sums of whole partitions ``(X, y, part, index)`` in chain order,
    as the fold's steps add them (:class:`FusedPass`, :class:`~dpstats.dask.passes.
    GroupPass`: the same labels, kernel and order, so the same floats); ``keep``: those
    columns of ``X`` only; ``starts``: the partitions' first global rows (None: keyed by
    partition, :func:`~dpstats.dask.numbering.partition_key`)."""
    acc = None
    for X, y, part, index in pieces:
        X = kept_columns(X, keep)
        start = partition_key(part) if starts is None else starts[part]
        labels = np.asarray(source(start, index, X.shape[0], m, seed))
        acc = group_sums(X, y, labels, m, acc)
    return acc


def groups_of(acc: dict, final: bool = False) -> np.ndarray:
    """A :class:`FusedPass` accumulator's group sums: taken in its steps, or, while its
    chains kept every row (``"deferred"``: the chains' whole partitions), summed now, chain
    by chain and the chains added as :func:`fold_frame` adds them (:func:`pairwise`). With
    ``final`` (the fold's total) deferred sums hold every row of the frame, and their labels
    come from the rows' global numbers (:func:`~dpstats.dask.numbering.row_starts`); in the
    middle of the fold they are keyed by partition."""
    if acc["deferred"] is None:
        return acc["groups"]
    starts = row_starts(acc["rows"]) if final else None
    return pairwise([chain_sums(chain, *acc["spec"], starts=starts)
                     for chain in acc["deferred"]], add_partials)


#: Most rows a chain keeps of the speculative subsample (:func:`thinned`): twice the Tukey
#: design moments' :data:`~dpstats.estimators.inference.tukey.MOMENT_ROWS`, so that they
#: too read it without a pass of their own.
SAMPLE_ROWS = 1 << 21


def empty_sample(p: int, cap: int | None = None) -> dict:
    """A subsample with no rows yet, at threshold 1 (every row below it), to hold at most
    ``cap`` rows (default :data:`SAMPLE_ROWS`)."""
    return {"pieces": [], "thr": 1.0, "p": p, "cap": cap or SAMPLE_ROWS}


def partition_sample(X, y, u, part: int = 0, index=None) -> dict:
    """A partition's rows as a subsample at threshold 1 (no copy: :func:`thinned` filters);
    the partition's number and row index stay with the rows while none is dropped."""
    return {"pieces": [(X, y, u, 1.0, part, index)], "thr": 1.0, "p": X.shape[1]}


def thinned(a: dict, b: dict) -> dict:
    """Two speculative subsamples (rows with their uniforms ``u`` below ``thr``) joined at
    the smaller threshold, halved until at most ``a``'s cap (:data:`SAMPLE_ROWS`) rows
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

    cap = a.get("cap", SAMPLE_ROWS)
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
    """The subsample's rows joined: ``{"X", "y", "u", "thr"}``."""
    pieces = sample["pieces"]
    if not pieces:
        return {"X": np.empty((0, sample["p"])), "y": np.empty(0), "u": np.empty(0),
                "thr": sample["thr"]}
    return {"X": np.concatenate([pc[0] for pc in pieces]),
            "y": np.concatenate([pc[1] for pc in pieces]),
            "u": np.concatenate([pc[2] for pc in pieces]), "thr": sample["thr"]}


def fused_stats(total: dict) -> dict:
    """The finish of a :class:`FusedPass` fold (on a worker) whose total stays there
    (:class:`Held`): the statistics of :class:`FirstPass` (histograms as floats, each column's
    centre cells from its key counts) and the subsample's threshold; the group sums and the
    subsample's rows are read from the held total when needed (:func:`groups_of`,
    :func:`held_rows`)."""
    out = {"n": total["n"], "hist": total["hist"].astype(np.float64), "rows": total["rows"],
           "sample": None if total["sample"] is None else {"thr": total["sample"]["thr"]}}
    if total["keys"] is not None:
        out["cells"] = [cells_from_counts(row) for row in total["keys"]]
        out["raw"] = total["raw"]
    return out


def fused_total(total: dict) -> dict:
    """:func:`fused_stats` with the ``"groups"`` sums and the subsample's rows
    (:func:`sample_rows`) joined: the whole total, as it would come to the client."""
    out = fused_stats(total)
    if out["sample"] is not None and total["sample"]["thr"] == 1.0:   # the rows' own uniforms
        total = {**total, "sample": renumbered(total)}
    out["groups"] = groups_of(total, final=True)
    out["sample"] = None if total["sample"] is None else sample_rows(total["sample"])
    return out


def identity(total):
    """The finish of a fold whose whole total comes back."""
    return total


def add_partials(a, b):
    """Two chains' partial totals added (arrays in place, dicts key by key)."""
    if a is None or b is None:
        return b if a is None else a
    if isinstance(a, dict):
        if "keys" in a:                 # FusedPass accumulators
            return _add_fused(a, b)
        return merge(a, b)
    a += b                         # in place: the chains' accumulators are not read again
    return a


def _add_fused(a: dict, b: dict) -> dict:
    """Two chains' :class:`FusedPass` accumulators: counts and arrays add, raw values merge,
    subsamples join (:func:`thinned`); the group sums stay deferred while the joined
    subsample holds every row, else each side's are summed (:func:`groups_of`) and added."""
    raw = None if a["raw"] is None or b["raw"] is None else \
        merge({"raw": a["raw"]}, {"raw": b["raw"]})["raw"]
    out = {key: add_partials(a[key], b[key]) for key in ("n", "hist", "keys")}
    out.update(raw=raw, spec=a["spec"], groups=None, deferred=None, useed=a["useed"],
               rows={**a["rows"], **b["rows"]},
               sample=None if a["sample"] is None else thinned(a["sample"], b["sample"]))
    if a["deferred"] is not None and b["deferred"] is not None and out["sample"]["thr"] == 1.0:
        out["deferred"] = a["deferred"] + b["deferred"]
    else:
        out["groups"] = add_partials(groups_of(a), groups_of(b))
    return out


def pairwise(items: list, add):
    """``items`` added up pairwise, level by level (``add(a, b)``), the order of every fold's
    chains (:func:`fold_frame`); ``add`` may build tasks or futures instead of values."""
    while len(items) > 1:
        items = [add(*items[i:i + 2]) if i + 1 < len(items) else items[i]
                 for i in range(0, len(items), 2)]
    return items[0]


class Held:
    """A fold's total kept where it was computed (a future on a worker of a distributed
    client; the value itself on dask's local schedulers): :meth:`apply` runs a function of it
    there and returns only the function's result (the total never comes to the client)."""

    def __init__(self, value, client=None):
        self.value, self.client = value, client

    def apply(self, fn, *args):
        """``fn(total, *args)``, computed where the total is."""
        return on_worker(self, fn, *args)


def on_worker(held: Held, fn, *args):
    """``fn(held total, *args)`` on the total's worker (a module function, so that a
    benchmark can time these round trips: benchmarks/dask_scale.py)."""
    if held.client is None:
        return fn(held.value, *args)
    return held.client.submit(fn, held.value, *args, pure=False).result()


def chain_count(parts: int, chains: int | None = None) -> int:
    """The chains of a fold over ``parts`` partitions: ``chains``, default
    :data:`FOLD_CHAINS` (public: neither the data nor the cluster), at most one per partition.

    >>> chain_count(1), chain_count(7), chain_count(7, 3)
    (1, 2, 3)
    """
    return max(1, min(parts, chains or fold_chains()))


def fold_frame(ddf, fn, finish, chains: int | None = None, hold: bool = False):
    """``acc = fn(acc, partition, index)`` over the partitions of ``ddf`` in ``chains``
    sequential chains (partition i in chain ``i % chains``; each chain's accumulator stays on
    its worker, one array however many partitions), the chains added up pairwise and
    ``finish(total)`` computed on a worker: only what ``finish`` returns comes to the client.
    ``chains`` (default :data:`FOLD_CHAINS`) is public: it is read from neither the data nor
    the cluster (the workers only decide where each chain runs). With
    ``hold``, ``(finish(total), Held(total))``: the total stays on its worker for later
    :meth:`Held.apply` calls.

    On a distributed client each chain, its partitions' reads included, is pinned to one
    worker (:func:`_finished`): the accumulator never moves between workers until the chains
    are added (unpinned, each step ran where its partition had been read and the chain's
    tens of MB of sums followed it from worker to worker)."""
    import dask
    parts = ddf.to_delayed()
    client = _client()
    chains = chain_count(len(parts), chains)
    accs = [None] * chains
    for i, part in enumerate(parts):
        accs[i % chains] = dask.delayed(fn, pure=False)(accs[i % chains], part, i)
    workers = sorted(client.scheduler_info()["workers"]) if client is not None else []
    if workers and PIN_CHAINS:       # (none listed: a cluster under strain; leave placement)
        futures = [client.compute(acc, workers=[workers[k % len(workers)]],
                                  allow_other_workers=True) for k, acc in enumerate(accs)]
        return _finished(client, pairwise(futures, lambda a, b: client.submit(
            add_partials, a, b, pure=False)), finish, hold)
    total = pairwise(accs, lambda a, b: dask.delayed(add_partials, pure=False)(a, b))
    if hold and client is not None:
        return _finished(client, client.compute(total), finish, hold)
    if hold:
        value = dask.compute(total)[0]
        return finish(value), Held(value)
    return dask.compute(dask.delayed(finish, pure=False)(total))[0]


def _finished(client, total, finish, hold: bool):
    """``finish`` of the ``total`` future run on a worker (pinned chains: each computed on its
    own worker, loose, so that a chain whose worker leaves the cluster runs elsewhere instead
    of waiting for ever); with ``hold`` also the total, kept there."""
    out = client.submit(finish, total, pure=False).result()
    return (out, Held(total, client)) if hold else out


def _client():
    """The current distributed client, or None (the local schedulers)."""
    try:
        from distributed import get_client
        return get_client()
    except (ImportError, ValueError):
        return None


def fold_chains() -> int:
    """Chains of :func:`fold_frame`: :data:`FOLD_CHAINS`, whatever the client and its
    workers. The chains decide the order in which the floats of a
    fold are added, so a count read from the cluster (the workers the scheduler lists at that
    moment, as before) made a seeded release depend on the cluster's state."""
    return max(1, int(FOLD_CHAINS))
