"""A dask partition's design built by one numba pass when the formula is purely numeric.

On each partition :class:`~dpstats.dask.design.PartitionDesign` builds ``(X, y)`` with the
in-memory :func:`~dpstats.formula.design.build_design` (checks, a copy of the columns block by
block, a row mask, a scan of the design for the rows :mod:`dpstats.formula.nonfinite` drops):
at 1e6 rows x 10 columns about as long as all the statistics of the first pass together. When
the formula's response and every term are plain numeric columns, the design is just those
columns after an intercept, with the rows rules of :mod:`dpstats.formula.nonfinite`, so
:func:`dpstats._kernels.design_rows.numeric_rows` writes it in one pass.

:func:`numeric_plan` decides this on the client from public facts only (the formula, the
frame's schema, the design's column names built from that schema): a ``lm`` formula whose
response is a numeric column and whose right-hand side is ``.`` or a sum of column names
(``- 1`` / ``+ 0`` allowed), every one a plain numpy numeric column (not bool, not
categorical, not a nullable extension dtype), no undeclared categoricals and no released level
codings, and the schema's design columns exactly ``Intercept`` (when kept) and those names in
that order; for ``dp_glm`` the same, then the rows whose response is 0 or 1. Anything else
(transforms, interactions, factors, a bool or categorical ``dp_glm`` response) returns None
and the formula path runs as before. The design is the same array either way
(``tests/dask/test_numeric_design.py``), so no released value changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..formula.nonfinite import MAX_ABS, MIN_SCALE
from ..formula.numeric import INTERCEPT
from ..formula.parse import _split_formula

__all__ = ["NumericPlan", "numeric_plan", "numeric_design", "ENABLED"]

#: Test hook: False always returns None from :func:`numeric_plan` (the formula path).
ENABLED = True

_NO_INTERCEPT = ("-1", "+0")
_LEADING = {"0+": False, "-1+": False, "1+": True}


@dataclass(frozen=True)
class NumericPlan:
    """The response column, the term columns in design order and whether the design starts
    with an intercept column."""

    label: str
    names: tuple[str, ...]
    intercept: bool


def _plain(dt) -> bool:
    """A numpy integer or float dtype (what formulaic turns into the same float64 values)."""
    return isinstance(dt, np.dtype) and dt.kind in "iuf"


def _terms(rhs: str, names: list[str]) -> tuple[tuple[str, ...], bool] | None:
    """The columns and intercept of ``rhs`` if it is ``.`` or a sum of bare column names."""
    key = "".join(rhs.split())
    intercept = True
    for lead, keep in _LEADING.items():
        if key.startswith(lead):
            key, intercept = key[len(lead):], keep
            break
    for tail in _NO_INTERCEPT + ("+1",):
        if key.endswith(tail):
            key, intercept = key[:-len(tail)], tail == "+1" and intercept
            break
    if key == ".":
        return tuple(names), intercept
    terms = key.split("+")
    if len(set(terms)) != len(terms) or not all(t.isidentifier() and t in names for t in terms):
        return None
    return tuple(terms), intercept


def numeric_plan(formula: str, kind: str, meta: pd.DataFrame, columns: tuple[str, ...],
                 text: tuple = (), codings: tuple = ()) -> NumericPlan | None:
    """A :class:`NumericPlan` when the numeric builder gives exactly the formula's design
    (see the module docstring), else None. Public inputs only: nothing here reads a row.

    >>> meta = pd.DataFrame({"y": [1.0], "a": [2.0], "g": ["u"]}).iloc[:0]
    >>> numeric_plan("y ~ a", "lm", meta, ("Intercept", "a"))
    NumericPlan(label='y', names=('a',), intercept=True)
    >>> numeric_plan("y ~ np.log(a)", "lm", meta, ("Intercept", "np.log(a)")) is None
    True
    >>> numeric_plan("y ~ .", "lm", meta, ("Intercept", "a", "g[T.u]")) is None
    True

    ``dp_glm`` (``kind="glm"``) takes the same plan for a plain numeric response: its design
    is the same arrays after :func:`~dpstats.pipeline.glm_design.binary_arrays` keeps the rows
    whose response is 0 or 1, as the formula path's ``binary_rows`` does (a bool or
    categorical response is not a plain numeric column, so it falls back).
    """
    if not ENABLED or kind not in ("lm", "glm") or text or codings:
        return None
    lhs, rhs = _split_formula(formula)
    label = lhs.strip()
    if label not in meta.columns or not _plain(meta.dtypes[label]):
        return None
    others = [str(c) for c in meta.columns if c != label]
    parsed = _terms(rhs, others)
    if parsed is None:
        return None
    names, intercept = parsed
    if not names or not all(_plain(meta.dtypes[c]) for c in names):
        return None
    if tuple(columns) != ((INTERCEPT,) if intercept else ()) + names:
        return None
    return NumericPlan(label, names, intercept)


def _values(pdf: pd.DataFrame, used: list[str]) -> tuple[np.ndarray, list[str]]:
    """The float64 values of the columns ``used`` (all of the partition's when it has no
    others: a one-block frame's values are then a view, not a copy) and their names."""
    frame = pdf if len(used) == pdf.shape[1] and set(used) == set(pdf.columns) else pdf[used]
    return frame.to_numpy(dtype=np.float64), [str(c) for c in frame.columns]


def numeric_design(pdf: pd.DataFrame, plan: NumericPlan) -> tuple[np.ndarray, np.ndarray]:
    """The partition's ``(X, y)`` by :func:`dpstats._kernels.design_rows.numeric_rows`: the
    same arrays as the formula path (C-ordered; the kept rows only)."""
    from .._kernels.design_rows import numeric_rows
    values, names = _values(pdf, [plan.label, *plan.names])
    where = {c: j for j, c in enumerate(names)}
    cols = np.array([where[c] for c in plan.names], dtype=np.int64)
    n = values.shape[0]
    X = np.empty((n, int(plan.intercept) + len(cols)))
    y_out = np.empty(n)
    kept = numeric_rows(values, where[plan.label], cols, plan.intercept, MAX_ABS, MIN_SCALE,
                        X, y_out)
    if kept == n:
        return X, y_out
    return np.ascontiguousarray(X[:kept]), y_out[:kept].copy()
