"""Data frames of other libraries as pandas: a polars ``DataFrame``, a pyarrow ``Table`` or
``RecordBatch`` is accepted wherever a pandas DataFrame is, converted once.

They are recognised by the module of their type, so ``import dpstats`` imports neither library
(only a frame of one, whose library is then loaded already, makes this module touch it). The
conversion keeps what the types declare and nothing more:

* a polars ``Enum`` and a pyarrow dictionary column are declared levels: they become a
  ``pd.Categorical`` with those categories, in their order, so no levels stage runs;
* a polars ``Categorical`` is not: its categories are the values polars happened to meet in
  the data, so it becomes text, whose levels are discovered privately (as a text column of a
  pandas frame; cast it to ``pl.Enum([...])`` to declare them);
* strings become pandas' text columns, booleans bool, nulls missing values (an integer column
  with nulls becomes float with NaN, as pandas reads one), dates datetime64 (refused as
  features with the usual message).

Numeric columns without nulls are not copied where Arrow allows it (``split_blocks``); a
polars frame goes through Arrow (zero-copy) when pyarrow is installed, and column by column
otherwise.
"""

from __future__ import annotations

import importlib

import pandas as pd

__all__ = ["foreign_frame", "conversion_hint", "is_dask_frame"]


def _library(data: object) -> tuple[str, str]:
    """(top-level module, type name) of ``data``'s type, without importing anything."""
    return type(data).__module__.split(".")[0], type(data).__name__


def foreign_frame(data: object) -> pd.DataFrame | None:
    """``data`` as a pandas DataFrame when it is a polars DataFrame or a pyarrow Table or
    RecordBatch; None for anything else."""
    lib, name = _library(data)
    if not (hasattr(data, "to_pandas") and hasattr(data, "schema")):
        return None
    if lib == "polars" and name == "DataFrame":
        return _from_polars(data)
    if lib == "pyarrow" and name in ("Table", "RecordBatch"):
        return _from_arrow(data)
    return None


def is_dask_frame(data: object) -> bool:
    """Whether ``data`` is a dask DataFrame (fitted on its workers by :mod:`dpstats.dask`),
    recognised without importing dask.

    >>> is_dask_frame(pd.DataFrame({"a": [1.0]}))
    False
    """
    lib, name = _library(data)
    return lib == "dask" and name == "DataFrame" and hasattr(data, "map_partitions")


def conversion_hint(data: object, arg: str) -> str:
    """How to turn a frame-like object of another library into one dpstats accepts ('' when
    there is no known way)."""
    lib, name = _library(data)
    if lib == "polars" and name == "LazyFrame":
        return f"; collect a polars LazyFrame first: {arg}.collect()"
    if lib == "dask":
        return f"; compute a dask frame first: {arg}.compute()"
    if lib in ("polars", "pyarrow"):
        return "; a polars DataFrame or a pyarrow Table is accepted as well"
    return ""


def _from_arrow(table) -> pd.DataFrame:
    """A pyarrow Table or RecordBatch: dictionary columns become categoricals with the
    dictionary as their categories; dates become datetime64, not Python objects."""
    return table.to_pandas(date_as_object=False, split_blocks=True)


def _from_polars(frame) -> pd.DataFrame:
    pl = importlib.import_module("polars")     # loaded already: `frame` is one of its frames
    undeclared = [n for n, dt in frame.schema.items() if isinstance(dt, pl.Categorical)]
    if undeclared:
        frame = frame.with_columns([pl.col(n).cast(pl.String) for n in undeclared])
    try:
        return frame.to_pandas(date_as_object=False, split_blocks=True)
    except ImportError:                      # polars needs pyarrow for to_pandas
        return polars_by_column(frame)


def polars_by_column(frame) -> pd.DataFrame:
    """A polars DataFrame converted column by column, without pyarrow (an ``Enum`` becomes a
    ``pd.Categorical`` with its categories)."""
    pl = importlib.import_module("polars")
    columns = {}
    for col in frame.iter_columns():
        if isinstance(col.dtype, pl.Enum):
            codes = col.to_physical().cast(pl.Int64).fill_null(-1).to_numpy()
            columns[col.name] = pd.Categorical.from_codes(
                codes, categories=col.dtype.categories.to_list(), ordered=True)
        else:
            columns[col.name] = col.to_numpy()
    return pd.DataFrame(columns)
