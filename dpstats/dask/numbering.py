"""The numbering of a dask frame's design rows, which keys every row's random draw.

The group labels (Tukey, SubLasso) and the Bernoulli subsamples (the Tukey windows, the
sampled selectors) of a fit on a dask frame are counter-based
(:func:`~dpstats.mechanisms.sampling.row_uniforms`): row ``r``'s draw is a function of a
client seed and ``r``, the row's global number in the frame's design (partition by partition,
in partition order: the in-memory design's row position). The first pass counts each
partition's design rows (never released); every later pass numbers its rows from them
(:func:`row_starts`), so no label or subsample depends on the partitioning. The first pass
itself (:class:`~dpstats.dask.fold.FusedPass`) numbers its rows in the same graph: each
partition's count is a tiny task, the offsets a chain of tiny tasks, and a partition's step
waits for its offset (:func:`numbered_chains`), each fold chain's reads and steps kept on one
worker (:func:`placement`), so only the counts cross between workers and no pass is added.
"""

from __future__ import annotations

import numpy as np

from ..mechanisms.sampling import seeded_groups

__all__ = ["seeded_labels", "row_starts", "PARTITION_BITS", "partition_key", "start_of",
           "piece_rows", "numbered_chains", "placement"]


def seeded_labels(start: int, index, n: int, m: int, seed: int) -> np.ndarray:
    """The default label source: the labels of the partition's ``n`` design rows, numbered
    from ``start`` (:func:`row_starts`), from the client's ``seed``
    (:func:`~dpstats.mechanisms.sampling.seeded_groups`: a function of the seed and each
    row's global number, so the same labels whatever the partitioning, and the in-memory
    design's rows ``0 .. n-1`` get the same ones); ``index`` (the partition's row index) is
    not read."""
    return seeded_groups(seed, start, n, m)


def row_starts(rows: dict) -> tuple[int, ...]:
    """Each partition's first global design row number from the first pass's design rows per
    partition (``{partition: rows}``): the rows of the frame numbered in partition order, as
    the in-memory design numbers them. Internal (it locates the rows in the label and sample
    streams), never released.

    >>> row_starts({1: 5, 0: 3, 2: 4})
    (0, 3, 8)
    """
    counts = [int(rows[i]) for i in range(len(rows))]
    return tuple(int(v) for v in np.cumsum([0] + counts[:-1]))


#: Stream positions of a partition's rows when no global row numbers are given (a
#: :class:`~dpstats.dask.passes.GroupPass` or :class:`~dpstats.dask.passes.SamplePass` made
#: without ``starts``: tests only; every fit passes them): partition ``i``'s row ``j`` at
#: ``i * 2**PARTITION_BITS + j``. Distinct rows still get distinct positions (partitions of
#: fewer than 2^40 rows), so the draws stay independent, but they depend on the
#: partitioning.
PARTITION_BITS = 40


def partition_key(part: int) -> int:
    """The first stream position of partition ``part``'s rows before the rows are numbered
    (:data:`PARTITION_BITS`)."""
    return int(part) << PARTITION_BITS


def start_of(starts: tuple[int, ...], part: int) -> int:
    """Partition ``part``'s first stream position: its first global row, ``starts[part]``
    (:func:`row_starts`), or with no ``starts`` (empty) :func:`partition_key`.

    >>> start_of((0, 3, 8), 2), start_of((), 2) == partition_key(2)
    (8, True)
    """
    return int(starts[part]) if starts else partition_key(part)


def piece_rows(piece) -> int:
    """The design rows of a partition's prepared piece ``(X, y, index)`` (its count task:
    an int, the only thing of a partition that crosses between the fold's workers)."""
    return int(piece[0].shape[0])


def numbered_chains(parts: list, fn, chains: int) -> tuple[list, list]:
    """The delayed accumulators of a fold whose steps know each partition's first global
    design row: per partition ``i`` a task ``fn.prepare(partition)`` (read and design), a
    count task (:func:`piece_rows`), the prefix ``start_i = start_{i-1} + count_{i-1}`` (a
    chain of tiny tasks, ``start_0 = 0``), and the step ``fn.step(acc, piece, i, start_i)``
    in chain ``i % chains``. One graph: a step waits only for the earlier partitions' counts,
    not for their reads. Also ``owned``: ``(chain, task, with_inputs, rank)`` for
    :func:`placement` (the read and design with everything they read; the count and the step
    alone: their other inputs are the prefix and the chain's own tasks). The ranks order
    each worker's tasks: partition ``i``'s read and design (rank ``10 i``) and count
    (``10 i + 1``), its step at ``10 (i + chains) + 5``, after the next partition of its
    chain is read and counted: the other chains' counts are ready before a step needs them
    (one partition read ahead per chain; a step waiting on a count behind a whole step of
    the other chain made the 2-worker first pass at 1e7 rows 25-45% slower, design note
    70)."""
    import operator

    import dask
    accs, start, owned = [None] * chains, 0, []
    for i, part in enumerate(parts):
        k = i % chains
        piece = dask.delayed(fn.prepare, pure=False)(part)
        accs[k] = dask.delayed(fn.step, pure=False)(accs[k], piece, i, start)
        count = dask.delayed(piece_rows, pure=False)(piece)
        owned += [(k, piece, True, 10 * i), (k, count, False, 10 * i + 1),
                  (k, accs[k], False, 10 * (i + chains) + 5)]
        start = dask.delayed(operator.add, pure=False)(start, count)
    return accs, owned


#: The scheduling priority of a numbered fold's tasks that no chain owns (the prefix sums of
#: the row counts; the chains' sums): first, whenever a thread is free.
FIRST = 1 << 40


def placement(graph: dict, owned: list, workers: list) -> tuple[dict, dict]:
    """``({key: [worker]}, {key: priority})`` for every task of a fold's ``graph`` (as it is
    sent: no optimisation renames a key afterwards): each task of ``owned`` (``(chain,
    delayed, with_inputs, rank)``; with its inputs' tasks, reads included, when
    ``with_inputs``) on chain ``k``'s worker ``workers[k % len(workers)]`` at priority
    ``-rank`` (rank None: 0), every other key (the prefix of row counts, the chains' sums, a
    task two chains read) ``[]``: unrestricted, at priority :data:`FIRST` when any task is
    ranked (else 0). Placement and order only: no value depends on them.

    >>> from dask import delayed
    >>> a = delayed(len, pure=True)([1, 2]); b = delayed(sum, pure=True)([a, 1])
    >>> graph = dict(b.__dask_graph__())
    >>> where, order = placement(graph, [(0, a, True, 3), (1, b, False, None)], ["w0", "w1"])
    >>> where[a.key], where[b.key], order[a.key], order[b.key]
    (['w0'], ['w1'], -3, 0)
    """
    owner: dict = {}
    rank: dict = {}
    for k, task, with_inputs, r in owned:
        todo, seen = [task.key], set()
        while todo:
            key = todo.pop()
            if key in seen or key not in graph:
                continue
            seen.add(key)
            if with_inputs:
                todo.extend(getattr(graph[key], "dependencies", ()))
        for key in seen:
            owner[key] = k if owner.get(key, k) == k else None
            rank[key] = 0 if r is None else -int(r)
    ranked = any(r is not None for *_, r in owned)
    where = {key: [] for key in graph}
    where.update({key: [workers[k % len(workers)]] for key, k in owner.items()
                  if k is not None})
    order = {key: rank.get(key, FIRST if ranked else 0) for key in graph}
    return where, order
