"""Public clipping bounds and the fixed map into ``[-1, 1]``.

Methods that need bounded data (DP-SIS, AdaSSP, Frank-Wolfe, DP-GD, ...) map every column and the
label into ``[-1, 1]`` with :func:`to_unit`, using bounds that are either public (given by the
user and normalised here by :func:`parse_bounds`) or private (released by
:func:`dpstats.mechanisms.bounds.private_bounds`). Nothing here reads data or draws noise:
parsing user input and a fixed map given (public or released) bounds. Importable from
:mod:`dpstats.mechanisms.bounds` too.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from ..errors import ValidationError

__all__ = ["Bounds", "parse_bounds", "to_unit"]


@dataclass(frozen=True)
class Bounds:
    """Clipping bounds for the columns of X and for y.

    ``x_lo``, ``x_hi`` are per-column arrays of shape (d,) and ``y_lo``, ``y_hi`` floats, each
    ``None`` when not given / not estimated; ``source`` is ``"public"``, ``"private"`` or
    ``"auto"`` (nothing given: estimate privately); ``mode`` is ``"column"`` or ``"global"``
    for private bounds; ``eps`` is the budget charged to produce them (0 when public);
    ``hist``: the released noisy histograms behind log-histogram bounds (an object of
    :mod:`dpstats.estimators.bounds_release`, rows aligned with the columns of ``x_lo``),
    None otherwise. Released values: reading them again is post-processing.
    """

    x_lo: np.ndarray | None
    x_hi: np.ndarray | None
    y_lo: float | None
    y_hi: float | None
    source: str
    mode: str | None = None
    eps: float = 0.0
    hist: object = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        for arr in (self.x_lo, self.x_hi):
            if arr is not None:
                arr.setflags(write=False)

    @property
    def y(self) -> tuple[float, float] | None:
        """``(y_lo, y_hi)`` or None."""
        return None if self.y_lo is None else (self.y_lo, self.y_hi)


def to_unit(values, lo, hi) -> np.ndarray:
    """Map values into ``[-1, 1]``: centre at ``(lo + hi) / 2``, divide by ``(hi - lo) / 2``, clip.

    A fixed map given public (or already released) bounds, so every output coordinate lies in
    ``[-1, 1]`` whatever the data; ``lo``/``hi`` broadcast against the last axis of ``values``.

    >>> to_unit(np.array([[0.0, 5.0], [20.0, -9.0]]), [0.0, -1.0], [10.0, 1.0]).tolist()
    [[-1.0, 1.0], [1.0, -1.0]]
    """
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    mid = lo / 2.0 + hi / 2.0             # halves first: no overflow near the grid ends
    out = np.subtract(values, mid, dtype=np.float64)      # one new array, then in place
    out /= hi / 2.0 - lo / 2.0
    return np.clip(out, -1.0, 1.0, out=out)


def _pair(value, where: str) -> tuple[float, float]:
    fix = (f"{where} must be a pair (lo, hi) of finite numbers with lo < hi, e.g. (-1, 1); "
           f"got {value!r}")
    if isinstance(value, str | bytes) or not hasattr(value, "__len__") or len(value) != 2:
        raise ValidationError(fix)
    lo, hi = value
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in (lo, hi)):
        raise ValidationError(fix)
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValidationError(fix)
    return lo, hi


def _column_pairs(value, d: int, columns) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(value, dict):
        names = list(columns) if columns is not None else []
        lo, hi = np.full(d, np.nan), np.full(d, np.nan)
        for key, pair in value.items():
            if isinstance(key, numbers.Integral) and not isinstance(key, bool) and 0 <= key < d:
                j = int(key)
            elif key in names:
                j = names.index(key)
            else:
                raise ValidationError(
                    f"bounds['x'] names column {key!r}, which is not one of the {d} candidate "
                    "columns; use column names of the design matrix or indices 0..d-1")
            lo[j], hi[j] = _pair(pair, f"bounds['x'][{key!r}]")
        missing = np.flatnonzero(np.isnan(lo))
        if missing.size:
            shown = [names[j] if j < len(names) else int(j) for j in missing[:5]]
            raise ValidationError(
                f"bounds['x'] gives no (lo, hi) for {missing.size} column(s), e.g. {shown}; "
                "give every column, one (lo, hi) pair for all columns, or 'auto'")
        return lo, hi
    if not isinstance(value, str | bytes) and np.ndim(value) == 2:     # one pair per column
        if np.shape(value) != (d, 2):
            raise ValidationError(f"bounds['x'] as an array must have shape ({d}, 2); "
                                  f"got {np.shape(value)}")
        pairs = [_pair(tuple(row), f"bounds['x'][{j}]") for j, row in enumerate(value)]
        return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    lo, hi = _pair(value, "bounds['x']")
    return np.full(d, lo), np.full(d, hi)


def _is_auto(value) -> bool:
    return isinstance(value, str) and value == "auto"


def parse_bounds(bounds, d: int, *, columns=None) -> Bounds:
    """Normalise user-supplied ``bounds`` for ``d`` candidate columns and the label.

    Accepted forms (all values public, i.e. not read from the data):

    * ``"auto"``: nothing given, estimate both privately (``source="auto"``);
    * ``(lo, hi)``: the same bounds for every column and for y;
    * ``{"x": X_BOUNDS, "y": (lo, hi)}``, where ``X_BOUNDS`` is a pair for every column, a dict
      ``{column: (lo, hi)}`` covering every column (names from ``columns`` or indices), or an
      array of shape ``(d, 2)``; either value may be ``"auto"`` to estimate that part
      privately (it is then ``None`` in the result).

    Raises
    ------
    ValidationError
        Naming ``bounds`` and the fix, unless every pair is finite with ``lo < hi``.

    Examples
    --------
    >>> b = parse_bounds({"x": {"a": (0, 1), "b": (-5, 5)}, "y": "auto"}, 2, columns=["a", "b"])
    >>> b.x_lo.tolist(), b.x_hi.tolist(), b.y, b.source
    ([0.0, -5.0], [1.0, 5.0], None, 'public')
    """
    if isinstance(bounds, str):
        if not _is_auto(bounds):
            raise ValidationError(f"bounds={bounds!r} is not understood; use 'auto' (private "
                                  "estimate), a pair (lo, hi) or {'x': ..., 'y': ...}")
        return Bounds(None, None, None, None, source="auto")
    if isinstance(bounds, dict):
        if set(bounds) != {"x", "y"}:
            raise ValidationError(
                f"bounds as a dict needs exactly the keys 'x' and 'y' (use 'auto' for a part "
                f"to be estimated privately); got keys {sorted(map(str, bounds))}")
        x_lo, x_hi = (None, None) if _is_auto(bounds["x"]) else \
            _column_pairs(bounds["x"], d, columns)
        y_lo, y_hi = (None, None) if _is_auto(bounds["y"]) else _pair(bounds["y"], "bounds['y']")
        src = "auto" if x_lo is None and y_lo is None else "public"
        return Bounds(x_lo, x_hi, y_lo, y_hi, source=src)
    lo, hi = _pair(bounds, "bounds")
    return Bounds(np.full(d, lo), np.full(d, hi), lo, hi, source="public")
