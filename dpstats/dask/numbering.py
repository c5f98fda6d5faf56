"""The numbering of a dask frame's design rows, which keys every row's random draw.

The group labels (Tukey, SubLasso) and the Bernoulli subsamples (the Tukey windows, the
sampled selectors) of a fit on a dask frame are counter-based
(:func:`~dpstats.mechanisms.sampling.row_uniforms`): row ``r``'s draw is a function of a
client seed and ``r``, the row's global number in the frame's design (partition by partition,
in partition order: the in-memory design's row position). The first pass counts each
partition's design rows (never released); every later pass numbers its rows from them
(:func:`row_starts`), so no label or subsample depends on the partitioning. The first pass
itself runs before the counts are known: its speculative draws use :func:`partition_key`.
"""

from __future__ import annotations

import numpy as np

from ..mechanisms.sampling import seeded_groups

__all__ = ["seeded_labels", "row_starts", "PARTITION_BITS", "partition_key", "start_of"]


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


#: Stream positions of a partition's rows while the global row numbers are not known yet (the
#: first pass's speculative draws, :class:`~dpstats.dask.fold.FusedPass`): partition ``i``'s
#: row ``j`` at ``i * 2**PARTITION_BITS + j``. Distinct rows still get distinct positions
#: (partitions of fewer than 2^40 rows), so the draws stay independent, but they depend on
#: the partitioning.
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
