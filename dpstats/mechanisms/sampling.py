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
           "seeded_groups", "seeded_sample", "seeded_uniforms"]


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
    """A seed for the group labels of a distributed fit (:mod:`dpstats.dask`): drawn once, on
    the client, from the fit's generator; each partition's labels come from its own generator
    spawned from it (:func:`seeded_groups`). One call: ``rng.integers(0, 2**63, dtype=np.int64)``.

    >>> 0 <= group_seed(np.random.default_rng(0)) < 2**63
    True
    """
    return int(rng.integers(0, 2**63, dtype=np.int64))


def seeded_groups(seed: int, part: int, n: int, m: int) -> np.ndarray:
    """Independent uniform group labels in ``{0..m-1}`` for the ``n`` rows of partition
    ``part``, from the child ``part`` of ``SeedSequence(seed)`` (what ``SeedSequence.spawn``
    gives). Every row's label is uniform and independent of every other row's and of the data,
    however the rows are partitioned: the labels' distribution is that of
    :func:`random_groups`, so one row still changes one group.

    >>> seeded_groups(7, 0, 5, 3).tolist() == seeded_groups(7, 0, 5, 3).tolist()
    True
    """
    child = np.random.SeedSequence(seed, spawn_key=(int(part),))
    return np.random.default_rng(child).integers(0, m, size=n, dtype=np.int64)


def seeded_sample(seed: int, part: int, n: int, q: float) -> np.ndarray:
    """Each of the ``n`` rows of partition ``part`` kept independently with probability ``q``
    (a Bernoulli subsample, the same in law however the rows are partitioned), from the child
    ``part`` of ``SeedSequence(seed)``. One call: ``rng.random(n) < q``.

    >>> bool(seeded_sample(3, 1, 1000, 1.0).all()), bool(seeded_sample(3, 1, 1000, 0.0).any())
    (True, False)
    """
    return seeded_uniforms(seed, part, n) < q


def seeded_uniforms(seed: int, part: int, n: int) -> np.ndarray:
    """The uniforms on [0, 1) behind :func:`seeded_sample` (``seeded_sample(seed, part, n,
    q) == (seeded_uniforms(seed, part, n) < q)``): the rows below any ``q`` are its Bernoulli
    subsample, so a subsample at a larger rate can be thinned to ``q`` later (one call:
    ``rng.random(n)``).

    >>> u = seeded_uniforms(3, 1, 1000)
    >>> bool(((u < 0.3) == seeded_sample(3, 1, 1000, 0.3)).all())
    True
    """
    child = np.random.SeedSequence(seed, spawn_key=(int(part),))
    return np.random.default_rng(child).random(n)
