"""Folds over a dask frame: one accumulator per worker chain, for the aggregates whose size
grows with the number of Tukey groups (:func:`fold_frame`), and the fused first pass
(:class:`FusedPass`: the first pass's statistics and the group sums at a guessed number of
models in one read, :mod:`dpstats.dask.speculate`).

Like every pass of :mod:`dpstats.dask.passes`, nothing here is a release: the totals go to the
mechanisms on the client. The partitioning and the chains change only the order in which
floats are added.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from .._kernels.partition_sums import group_sums_width
from ..mechanisms.centre import cells_from_counts
from ..mechanisms.gdp import grid_cells
from ..mechanisms.sampling import seeded_uniforms
from .held import (
    held_rows,
    partition_sample,
    rows_below_q,
    sample_rows,
    thinned,
    whole_chains,
)
from .numbering import numbered_chains, placement
from .passes import (
    RAW_MAX_ROWS,
    FirstPass,
    _unique,
    first_counts,
    group_sums,
    kept_columns,
    merge,
    partition_key,
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
#: Seconds between the checks, while a placed fold runs, that its workers are still there
#: (:func:`_placed`).
CHECK_SECONDS = 2.0


@dataclass(frozen=True)
class FusedPass:
    """:class:`FirstPass` and, in the same read of each partition, the per-group sums of all
    design columns at ``m`` models with labels from ``source(start, index, n, m, seed)``
    (:mod:`dpstats.dask.speculate`) and a Bernoulli subsample's uniforms
    (:func:`~dpstats.mechanisms.sampling.seeded_uniforms`), both keyed by each row's global
    design row number: :func:`fold_frame` gives each step its partition's first row
    ``start`` from the earlier partitions' row counts, in the same graph
    (:func:`~dpstats.dask.numbering.numbered_chains`), so every label and uniform is the
    one every later pass and the in-memory design give that row, whatever the partitioning.
    Privacy (as :func:`~dpstats.dask.numbering.seeded_labels`): each draw is a function of a
    client seed and the row's number; distinct rows have distinct numbers, so the labels are
    independent across rows and of the data, and each row is in exactly one group.

    The accumulator holds the row count (and each partition's, ``"rows"``, and first row,
    ``"starts"``), the log-grid counts, the centre's cell-key counts (added as arrays over the
    public keys, no distinct values merged per partition), the raw distinct values while every
    partition is small, the subsample of :func:`thinned` and ``"groups"``, one (m, K) array
    per worker chain. While a chain's subsample still holds every row of its partitions, their
    group sums wait (``"deferred"``): they are taken from those rows (:func:`groups_of`: the
    same labels and floats) only if the guess is used, or when the subsample first drops
    rows; so a guess that misses on a small frame costs no group sums."""

    first: FirstPass
    m: int
    seed: int
    source: object = seeded_labels
    sample_seed: int | None = None
    #: the subsample's cap, read from :data:`SAMPLE_ROWS` where the pass is made (the client)
    cap: int = field(default_factory=lambda: SAMPLE_ROWS)

    def prepare(self, pdf) -> tuple:
        """The partition's design ``(X, y, index)`` (its rows are counted from it)."""
        X, y = self.first.design(pdf)
        return X, y, pdf.index

    def step(self, acc, piece: tuple, part: int, start: int) -> dict:
        """Partition ``part``'s design ``piece`` (:meth:`prepare`), its rows numbered from
        ``start``, added to the chain's accumulator ``acc`` (None: a new one)."""
        X, y, index = piece
        if acc is None:
            acc = {"n": 0, "hist": None, "keys": None, "raw": [], "groups": None,
                   "deferred": None, "spec": (int(self.m), self.seed, self.source),
                   "rows": {}, "starts": {}, "useed": self.sample_seed,
                   "sample": None if self.sample_seed is None else
                   empty_sample(X.shape[1], self.cap)}
            if self.sample_seed is None:
                acc["groups"] = np.zeros((int(self.m), group_sums_width(X.shape[1])))
            else:
                acc["deferred"] = [[]]          # one chain, no partition yet
        acc["rows"][int(part)], acc["starts"][int(part)] = int(X.shape[0]), int(start)
        if self.sample_seed is not None:
            u = seeded_uniforms(self.sample_seed, int(start), X.shape[0])
            joined = thinned(acc["sample"], partition_sample(X, y, u, part, index))
            if acc["deferred"] is not None and joined["thr"] < 1.0:
                acc["groups"], acc["deferred"] = groups_of(acc), None   # the rows so far
            acc["sample"] = joined
        acc["n"] += int(X.shape[0])
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
            acc["deferred"][0].append((X, y, part, index))
        else:
            labels = np.asarray(self.source(int(start), index, X.shape[0], self.m, self.seed))
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


def groups_of(acc: dict) -> np.ndarray:
    """A :class:`FusedPass` accumulator's group sums: taken in its steps, or, while its
    chains kept every row (``"deferred"``: the chains' whole partitions), summed now, chain
    by chain and the chains added as :func:`fold_frame` adds them (:func:`pairwise`), each
    row labelled by its global number (the partitions' ``"starts"``)."""
    if acc["deferred"] is None:
        return acc["groups"]
    return pairwise([chain_sums(chain, *acc["spec"], starts=acc["starts"])
                     for chain in acc["deferred"]], add_partials)


#: Most rows a chain keeps of the speculative subsample (:func:`thinned`): twice the Tukey
#: design moments' :data:`~dpstats.estimators.inference.tukey.MOMENT_ROWS`, so that they
#: too read it without a pass of their own.
SAMPLE_ROWS = 1 << 21


def empty_sample(p: int, cap: int | None = None) -> dict:
    """A subsample with no rows yet, at threshold 1 (every row below it), to hold at most
    ``cap`` rows (default :data:`SAMPLE_ROWS`)."""
    return {"pieces": [], "thr": 1.0, "p": p, "cap": cap or SAMPLE_ROWS}


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
    out["groups"] = groups_of(total)
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
               rows={**a["rows"], **b["rows"]}, starts={**a["starts"], **b["starts"]},
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


def fold_frame(ddf, fn, finish, chains: int | None = None, hold: bool = False,
               pin: bool = True):
    """``acc = fn(acc, partition, index)`` over the partitions of ``ddf`` in ``chains``
    sequential chains (partition i in chain ``i % chains``; each chain's accumulator stays on
    its worker, one array however many partitions), the chains added up pairwise and
    ``finish(total)`` computed on a worker: only what ``finish`` returns comes to the client.
    A pass with ``prepare`` and ``step`` (:class:`FusedPass`) is folded as ``acc =
    fn.step(acc, fn.prepare(partition), index, start)``, ``start`` the partition's first
    global design row, summed from the earlier partitions' row counts in the same graph
    (:func:`~dpstats.dask.numbering.numbered_chains`: no pass of its own).
    ``chains`` (default :data:`FOLD_CHAINS`) is public: it is read from neither the data nor
    the cluster (the workers only decide where each chain runs). With
    ``hold``, ``(finish(total), Held(total))``: the total stays on its worker for later
    :meth:`Held.apply` calls.

    On a distributed client (and with ``pin`` and :data:`PIN_CHAINS`) the fold is one graph
    in which each chain's tasks, its partitions' reads included, are restricted to one worker
    (:func:`~dpstats.dask.numbering.placement`, given to the scheduler as a per-key
    ``workers`` annotation on the graph as sent, unoptimised, so that no optimisation renames
    a placed key): the accumulator and the partitions never move between workers until the
    chains are added; only the row counts (ints) cross (unpinned, each step ran where its
    partition had been read and the chain's tens of MB of sums followed it). The
    restrictions are strict: loose ones let an idle worker steal the other chain's reads
    (no inputs: free to steal), whose partitions then moved back (design note 70). Should
    a chain's worker leave the cluster, the fold is made again unplaced (:func:`_placed`:
    the same values; placement decides none)."""
    import dask
    parts = ddf.to_delayed()
    client = _client()
    chains = chain_count(len(parts), chains)
    if hasattr(fn, "prepare"):
        accs, owned = numbered_chains(parts, fn, chains)
    else:
        accs, owned = [None] * chains, []
        for i, part in enumerate(parts):
            accs[i % chains] = dask.delayed(fn, pure=False)(accs[i % chains], part, i)
            owned += [(i % chains, part, True, None), (i % chains, accs[i % chains], False, None)]
    total = pairwise(accs, lambda a, b: dask.delayed(add_partials, pure=False)(a, b))
    workers = sorted(client.scheduler_info()["workers"]) if client is not None else []
    if workers and PIN_CHAINS and pin:  # (none listed: a cluster under strain; unplaced)
        where, order = placement(dict(total.__dask_graph__()), owned, workers)
        where, order = defaultdict(list, where), defaultdict(int, order)
        with dask.annotate(workers=where.__getitem__, allow_other_workers=False,
                           priority=order.__getitem__):
            future = client.compute(total, optimize_graph=False)
        if not _placed(client, future, set().union(*where.values())):
            client.cancel(future)
            return fold_frame(ddf, fn, finish, chains, hold, pin=False)
        return _finished(client, future, finish, hold)
    if hold and client is not None:
        return _finished(client, client.compute(total), finish, hold)
    if hold:
        value = dask.compute(total)[0]
        return finish(value), Held(value)
    return dask.compute(dask.delayed(finish, pure=False)(total))[0]


def _placed(client, future, workers: set) -> bool:
    """Wait for a placed fold's ``future``; False as soon as one of the ``workers`` its tasks
    are restricted to has left the cluster (its tasks would wait for ever)."""
    from distributed import wait
    while True:
        try:
            wait(future, timeout=CHECK_SECONDS)
            return True
        except TimeoutError:
            if not workers <= set(client.scheduler_info()["workers"]):
                return False


def _finished(client, total, finish, hold: bool):
    """``finish`` of the ``total`` future run on a worker; with ``hold`` also the total,
    kept there."""
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
