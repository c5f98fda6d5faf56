"""Data-independent random draws that are not noise: group labels, row orders, jitter.

Some private algorithms randomise *how* they look at the data before any mechanism runs:
SubLasso and the Tukey mechanism split rows into groups by random labels, DPKendall breaks ties
by a random row order, the Tukey mechanism breaks ties between models by a tiny jitter. None of
these draws looks at a data value (only at public sizes: the number of rows, of groups, the
shape of an array), so each is independent of the data, and the privacy proofs hold for every
realisation; the mechanism is then a mixture of private mechanisms. They still consume the
caller's generator, so they live here, on the privacy boundary, beside the noise they precede:
nothing outside :mod:`dpstats.mechanisms` touches a generator.

Each function makes exactly one generator call, with the arguments given in its docstring, so a
seeded run draws the same numbers as the code it replaced.
"""

from __future__ import annotations

import numpy as np

__all__ = ["random_groups", "random_permutation", "uniform_jitter", "group_seed",
           "row_uniforms", "seeded_groups", "seeded_sample", "seeded_uniforms"]


def random_groups(n: int, m: int, rng) -> np.ndarray:
    """Independent uniform group labels in ``{0..m-1}``, one per row (``int64``, shape (n,)).

    Used to partition rows into ``m`` groups (SubLasso's voting groups, the Tukey mechanism's
    models). Each label depends only on ``n``, ``m`` and the generator, so adding or removing
    one row changes exactly one group (shuffle-and-cut would shift every later group).
    One call: ``rng.integers(0, m, size=n, dtype=np.int64)``.

    >>> random_groups(6, 3, np.random.default_rng(0)).tolist()
    [2, 1, 1, 0, 0, 0]
    """
    return rng.integers(0, m, size=n, dtype=np.int64)


def random_permutation(n: int, rng) -> np.ndarray:
    """A uniformly random order of ``n`` rows (a permutation of ``0..n-1``).

    Used by DPKendall to break ties by row position: the order depends on ``n`` alone, so for a
    fixed order each pair's comparison depends only on the two rows involved and the tie-free
    statistic keeps its sensitivity. One call: ``rng.permutation(n)``.

    >>> sorted(random_permutation(4, np.random.default_rng(0)).tolist())
    [0, 1, 2, 3]
    """
    return rng.permutation(n)


def uniform_jitter(shape, rng) -> np.ndarray:
    """Uniforms on ``[-0.5, 0.5)`` of the given shape, to be scaled into a tie-breaking jitter.

    Used by the Tukey mechanism to separate equal model coordinates before sorting; the draw
    depends only on the (public) shape, and each model's jitter is then a function of that
    model alone. One call: ``rng.uniform(-0.5, 0.5, size=shape)``.

    >>> u = uniform_jitter((3, 2), np.random.default_rng(0))
    >>> u.shape, bool(((-0.5 <= u) & (u < 0.5)).all())
    ((3, 2), True)
    """
    return rng.uniform(-0.5, 0.5, size=shape)


def group_seed(rng) -> int:
    """A seed for the group labels or row subsample of a distributed fit
    (:mod:`dpstats.dask`): drawn once, on the client, from the fit's generator; every row's
    draw is then a function of this seed and the row's global number alone
    (:func:`row_uniforms`). One call: ``rng.integers(0, 2**63, dtype=np.int64)``.

    >>> 0 <= group_seed(np.random.default_rng(0)) < 2**63
    True
    """
    return int(rng.integers(0, 2**63, dtype=np.int64))


def row_uniforms(seed: int, start: int, n: int) -> np.ndarray:
    """Uniforms on [0, 1), one per row, for the ``n`` rows numbered ``start .. start + n - 1``:
    row ``r``'s uniform is the ``r``-th double of the PCG64 stream of ``SeedSequence(seed)``
    (the stream advanced by ``start`` steps, then one 64-bit output per double:
    ``Generator.random`` uses exactly one). A counter-based draw: each row's value depends on
    the seed and its number alone, so the rows of a frame get the same uniforms however they
    are split into pieces, and the uniforms of distinct row numbers are independent. One call:
    ``rng.random(n)`` after ``PCG64.advance(start)``.

    >>> u = row_uniforms(5, 0, 10)
    >>> bool((row_uniforms(5, 4, 6) == u[4:]).all()), bool(((0 <= u) & (u < 1)).all())
    (True, True)
    """
    bits = np.random.PCG64(int(seed))
    bits.advance(int(start))
    return np.random.Generator(bits).random(int(n))


def seeded_groups(seed: int, start: int, n: int, m: int) -> np.ndarray:
    """Group labels in ``{0..m-1}`` for the ``n`` rows numbered ``start ..`` (``int64``):
    ``floor(u * m)`` of each row's :func:`row_uniforms`. Every row's label is independent of
    every other row's and of the data (uniform up to the 2^-53 grid of ``u``: each label's
    probability is within ``m 2^-53`` of ``1/m``), and a function of the seed and the row's
    number only: the same labels whatever the partitioning, and the labels of the rows of
    ``0 .. n-1`` in one call equal those drawn piece by piece. As with :func:`random_groups`,
    adding or removing one row changes exactly one group.

    >>> lab = seeded_groups(7, 0, 9, 3)
    >>> lab.tolist() == seeded_groups(7, 0, 4, 3).tolist() + seeded_groups(7, 4, 5, 3).tolist()
    True
    """
    labels = (row_uniforms(seed, start, n) * m).astype(np.int64)
    return np.minimum(labels, int(m) - 1, out=labels)       # u * m rounds below m


def seeded_sample(seed: int, start: int, n: int, q: float) -> np.ndarray:
    """Each of the ``n`` rows numbered ``start ..`` kept independently with probability ``q``
    (a Bernoulli subsample): the rows whose :func:`row_uniforms` lie below ``q``, so the same
    rows whatever the partitioning. One call: ``rng.random(n) < q``.

    >>> bool(seeded_sample(3, 1, 1000, 1.0).all()), bool(seeded_sample(3, 1, 1000, 0.0).any())
    (True, False)
    """
    return seeded_uniforms(seed, start, n) < q


def seeded_uniforms(seed: int, start: int, n: int) -> np.ndarray:
    """The uniforms behind :func:`seeded_sample` (``seeded_sample(seed, start, n, q) ==
    (seeded_uniforms(seed, start, n) < q)``): :func:`row_uniforms`. The rows below any ``q``
    are its Bernoulli subsample, so a subsample at a larger rate can be thinned to ``q`` later.

    >>> u = seeded_uniforms(3, 1, 1000)
    >>> bool(((u < 0.3) == seeded_sample(3, 1, 1000, 0.3)).all())
    True
    """
    return row_uniforms(seed, start, n)
