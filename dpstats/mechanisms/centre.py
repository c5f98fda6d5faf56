"""A coarse private location of one column, for centring (robust to ties and to scale).

Exponential mechanism over a fixed, data-independent grid of candidates
``G = {0} U {+-2^e (1 + j/J) : -E <= e < E, 0 <= j < J}`` (J = 1024, E = 64: relative spacing
at most 1/1024, so a value near -120 is resolved to 0.12 and a value near 2010 to 2) with the
one-dimensional Tukey depth

    score(c) = min(#{v <= c}, #{v >= c}).

Ties count on both sides, so a column that is mostly one value (a dummy, a zero-inflated
column) has its highest score at that value. Adding or removing one row changes each count by
at most 1 and never lowers either, so the score has sensitivity 1 and is monotone: weight
``exp(eps * score)`` is eps-DP under add/remove one row (no factor 2). The row count is neither
used nor released.

All candidates strictly between two consecutive distinct data values share one score, so the
mechanism is sampled exactly by first choosing such a run (log weight ``log(size) + eps*score``,
Gumbel-max over the runs that hold a grid point: the others have weight 0) and then a uniform
grid point inside it: O(n log n) whatever the grid size.
"""

from __future__ import annotations

import functools

import numpy as np

from ..errors import ValidationError
from ..validation import check_eps
from .accountant import Ledger
from .choice import exponential

__all__ = ["private_centre_value", "centre_grid"]


@functools.lru_cache(maxsize=4)
def centre_grid(octaves: int = 64, per_octave: int = 1024) -> np.ndarray:
    """The public candidates, sorted ascending (read-only).

    >>> centre_grid(1, 2).tolist()
    [-1.5, -1.0, -0.75, -0.5, 0.0, 0.5, 0.75, 1.0, 1.5]
    """
    mant = 1.0 + np.arange(per_octave) / per_octave
    pos = (np.ldexp(1.0, np.arange(-octaves, octaves))[:, None] * mant[None, :]).ravel()
    g = np.concatenate((-pos[::-1], [0.0], pos))
    g.setflags(write=False)
    return g


def _grid_positions(g: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(searchsorted(g, u, "left"), searchsorted(g, u, "right"))`` for sorted distinct ``u``.

    With many distinct values it is cheaper to place the grid among the values and count:
    ``g[j] < u[i]`` iff ``#{u <= g[j]} <= i``, and ``g[j] <= u[i]`` iff ``#{u < g[j]} <= i``.

    >>> g, u = np.array([-1.0, 0.0, 0.5, 2.0]), np.array([0.0, 1.0, 3.0])
    >>> [a.tolist() for a in _grid_positions(g, u)]
    [[1, 3, 4], [2, 3, 4]]
    """
    if g is centre_grid():
        return _default_positions(u)
    if u.size <= g.size:
        return np.searchsorted(g, u, side="left"), np.searchsorted(g, u, side="right")
    below_or_at = np.searchsorted(u, g, side="right")     # #{u <= g[j]}
    below = np.searchsorted(u, g, side="left")            # #{u < g[j]}
    left = np.cumsum(np.bincount(below_or_at, minlength=u.size + 1))[:u.size]
    right = np.cumsum(np.bincount(below, minlength=u.size + 1))[:u.size]
    return left, right


#: Bits of the default grid: positive grid points are the floats in [2^-64, 2^64) whose
#: mantissa has zeros below its top 10 bits (1 + j/1024 = 1 + j * 2^-10).
_LOW_BITS = 42
_MIN_BITS = int(np.float64(2.0 ** -64).view(np.int64))
_MAX_BITS = int(np.float64(2.0 ** 64).view(np.int64))
_HALF_KEYS = ((_MAX_BITS - _MIN_BITS) >> _LOW_BITS) * 2      # cell keys on one side of zero
#: From this many values on, the stand-ins replace np.unique: they save the downstream work
#: on up to n distinct values (0.44 -> 0.23 s for five 1e6-row columns) but cost about 2 ms
#: per column for their table of cell keys, more than a small or discrete column's sort.
_REPRESENT_MIN_ROWS = 1 << 18


def _default_positions(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_grid_positions` on the default grid (:func:`centre_grid`), from each value's
    bits instead of two binary searches (the same integers; ``tests/mechanisms/
    test_centre_positions.py`` compares them with ``searchsorted``): the grid is ``Z``
    negative points, 0 at index ``Z``, then positive point ``J`` (the float whose bits are
    ``min bits + J << 42``) at ``Z + 1 + J``; it is symmetric, so ``left(-a) = G - right(a)``
    and ``right(-a) = G - left(a)`` (``G`` points in all).

    >>> g = centre_grid()
    >>> u = np.array([-2.0**70, -1.5, -1e-30, -0.0, 1e-300, 1.0, 1.0 + 2**-20, 2.0**64])
    >>> left, right = _default_positions(u)
    >>> bool((left == np.searchsorted(g, u, "left")).all()
    ...      and (right == np.searchsorted(g, u, "right")).all())
    True
    """
    G = 2 * (_HALF_KEYS // 2) + 1
    Z = _HALF_KEYS // 2
    bits = np.asarray(u, dtype=np.float64).view(np.int64)
    mag = bits & np.int64(0x7FFFFFFFFFFFFFFF)
    off = mag - _MIN_BITS
    body = (mag >= _MIN_BITS) & (mag < _MAX_BITS)
    J = np.where(body, off >> _LOW_BITS, 0)
    on = body & ((off & ((1 << _LOW_BITS) - 1)) == 0)
    right = np.where(body, Z + 2 + J, np.where(mag == 0, Z + 1, np.where(mag < _MIN_BITS,
                                                                            Z + 1, G)))
    left = np.where(on, right - 1, np.where(mag == 0, Z, right))
    neg = (bits < 0) & (mag != 0)
    return np.where(neg, G - right, left), np.where(neg, G - left, right)


def centre_cells(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct stand-ins of ``v`` on the default grid and their counts (not a release: the
    input of :func:`private_centre_value` with ``counts=``). Stand-ins of the pieces of a
    column merge into those of the whole column: :func:`merge_cells`.

    >>> centre_cells(np.array([2.0, 1.0, 2.0]))[1].tolist()
    [1, 2]
    """
    return _cell_representatives(np.asarray(v, dtype=np.float64))


def merge_cells(a: tuple, b: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values and counts of two pieces of a column, merged (ascending).

    >>> u, c = merge_cells((np.array([1.0, 3.0]), np.array([2, 1])), (np.array([3.0]), [4]))
    >>> u.tolist(), c.tolist()
    ([1.0, 3.0], [2, 5])
    """
    u, inv = np.unique(np.concatenate([a[0], b[0]]), return_inverse=True)
    return u, np.bincount(inv, weights=np.concatenate([a[1], b[1]]),
                          minlength=u.size).astype(np.int64)


def _cell_representatives(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct stand-ins for ``v`` and their counts, ascending, in O(n) for the default grid.

    Every grid point's score depends only on how many values lie below it, on it and above
    it, so a value may be replaced by any value in the same place relative to the grid: a
    value on a grid point stays; a value strictly between two neighbouring grid points becomes
    the float with the lower point's bits plus half a cell (bit 41 set), which lies strictly
    between the same two points; values beyond +-2^64 become +-2^65 and non-zero values inside
    (-2^-64, 2^-64) become +-2^-65. The mechanism's distribution over grid points is then the
    same as with the raw values (``tests/estimators/test_centring.py`` checks it point by point),
    and ``np.unique``'s sort is replaced by one ``bincount`` over cell keys.

    >>> u, c = _cell_representatives(np.array([1.0, 1.0001, 1.0002, -3.0, 0.0, 1e30]))
    >>> u.tolist(), c.tolist()
    ([-3.0, 0.0, 1.0, 1.00048828125, 3.6893488147419103e+19], [1, 1, 1, 2, 1])
    """
    a = np.abs(v) + 0.0
    bits = a.view(np.int64)
    mid = (bits >= _MIN_BITS) & (bits < _MAX_BITS)
    off = np.where(mid, bits - _MIN_BITS, 0)
    key = 2 * (off >> _LOW_BITS) + ((off & ((1 << _LOW_BITS) - 1)) != 0)   # 2 j (+1 inside)
    key = np.where(mid, key + 2, np.where(a == 0.0, -1, np.where(bits < _MIN_BITS, 0,
                                                               _HALF_KEYS + 2)))
    # ascending order of values: negatives mirrored below zero (key -1 is zero itself)
    signed = np.where(v < 0, _HALF_KEYS + 2 - key, _HALF_KEYS + 4 + key)
    return cells_from_counts(np.bincount(signed, minlength=2 * _HALF_KEYS + 7))


#: The cell keys of :func:`_cell_representatives` (for a kernel that counts them,
#: :func:`dpstats._kernels.partition_sums.add_cell_keys`): ``(min bits, max bits, low bits,
#: keys on one side of zero)``; the counts have ``2 * keys + 7`` entries.
CELL_KEYS = (_MIN_BITS, _MAX_BITS, _LOW_BITS, _HALF_KEYS)


def cells_from_counts(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Stand-ins and counts, ascending, from the counts of every signed cell key
    (:data:`CELL_KEYS`; the second half of :func:`_cell_representatives`)."""
    where = np.flatnonzero(counts)
    pos = where - (_HALF_KEYS + 4)                      # key of the magnitude, signed side
    neg = pos < -1
    k = np.where(neg, -pos - 2, pos)                    # undo the mirror: magnitude key, 0 = tiny
    mag = np.empty(k.size)
    body = (k >= 2) & (k < _HALF_KEYS + 2)
    kb = k[body] - 2
    mag[body] = (_MIN_BITS + ((kb >> 1) << _LOW_BITS) + ((kb & 1) << (_LOW_BITS - 1))) \
        .astype(np.int64).view(np.float64)
    mag[k == -1] = 0.0
    mag[k == 0] = 2.0 ** -65
    mag[k == _HALF_KEYS + 2] = 2.0 ** 65
    return np.where(neg, -mag, mag), counts[where]


def private_centre_value(values, eps: float, rng: np.random.Generator,
                         ledger: Ledger | None = None, *, grid: np.ndarray | None = None,
                         stage: str | None = None, what: str = "centre",
                         counts=None) -> float:
    """eps-DP grid point of high 1-D Tukey depth in ``values`` (a coarse, robust median).

    Neighbours: add/remove one row. Score sensitivity 1, monotone.

    >>> import numpy as np
    >>> v = np.r_[np.zeros(900), np.ones(100)]
    >>> private_centre_value(v, 1.0, np.random.default_rng(0))
    0.0
    >>> w = np.random.default_rng(1).normal(-120.0, 2.0, 5000)
    >>> abs(private_centre_value(w, 0.01, np.random.default_rng(2)) + 120.0) < 2.0
    True

    ``counts``: ``values`` are then distinct values in ascending order and ``counts`` how many
    rows hold each (merged over the partitions of a dask frame by :func:`centre_cells`); the
    scores, and so the release, are those of the rows themselves.
    """
    eps = check_eps(eps)
    v = np.asarray(values, dtype=np.float64).ravel()
    if not np.isfinite(v).all():      # no values is fine: every grid point scores 0
        raise ValidationError("values must be finite; drop missing rows first")
    if counts is not None:            # distinct values (ascending) and their counts, given
        g = centre_grid() if grid is None else np.asarray(grid, dtype=np.float64)
        u, cnt = v, np.asarray(counts, dtype=np.int64)
    elif grid is None and v.size >= _REPRESENT_MIN_ROWS:
        g = centre_grid()
        u, cnt = _cell_representatives(v)
    else:
        g = centre_grid() if grid is None else np.asarray(grid, dtype=np.float64)
        u, cnt = np.unique(v, return_counts=True)
    n = int(cnt.sum())
    cum = np.cumsum(cnt)                                   # #{v <= u[i]}
    left, right = _grid_positions(g, u)
    run_lo = np.concatenate(([0], right))                  # run i: strictly between u[i-1], u[i]
    run_n = np.concatenate((left, [g.size])) - run_lo
    below = np.concatenate(([0], cum))                     # #{v <= c} = #{v < c} in run i
    scores = np.concatenate((np.minimum(below, n - below),          # runs
                             np.minimum(cum, n - below[:-1])))      # c = u[i] (ties both sides)
    sizes = np.concatenate((run_n, (right > left).astype(np.int64)))
    live = np.flatnonzero(sizes > 0)    # the rest (empty runs, values off the grid) has weight 0
    if live.size == 0:
        live = np.arange(sizes.size)    # let the mechanism report that nothing can be chosen
    with np.errstate(divide="ignore"):
        log_base = np.log(sizes[live].astype(np.float64))
    k = live[exponential(scores[live].astype(np.float64), 1.0, eps, rng, ledger,
                         log_base=log_base, monotone=True, stage=stage,
                         what=f"{what} (1-D Tukey depth) on a public grid of {g.size} points")]
    if k < run_n.size:
        return float(g[run_lo[k] + rng.integers(0, run_n[k])])
    return float(u[k - run_n.size])
