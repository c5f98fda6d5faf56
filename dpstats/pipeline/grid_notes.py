"""A note when private clipping bounds land at an end of the public grid.

Private bounds (:func:`dpstats.mechanisms.bounds.private_bounds`) are chosen from the public grid
``0, +-2**e`` for ``e`` in ``[-64, 64]``. A column whose values lie far beyond ``2**64`` (or are
all far below ``2**-64``) gets a bound at the end of that grid, is clipped hard, and the fit
that uses it is unreliable. The bounds are released values, so reading them is post-processing:
this costs no privacy and reads nothing else from the data.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

__all__ = ["grid_edge_note", "dropped_note", "warn_grid_edge", "TOP", "FLOOR"]

#: A released bound at least this large in magnitude sits at the top of the grid (2**64).
TOP = math.ldexp(1.0, 64)
#: A released box no wider than this in magnitude sits at the bottom of the grid.
FLOOR = math.ldexp(1.0, -60)


def _private_x(bounds: object) -> bool:
    """Whether the feature bounds were estimated privately (``"auto"``), not given."""
    return isinstance(bounds, str) or (isinstance(bounds, dict)
                                       and isinstance(bounds.get("x"), str))


def grid_edge_note(clip, columns, bounds: object = "auto") -> str | None:
    """A note naming the columns whose released clipping box sits at an end of the grid.

    ``clip`` is the released ``(lo, hi)`` box over the design columns (or None); columns with
    no box (infinite bounds) are skipped, and so are public bounds (``bounds`` not "auto").

    >>> cols = ["Intercept", "x"]
    >>> grid_edge_note((np.array([1.0, -2.0**64]), np.array([1.0, 2.0**64])), cols)[:40]
    "The private clipping bounds of ['x'] rea"
    >>> grid_edge_note((np.array([1.0, -4.0]), np.array([1.0, 4.0])), cols) is None
    True
    """
    if clip is None or not _private_x(bounds):
        return None
    top, floor = [], []
    for name, lo, hi in zip(columns, np.asarray(clip[0]), np.asarray(clip[1]), strict=True):
        if not (math.isfinite(lo) and math.isfinite(hi)):
            continue
        big = max(abs(lo), abs(hi))
        if big >= TOP:
            top.append(name)
        elif big <= FLOOR:
            floor.append(name)
    parts = []
    if top:
        parts.append(f"The private clipping bounds of {top} reached the top of dpstats' grid "
                     "(2**64, about 1.8e19), so their coefficients are unreliable: either the "
                     "values lie beyond it (rescale those columns by a public constant, e.g. "
                     "I(x / 1e15)) or the private bounds failed, as they can for a column that "
                     "is (nearly) constant or at a small eps (pass public bounds=).")
    if floor:
        parts.append(f"The private clipping bounds of {floor} are at the bottom of dpstats' "
                     "grid (about 2**-64), so their coefficients are unreliable: the values "
                     "are too small for the bounds to resolve (rescale those columns by a "
                     "public constant, e.g. I(x * 1e15), or pass public bounds=).")
    return " ".join(parts) or None


def dropped_note(dropped, kept_names) -> str | None:
    """A note naming the columns an estimator dropped (``Estimate.dropped``, positions in
    ``kept_names``) because their released bounds have zero width (DP-GD: a constant column,
    or values too small for the grid); their coefficient is 0.

    >>> dropped_note((1,), ["Intercept", "c"])[:33]
    "Columns ['c'] were left out (coef"
    """
    names = [kept_names[j] for j in dropped or ()]
    if not names:
        return None
    return (f"Columns {names} were left out (coefficient 0): their private bounds have zero "
            "width (a constant column, or values too small for the grid) or their private "
            "histogram showed nothing usable (too few rows for this eps, or values beyond "
            "2**64); rescale those by a public constant, or give public bounds=.")


def warn_grid_edge(notes: list, clip, columns, bounds: object, dropped, kept_names,
                   stacklevel: int = 3) -> None:
    """Append :func:`grid_edge_note` and :func:`dropped_note` to ``notes``; warn with the
    first (a fit whose clipping failed), while a dropped column is only noted."""
    note = grid_edge_note(clip, columns, bounds)
    if note:
        notes.append(note)
        warnings.warn(note, UserWarning, stacklevel=stacklevel)
    note = dropped_note(dropped, kept_names)
    if note:
        notes.append(note)
