"""Folds over a dask frame: one accumulator per worker chain, for the aggregates whose size
grows with the number of Tukey groups (:func:`fold_frame`), and the fused first pass
(:class:`FusedPass`: the first pass's statistics and the group sums at a guessed number of
models in one read, :mod:`dpstats.dask.speculate`).

Like every pass of :mod:`dpstats.dask.passes`, nothing here is a release: the totals go to the
mechanisms on the client. The partitioning and the chains change only the order in which
floats are added.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._kernels.design_rows import rows_below
from .._kernels.partition_sums import group_sums_width
from ..mechanisms.centre import cells_from_counts
from ..mechanisms.gdp import grid_cells
from ..mechanisms.sampling import seeded_uniforms
from .passes import (
    RAW_MAX_ROWS,
    FirstPass,
    _unique,
    cell_counts,
    group_sums,
    log_counts,
    merge,
    seeded_labels,
)

__all__ = ["fold_frame", "fold_chains", "FusedPass", "fused_total", "identity", "PIN_CHAINS"]

#: Pin each chain of :func:`fold_frame` to one worker on a distributed client (False: let the
#: scheduler place every step, as before; benchmarks/dask_scale.py compares the two).
PIN_CHAINS = True


@dataclass(frozen=True)
class FusedPass:
    """:class:`FirstPass` and, in the same read of each partition, the per-group sums of all
    design columns at ``m`` models with labels from ``source(part, index, n, m, seed)``
    (:mod:`dpstats.dask.speculate`). Run by :func:`fold_frame` with :func:`fused_total` as
    the finish: the accumulator holds the row count, the log-grid counts, the centre's
    cell-key counts (added as arrays over the public keys, no distinct values merged per
    partition), the raw distinct values while every partition is small, and ``"groups"``,
    one (m, K) array per worker chain."""

    first: FirstPass
    m: int
    seed: int
    source: object = seeded_labels
    sample_seed: int | None = None

    def __call__(self, acc, pdf, part: int) -> dict:
        X, y = self.first.design(pdf)
        if acc is None:
            acc = {"n": 0, "hist": None, "keys": None, "raw": [],
                   "groups": np.zeros((int(self.m), group_sums_width(X.shape[1]))),
                   "sample": None if self.sample_seed is None else empty_sample(X.shape[1])}
        if self.sample_seed is not None:
            u = seeded_uniforms(self.sample_seed, part, X.shape[0])
            acc["sample"] = thinned(acc["sample"], partition_sample(X, y, u))
        acc["n"] += int(X.shape[0])
        acc["hist"] = log_counts(X, y, acc["hist"] if acc["hist"] is not None else
                                 np.zeros((X.shape[1] + 1, grid_cells()), dtype=np.int64))
        if self.first.centre:
            acc["keys"] = cell_counts(X, acc["keys"])
            if acc["raw"] is not None:          # raw values only while every piece is small
                mine = [_unique(X[:, j]) for j in range(X.shape[1])] \
                    if X.shape[0] < RAW_MAX_ROWS else None
                acc["raw"] = mine if not acc["raw"] or mine is None else \
                    merge({"raw": acc["raw"]}, {"raw": mine})["raw"]
        labels = np.asarray(self.source(part, pdf.index, X.shape[0], self.m, self.seed))
        group_sums(X, y, labels, self.m, acc["groups"])
        return acc


#: Most rows a chain keeps of the speculative subsample (:func:`thinned`): twice the Tukey
#: design moments' :data:`~dpstats.estimators.inference.tukey.MOMENT_ROWS`, so that they
#: too read it without a pass of their own.
SAMPLE_ROWS = 1 << 21


def empty_sample(p: int) -> dict:
    """A subsample with no rows yet, at threshold 1 (every row below it)."""
    return {"pieces": [], "thr": 1.0, "p": p}


def partition_sample(X, y, u) -> dict:
    """A partition's rows as a subsample at threshold 1 (no copy: :func:`thinned` filters)."""
    return {"pieces": [(X, y, u, 1.0)], "thr": 1.0, "p": X.shape[1]}


def thinned(a: dict, b: dict) -> dict:
    """Two speculative subsamples (rows with their uniforms ``u`` below ``thr``) joined at
    the smaller threshold, halved until at most :data:`SAMPLE_ROWS` rows remain. The rows
    below any ``q <= thr`` are then exactly the rows of the frame whose uniform is below
    ``q``: the Bernoulli(``q``) subsample :func:`~dpstats.mechanisms.sampling.seeded_sample`
    draws from the same seed, whatever the partitioning or the thinning. (The threshold
    depends on the row count, but only decides whether the Tukey windows need a pass of
    their own: the rows they read are the same either way.) The rows are kept as pieces
    ``(X, y, u, t)`` (every ``u < t``), filtered only when the threshold drops below ``t`` and
    joined once (:func:`sample_rows`): a chain does not copy its whole subsample at each
    partition."""
    thr = min(a["thr"], b["thr"])
    pieces = a["pieces"] + b["pieces"]

    def count(t: float) -> int:
        return sum(len(u) if tp <= t else int(np.count_nonzero(u < t))
                   for _, _, u, tp in pieces)

    while count(thr) > SAMPLE_ROWS:
        thr /= 2.0
    kept = []
    for X, y, u, tp in pieces:
        if tp > thr:        # one pass: dpstats._kernels.design_rows.rows_below
            X, y, u, tp = *rows_below(np.ascontiguousarray(X), y, u, thr), thr
        if len(u):
            kept.append((X, y, u, tp))
    return {"pieces": kept, "thr": thr, "p": a["p"]}


def sample_rows(sample: dict) -> dict:
    """The subsample's rows joined: ``{"X", "y", "u", "thr"}``."""
    pieces = sample["pieces"]
    if not pieces:
        return {"X": np.empty((0, sample["p"])), "y": np.empty(0), "u": np.empty(0),
                "thr": sample["thr"]}
    return {"X": np.concatenate([pc[0] for pc in pieces]),
            "y": np.concatenate([pc[1] for pc in pieces]),
            "u": np.concatenate([pc[2] for pc in pieces]), "thr": sample["thr"]}


def fused_total(total: dict) -> dict:
    """The finish of a :class:`FusedPass` fold (on a worker): the statistics of
    :class:`FirstPass` (histograms as floats, each column's centre cells from its key
    counts) and ``"groups"``."""
    out = {"n": total["n"], "hist": total["hist"].astype(np.float64),
           "groups": total["groups"],
           "sample": None if total["sample"] is None else sample_rows(total["sample"])}
    if total["keys"] is not None:
        out["cells"] = [cells_from_counts(row) for row in total["keys"]]
        out["raw"] = total["raw"]
    return out


def identity(total):
    """The finish of a fold whose whole total comes back."""
    return total


def _add(a, b):
    if a is None or b is None:
        return b if a is None else a
    if isinstance(a, dict):
        if "keys" in a:                 # FusedPass accumulators: arrays add, raw values merge
            raw = None if a["raw"] is None or b["raw"] is None else \
                merge({"raw": a["raw"]}, {"raw": b["raw"]})["raw"]
            out = {key: raw if key == "raw" else _add(a[key], b[key])
                   for key in a if key != "sample"}
            out["sample"] = None if a["sample"] is None else thinned(a["sample"], b["sample"])
            return out
        return merge(a, b)
    a += b                         # in place: the chains' accumulators are not read again
    return a


def fold_frame(ddf, fn, finish, chains: int | None = None):
    """``acc = fn(acc, partition, index)`` over the partitions of ``ddf`` in ``chains``
    sequential chains (partition i in chain ``i % chains``; each chain's accumulator stays on
    its worker, one array however many partitions), the chains added up pairwise and
    ``finish(total)`` computed on a worker: only what ``finish`` returns comes to the client.
    ``chains`` (default :func:`fold_chains`) is public: it is not read from the data.

    On a distributed client each chain, its partitions' reads included, is pinned to one
    worker (:func:`_pinned`): the accumulator never moves between workers until the chains
    are added (unpinned, each step ran where its partition had been read and the chain's
    tens of MB of sums followed it from worker to worker)."""
    import dask
    parts = ddf.to_delayed()
    client = _client()
    chains = max(1, min(len(parts), chains or fold_chains(client)))
    accs = [None] * chains
    for i, part in enumerate(parts):
        accs[i % chains] = dask.delayed(fn, pure=False)(accs[i % chains], part, i)
    if client is not None and PIN_CHAINS:
        return _pinned(client, accs, finish)
    while len(accs) > 1:
        accs = [dask.delayed(_add, pure=False)(*accs[i:i + 2]) if i + 1 < len(accs)
                else accs[i] for i in range(0, len(accs), 2)]
    return dask.compute(dask.delayed(finish, pure=False)(accs[0]))[0]


def _pinned(client, accs: list, finish):
    """Each chain computed on its own worker (reads and steps: ``workers=``; loose, so that
    a chain whose worker leaves the cluster runs elsewhere instead of waiting for ever), the
    chains' totals added there pairwise and ``finish`` run on a worker; the result of
    ``finish`` is returned."""
    workers = sorted(client.scheduler_info()["workers"])
    futures = [client.compute(acc, workers=[workers[k % len(workers)]],
                              allow_other_workers=True) for k, acc in enumerate(accs)]
    while len(futures) > 1:
        futures = [client.submit(_add, *futures[i:i + 2], pure=False) if i + 1 < len(futures)
                   else futures[i] for i in range(0, len(futures), 2)]
    return client.submit(finish, futures[0], pure=False).result()


def _client():
    """The current distributed client, or None (the local schedulers)."""
    try:
        from distributed import get_client
        return get_client()
    except (ImportError, ValueError):
        return None


def fold_chains(client=None) -> int:
    """Chains of :func:`fold_frame`: the workers of the current dask client (two without
    one)."""
    client = client or _client()
    return 2 if client is None else max(1, len(client.scheduler_info()["workers"]))


