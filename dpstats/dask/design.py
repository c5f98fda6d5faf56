"""The design of a dask frame: built on each partition by the in-memory code.

:func:`schema` is the frame's public schema, an empty pandas frame (dask's ``_meta``: column
names and dtypes, nothing computed). A categorical column whose categories dask does not know
(read from a file without them) is text there and on every partition: its levels are
discovered privately, never by ``categorize()``. :class:`PartitionDesign` is shipped to the
workers and builds ``(X, y)`` of one partition with :func:`dpstats.formula.design.build_design`
(the rows dropped for missing or non-finite values are exactly those of the in-memory path,
:mod:`dpstats.formula.nonfinite`, as every rule there acts on each row alone), after the
released level codings; its columns must be the schema's, so no partition can add a column.
With ``numeric`` (:func:`dpstats.dask.numeric.numeric_plan`, a purely numeric formula) the
same design is built by one numba pass instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import DataError
from ..formula.design import build_design
from ..formula.discovery import apply_coding
from ..pipeline.glm_design import binary_arrays, binary_response, binary_rows

__all__ = ["schema", "unknown_categoricals", "PartitionDesign"]

#: The placeholder category of a dask categorical whose categories are unknown.
_UNKNOWN = "__UNKNOWN_CATEGORIES__"


def unknown_categoricals(meta: pd.DataFrame) -> tuple[str, ...]:
    """Categorical columns of ``meta`` whose categories dask does not know.

    >>> meta = pd.DataFrame({"g": pd.Categorical([], categories=[_UNKNOWN])})
    >>> unknown_categoricals(meta)
    ('g',)
    """
    return tuple(c for c, dt in meta.dtypes.items()
                 if isinstance(dt, pd.CategoricalDtype) and _UNKNOWN in list(dt.categories))


def as_text(frame: pd.DataFrame, cols) -> pd.DataFrame:
    """``frame`` with the categorical columns ``cols`` as text (object)."""
    if not cols:
        return frame
    return frame.assign(**{c: frame[c].astype(object) for c in cols})


def schema(ddf) -> pd.DataFrame:
    """The public schema of a dask frame as an empty pandas frame (no task is run)."""
    meta = ddf._meta
    return as_text(meta.iloc[:0], unknown_categoricals(meta))


@dataclass(frozen=True)
class PartitionDesign:
    """Builds one partition's ``(X, y)``: the formula on the partition, with the undeclared
    categoricals as text and the released level ``codings`` applied; dp_glm's response coded
    0/1 as in memory. Picklable (sent to the workers)."""

    formula: str
    kind: str
    columns: tuple[str, ...]
    text: tuple[str, ...] = ()
    codings: tuple = ()
    numeric: object = None      # a NumericPlan: built by the numba pass (dpstats.dask.numeric)

    def frame(self, pdf: pd.DataFrame) -> pd.DataFrame:
        """The partition as the in-memory path sees the data (before the codings)."""
        return as_text(pdf, self.text)

    def __call__(self, pdf: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        if self.numeric is not None:
            from .numeric import numeric_design
            X, y = numeric_design(pdf, self.numeric)
            return binary_arrays(X, y) if self.kind == "glm" else (X, y)
        data = apply_coding(self.frame(pdf), self.codings)
        if self.kind == "glm":
            data, _ = binary_response(self.formula, data)
        design = build_design(self.formula, data, warn_levels=False)
        if self.kind == "glm":
            design = binary_rows(design)
        if tuple(design.columns) != self.columns:     # only undeclared levels can do this
            raise DataError("a partition of the dask frame gave other design columns than its "
                            "schema; declare the category levels (pd.CategoricalDtype in the "
                            "frame's dtypes or C(col, levels=[...]))")
        return design.X, design.y
