"""Clipping bounds: public ones supplied by the user, or private ones estimated with budget.

Methods that need bounded data (DP-SIS, AdaSSP, Frank-Wolfe, DP-GD, ...) map every column and the
label into ``[-1, 1]`` with :func:`to_unit`, using bounds that are either

* **public**: given by the user and normalised by :func:`parse_bounds`
  (``(lo, hi)`` for everything, or ``{"x": ..., "y": ...}``), or
* **private**: released by :func:`private_bounds`, which picks values from the public grid
  :data:`GRID` with the exponential mechanism (:func:`private_quantile`) and charges the ledger
  for every release.

The public half (:class:`Bounds`, :func:`parse_bounds`, :func:`to_unit`) lives in
:mod:`dpstats.mechanisms.clipping` and is importable from here.

Neighbouring data sets differ by adding or removing one row. Nothing here reads a data maximum,
mean or range for free: the only data-dependent outputs are exponential-mechanism releases.

Examples
--------
>>> import numpy as np
>>> from dpstats.mechanisms.accountant import Ledger
>>> led = Ledger()
>>> private_quantile(np.arange(1000.0), 0.5, 1e6, np.random.default_rng(0), led,
...                  stage="bounds", what="median")
256.0
>>> len(led), led.spent
(1, (1000000.0, 0.0))
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import ValidationError
from ..validation import check_choice, check_eps
from .accountant import Ledger
from .choice import exponential
from .clipping import Bounds, parse_bounds, to_unit

__all__ = ["GRID", "Bounds", "parse_bounds", "private_quantile", "private_bounds", "to_unit"]

#: Public candidate values for private bounds: 0 and +-2**e for integers e in [-64, 64], sorted.
GRID = np.concatenate([-np.ldexp(1.0, np.arange(64, -65, -1)), [0.0],
                       np.ldexp(1.0, np.arange(-64, 65))])
GRID.setflags(write=False)

#: d above which ``mode="auto"`` uses one global bound instead of per-column quantiles.
AUTO_COLUMN_MAX_D = 64

_MODES = ("auto", "column", "global")


def _check_q(q, upper: float = 1.0) -> float:
    if not (isinstance(q, numbers.Real) and not isinstance(q, bool) and 0 < float(q) < upper):
        raise ValidationError(f"q must be a number strictly between 0 and {upper:g} "
                              f"(e.g. 0.01); got {q!r}")
    return float(q)


def _finite_array(values, name: str, ndim: int) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValidationError(f"{name} must be numeric; convert it to floats first") from None
    if arr.ndim != ndim:
        raise ValidationError(f"{name} must be a {ndim}-D array; got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValidationError(f"{name} must be finite (no NaN or inf); drop or impute them first")
    return arr


def quantile_utility(sorted_values: np.ndarray, q: float) -> np.ndarray:
    """Utility of each grid cell for holding the q-quantile of ``sorted_values`` (ascending).

    Cells: the closed intervals ``(-inf, g_0]``, ``[g_{i-1}, g_i]`` between the grid values
    ``g_0 < ... < g_258``, and ``[g_258, inf)`` (260 cells). The order statistics lying in a
    cell have ranks ``A + 1 .. B`` with ``A = #{v < left end}``, ``B = #{v <= right end}``;
    the cell's utility is minus the distance from the quantile's rank ``q n`` to ``[A, B]``,
    ``u = -max(0, A - q n, q n - B)`` (``A - q n = (1 - q) A - q (n - A)``: no separately
    known row count). Under add/remove one row ``A - q n`` and ``q n - B`` each move by ``q``
    or ``1 - q``, so ``u`` has sensitivity ``max(q, 1 - q)``; it is not monotone. Unlike single
    grid values (which all tie outside the data), a cell holding the quantile scores 0 and
    every cell beyond the data ``-q n``; a quantile sitting on a grid value (e.g. labels
    +-1) gives both neighbouring cells 0. O((n + |GRID|) log n) by binary search.
    """
    n = sorted_values.shape[0]
    a = np.concatenate([[0], np.searchsorted(sorted_values, GRID, side="left")])
    b = np.concatenate([np.searchsorted(sorted_values, GRID, side="right"), [n]])
    qn = q * n
    return -np.maximum(0.0, np.maximum(a - qn, qn - b))


#: Released value for each cell of :func:`quantile_utility`: its left and its right end
#: (the two infinite cells end at -2**65 and 2**65).
_CELL_LEFT = np.concatenate([[-math.ldexp(1.0, 65)], GRID])
_CELL_RIGHT = np.concatenate([GRID, [math.ldexp(1.0, 65)]])


def _release_quantile(sorted_values, q, eps, rng, ledger, stage, what, rounding) -> float:
    u = quantile_utility(sorted_values, q)
    i = exponential(u, max(q, 1.0 - q), eps, rng, ledger, monotone=False, stage=stage,
                    what=f"{what}: {q:g}-quantile, cell of the public grid 0, +-2^e "
                         f"(|e| <= 64), rounded {rounding}; utility sensitivity "
                         f"max(q, 1-q) = {max(q, 1.0 - q):g}")
    return float((_CELL_LEFT if rounding == "down" else _CELL_RIGHT)[i])


def private_quantile(values, q: float, eps: float, rng: np.random.Generator,
                     ledger: Ledger | None = None, *, stage: str | None = None,
                     what: str = "value", rounding: str = "down") -> float:
    """Private q-quantile of ``values``, released as a value of the public grid :data:`GRID`.

    Exponential mechanism over the 260 cells between consecutive grid values with the utility
    of :func:`quantile_utility` (minus the distance of the rank ``q n`` from the ranks of the
    data in the cell; no separately known row count needed). Under add/remove one row it changes
    by at most ``max(q, 1 - q)``; it is not monotone, so the standard factor 2 applies:
    ``eps``-DP. The chosen cell is reported by its left end (``rounding="down"``, for lower
    bounds) or its right end (``"up"``, for upper bounds): at large ``eps``, the grid value
    just below (above) the empirical quantile. With small ``eps * q * n`` the release is mostly
    noise (every cell beyond the data scores only ``q n`` below the best). O(n log n).

    Parameters
    ----------
    values : array_like, shape (n,)
        Finite values, one per row (a row contributes exactly one value).
    q : float
        Quantile level in (0, 1).
    eps : float
        Privacy parameter; charged once as an ``"exponential"`` release.
    rng : numpy.random.Generator
    ledger : Ledger, optional
    stage, what : str
        Ledger stage and description.
    rounding : {"down", "up"}
        Report the chosen cell's left or right end.

    Returns
    -------
    float
        A value of :data:`GRID`, or ``-2**65`` / ``2**65`` for the two unbounded cells.

    Raises
    ------
    ValidationError
        For non-finite or non-1-D ``values``, bad ``q``, ``rounding`` or ``eps``; nothing is
        charged then.
    """
    eps = check_eps(eps)
    q = _check_q(q)
    check_choice(rounding, ("down", "up"), "rounding")
    v = np.sort(_finite_array(values, "values", 1))
    return _release_quantile(v, q, eps, rng, ledger, stage, what, rounding)


def _widen(lo: float, hi: float) -> tuple[float, float]:
    """A valid interval from two released grid values (post-processing, data-independent)."""
    if lo < hi:
        return lo, hi
    a, b = min(lo, hi), max(lo, hi)
    i = int(np.searchsorted(GRID, a, side="left")) - 1
    j = int(np.searchsorted(GRID, b, side="right"))
    new_lo = float(GRID[i]) if i >= 0 else -math.ldexp(1.0, 65)
    new_hi = float(GRID[j]) if j < GRID.size else math.ldexp(1.0, 65)
    return new_lo, new_hi


def private_bounds(X, y, eps: float, rng: np.random.Generator, ledger: Ledger | None = None, *,
                   mode: str = "auto", q: float = 0.01, stage: str = "bounds") -> Bounds:
    """Privately estimated clipping bounds for the columns of ``X`` and for ``y``.

    Every release is a :func:`private_quantile` (exponential mechanism, utility sensitivity
    ``max(q, 1 - q)`` under add/remove one row, ``eps_each``-DP), and ``eps`` is split evenly
    over all releases, so the whole is ``eps``-DP by basic composition:

    * ``mode="column"``: the q- and (1-q)-quantiles of every column (2 d releases);
    * ``mode="global"``: one symmetric bound ``[-B, B]`` for all columns, ``B`` the private
      (1-q)-quantile of the per-row maxima ``max_j |x_ij|`` (one value per row, so the same
      sensitivity ``max(q, 1 - q)``; 1 release);
    * ``mode="auto"``: ``"column"`` when ``d <= 64``, else ``"global"`` (``d`` is public);

    plus the q- and (1-q)-quantiles of ``y`` (2 releases) when ``y`` is given. A released pair
    with ``lo >= hi`` (possible at small ``eps``) is widened to the neighbouring grid values,
    and a global ``B <= 0`` becomes ``2**-64``: post-processing of released values only.

    Parameters
    ----------
    X : array_like, shape (n, d), or None
        Columns to bound (``None``: only y).
    y : array_like, shape (n,), or None
        Label to bound (``None``: only X).
    eps : float
        Total budget for all releases.
    rng : numpy.random.Generator
    ledger : Ledger, optional
        Receives one ``"exponential"`` charge per release.
    mode : {"auto", "column", "global"}
    q : float
        Tail mass left outside each bound, in (0, 1/2); default 0.01.
    stage : str
        Ledger stage.

    Returns
    -------
    Bounds
        ``source="private"``, the resolved ``mode`` and the ``eps`` charged.

    Raises
    ------
    ValidationError
        For bad shapes, non-finite data, ``q``, ``mode`` or ``eps``; nothing is charged then.

    Examples
    --------
    >>> X = np.random.default_rng(1).uniform(-3, 3, size=(2000, 2))
    >>> b = private_bounds(X, X[:, 0], 1e5, np.random.default_rng(0), mode="column")
    >>> b.x_lo.tolist(), b.x_hi.tolist(), b.y, b.eps
    ([-4.0, -4.0], [4.0, 4.0], (-4.0, 4.0), 100000.0)
    """
    Xa, ya, eps, q, mode = _check_bounds_inputs(X, y, eps, q, mode)
    d = 0 if Xa is None else Xa.shape[1]
    n_rel = (0 if Xa is None else (2 * d if mode == "column" else 1)) + (0 if ya is None else 2)
    each = eps / n_rel
    x_lo = x_hi = None
    if Xa is not None:
        x_lo, x_hi = _release_x_bounds(Xa, mode, q, each, rng, ledger, stage)
    y_lo = y_hi = None
    if ya is not None:
        ys = np.sort(ya)
        lo = _release_quantile(ys, q, each, rng, ledger, stage, "y lower", "down")
        hi = _release_quantile(ys, 1 - q, each, rng, ledger, stage, "y upper", "up")
        y_lo, y_hi = _widen(lo, hi)
    return Bounds(x_lo, x_hi, y_lo, y_hi, source="private", mode=mode,
                  eps=math.fsum([each] * n_rel))


def _check_bounds_inputs(X, y, eps, q, mode):
    """Validate the arguments of :func:`private_bounds` (before any charge).

    Returns ``(Xa, ya, eps, q, mode)``: float arrays (or None), checked ``eps`` and ``q``, and
    ``mode`` with ``"auto"`` resolved from the public number of columns.
    """
    eps = check_eps(eps)
    q = _check_q(q, 0.5)            # the q-quantile must lie below the (1-q)-quantile
    check_choice(mode, _MODES, "mode")
    if X is None and y is None:
        raise ValidationError("private_bounds needs X or y (or both); got neither")
    Xa = None if X is None else _finite_array(X, "X", 2)
    ya = None if y is None else _finite_array(y, "y", 1)
    if Xa is not None and ya is not None and Xa.shape[0] != ya.shape[0]:
        raise ValidationError(f"X has {Xa.shape[0]} rows but y has {ya.shape[0]}; they must "
                              "describe the same rows")
    d = 0 if Xa is None else Xa.shape[1]
    if Xa is not None and d == 0:
        raise ValidationError("X has no columns; pass X=None to bound only y")
    if mode == "auto":
        mode = "column" if d <= AUTO_COLUMN_MAX_D else "global"
    return Xa, ya, eps, q, mode


def _release_x_bounds(Xa: np.ndarray, mode: str, q: float, each: float, rng, ledger, stage):
    """Per-column bounds ``(x_lo, x_hi)`` of ``Xa``, released with ``each`` per quantile:
    2 d quantiles (``mode="column"``) or one global ``[-B, B]`` (``mode="global"``)."""
    d = Xa.shape[1]
    if mode == "column":
        x_lo, x_hi = np.empty(d), np.empty(d)
        cols = np.sort(Xa, axis=0)
        for j in range(d):
            lo = _release_quantile(cols[:, j], q, each, rng, ledger, stage,
                                   f"x[{j}] lower", "down")
            hi = _release_quantile(cols[:, j], 1 - q, each, rng, ledger, stage,
                                   f"x[{j}] upper", "up")
            x_lo[j], x_hi[j] = _widen(lo, hi)
        return x_lo, x_hi
    row_max = np.sort(np.abs(Xa).max(axis=1))
    big = _release_quantile(row_max, 1 - q, each, rng, ledger, stage,
                            f"global |x| bound (per-row max over {d} columns)", "up")
    big = big if big > 0 else float(GRID[GRID > 0][0])
    return np.full(d, -big), np.full(d, big)
