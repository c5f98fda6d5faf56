"""Private discovery of category levels: a thresholded noisy histogram (stability-based).

A column whose category levels are not declared must not reveal which values occur in it: a
level held by one row identifies that row, and adding a row can add a level (a coefficient).
:func:`private_levels` releases only the levels that many rows share, and whether the rows of
the other levels are numerous enough to form one pooled level.

Neighbours: add or remove one row. A row holds one value in each column, so it changes one
count of each column's histogram by 1, and that count may be a level the other data set does
not have at all (a *new* level, count 1 vs absent).

Mechanism, per column (budget ``eps_c = eps / C``, ``delta_c = delta / C`` for C columns,
basic composition across columns):

1. **Levels** (``eps_c / 2``, ``delta_c``). Every *observed* level ``v`` gets
   ``count_v + Z_v``, ``Z_v`` discrete Laplace with ``P(z) ~ exp(-|z| / t)``,
   ``t >= 2 / eps_c`` (a dyadic rational, drawn exactly by
   :func:`dpstats.mechanisms.discrete.discrete_laplace`); ``v`` is released when
   ``count_v + Z_v >= tau``. Counts are integers with sensitivity 1, so a level present in both
   data sets is ``eps_c / 2``-DP. A new level (count 1) is released with probability
   ``P(Z >= tau - 1) = q^(tau - 1) / (1 + q)``, ``q = exp(-1 / t)``, and
   ``tau = 1 + ceil(t ln(1 / (delta_c (1 + q))))`` makes it at most ``delta_c``; the other
   levels' outputs are then identically distributed, so the step is
   ``(eps_c / 2, delta_c)``-DP (the standard stability argument: Korolova et al. 2009,
   Bun, Nissim & Stemmer 2016). For continuous Laplace the threshold would be
   ``1 + ln(1 / (2 delta_c)) t``; the discrete tail has ``1 + q`` in place of 2.
2. **Pooled level** (``eps_c / 2``, no delta). Given the released set S (public from here on),
   the number of rows whose level is not in S has sensitivity 1; it gets the same noise and
   the same threshold, and the pooled level is kept when ``count + Z >= tau``. When S is empty
   the pooled level holds every row and is kept without a test (a public fact).

Only which levels pass is released: never a count, never a noisy count. Level values are those
of the data, unchanged; the released levels come back in a data-independent order (numbers by
value, then strings, then anything else by ``repr``). Observed levels are visited in that order
too, so a seeded release is reproducible.

The whole release is ``(eps, delta)``-DP; :func:`private_levels` charges one
``(eps_c, delta_c)`` entry per column before drawing anything.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..validation import check_delta, check_eps
from . import discrete as _discrete
from .accountant import Ledger

__all__ = ["ReleasedLevels", "private_levels", "stability_threshold", "level_order"]

@dataclass(frozen=True)
class ReleasedLevels:
    """What :func:`private_levels` releases for one column.

    ``levels``: the released levels, in :func:`level_order`; ``pooled``: whether the rows of
    every other level are kept as one pooled level (otherwise they are to be dropped).
    """

    levels: tuple
    pooled: bool


def level_order(value) -> tuple:
    """Sort key of a level that depends on the value alone: real numbers by value, then
    strings, then anything else by ``repr``.

    >>> sorted(["b", 10, "a", 2.5], key=level_order)
    [2.5, 10, 'a', 'b']
    """
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        return (0, float(value), "")
    if isinstance(value, str):
        return (1, 0.0, value)
    return (2, 0.0, repr(value))


def stability_threshold(eps: float, delta: float) -> tuple[int, int, int]:
    """Noise scale and threshold of the level step at ``(eps, delta)``.

    Returns ``(num, den, tau)``: discrete Laplace noise with ``P(z) ~ exp(-|z| den / num)``
    (scale ``t = num / den >= 1 / eps``) and the integer threshold
    ``tau = 1 + ceil(t ln(1 / (delta (1 + q))))``, ``q = exp(-1 / t)``, so that a level of
    count 1 passes (``1 + Z >= tau``) with probability at most ``delta``.

    >>> num, den, tau = stability_threshold(0.5, 0.01)
    >>> num / den, tau
    (2.0, 10)
    """
    eps, delta = check_eps(eps), check_delta(delta)
    num, den = _discrete.dyadic_at_least(Fraction(1) / Fraction(eps))
    t = num / den
    q = math.exp(-den / num)
    x = t * math.log(1.0 / (delta * (1.0 + q)))
    # a relative margin of 1e-12 covers the float64 errors of log and exp (a few ulps): tau
    # can only come out larger than the exact value, never smaller
    return num, den, 1 + max(0, math.ceil(x * (1.0 + 1e-12)))


def _release_column(counts: Mapping, num: int, den: int, tau: int,
                    rng: np.random.Generator) -> ReleasedLevels:
    """Both steps for one column (the charge is made by the caller)."""
    observed = sorted((v for v, c in counts.items() if int(c) > 0), key=level_order)
    total = sum(int(counts[v]) for v in observed)
    if not observed:
        return ReleasedLevels((), False)
    noisy = np.array([int(counts[v]) for v in observed], dtype=np.int64) \
        + _discrete.discrete_laplace(num, den, len(observed), rng)
    released = tuple(v for v, z in zip(observed, noisy, strict=True) if z >= tau)
    if not released:            # every row is in the pooled level: kept, nothing to test
        return ReleasedLevels((), True)
    rest = total - sum(int(counts[v]) for v in released)
    pooled = rest + int(_discrete.discrete_laplace(num, den, 1, rng)[0]) >= tau
    return ReleasedLevels(released, bool(pooled))


def private_levels(histograms: Sequence[Mapping], eps: float, delta: float,
                   rng: np.random.Generator, ledger: Ledger | None = None, *,
                   names: Sequence[str] | None = None,
                   stage: str = "levels") -> list[ReleasedLevels]:
    """Release the common levels of one or more columns, ``(eps, delta)``-DP.

    Parameters
    ----------
    histograms : sequence of mappings
        One ``{level: count}`` per column: how many rows hold each level (rows with a missing
        value are left out). Levels may be any hashable values (strings, numbers, ...).
    eps, delta : float
        Budget of the whole release, split equally across the columns (a row is in one level
        of every column: L1 sensitivity of the joint histogram = number of columns). Within a
        column half of eps pays for the level counts, half for the pooled level's count.
    rng : numpy.random.Generator
        Source of randomness.
    ledger : Ledger, optional
        Charged ``(eps / C, delta / C)`` per column, before anything is drawn.
    names : sequence of str, optional
        Public column names for the ledger's detail (``"column 1"``, ... otherwise).
    stage : str
        Ledger stage, ``"levels"`` by default.

    Returns
    -------
    list of ReleasedLevels
        One per column, in the order of ``histograms``.

    Notes
    -----
    Neighbours: add/remove one row. See the module docstring for the proof; in short, a
    column's level step is ``(eps_c / 2, delta_c)``-DP by the stability argument (threshold
    :func:`stability_threshold`), its pooled-level step ``eps_c / 2``-DP given the released
    levels, and the columns compose.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> out = private_levels([{"a": 5000, "b": 4000, "rare": 1}], 1.0, 1e-6, rng)
    >>> out[0].levels, out[0].pooled
    (('a', 'b'), False)
    """
    eps, delta = check_eps(eps), check_delta(delta)
    hists = list(histograms)
    if not hists:
        raise ValueError("private_levels needs at least one histogram")
    cols = list(names) if names is not None else [f"column {i + 1}" for i in range(len(hists))]
    if len(cols) != len(hists):
        raise ValueError("names must have one entry per histogram")
    eps_c, delta_c = eps / len(hists), delta / len(hists)
    # both steps get eps_c / 2, so they share the noise scale (and the threshold)
    num, den, tau = stability_threshold(eps_c / 2.0, delta_c)
    if ledger is not None:
        for name in cols:
            ledger.charge("stability histogram", eps_c, delta_c, stage=stage,
                          detail=f"levels of {name!r}: discrete Laplace scale {num / den:.4g} "
                                 f"per level count, released when >= {tau}; pooled-level "
                                 "count at the same scale and threshold")
    return [_release_column(h, num, den, tau, rng) for h in hists]
