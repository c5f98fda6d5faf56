"""Input checks for the formula layer: frames, dtypes, stateful transforms, ``newdata`` values.

Every message names the argument and the columns involved, never a data value, and for the data
of a fit no check reads its values or row count (those are handled by
:mod:`dpstats.formula.nonfinite` instead). Calls that
would learn a statistic from the rows (formulaic's stateful transforms, splines, row-order
transforms and whole-column reductions) are refused with a
:class:`~dpstats.errors.StatefulTransformError`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from formulaic.transforms import TRANSFORMS

from ..errors import DataError, StatefulTransformError
from .frames import conversion_hint, foreign_frame
from .nonfinite import MAX_ABS, MIN_SCALE

# Calls refused wherever they appear, matched on the last dotted component (``np.mean``,
# ``x.mean`` and ``mean`` alike): formulaic's stateful transforms, splines, row-order transforms
# and the reductions that read a statistic of a whole column.
_REFUSED = frozenset(
    "center scale standardize poly bs cr cs cc te ti s ns basis_spline natural_cubic_spline "
    "cyclic_cubic_spline hashed lag lead shift diff mean nanmean std nanstd var nanvar median "
    "nanmedian quantile nanquantile percentile nanpercentile min max nanmin nanmax amin amax "
    "sum nansum prod nanprod ptp average cumsum cumprod cummax cummin rank sort sorted argsort "
    "unique nunique value_counts zscore describe rolling expanding ewm len count mode".split())
_STATELESS_OK = frozenset({"C", "Q"})  # formulaic marks these stateful; they learn nothing
_STATEFUL = ("`formula` uses {fname}(...) in the term {expr!r}. That transform learns from the "
             "data (means, standard deviations, quantiles, knots, hash buckets or row order) "
             "without privacy protection, so its output would leak them. Transform with public "
             "constants before fitting instead, e.g. I((x - 50) / 10) with a centre and scale "
             "you know from outside the data, or compute the column yourself with such values")
# Fit data: rows with a value beyond MAX_ABS are dropped and values below MIN_SCALE set to 0
# (dpstats.formula.nonfinite); `newdata` for score() is checked by _check_values instead.
_NO_ROWS = ("no rows of `{arg}` are left after dropping rows with a missing value in the "
            "response or a variable the formula uses; fill or drop the missing values first")


def _check_frame(data: object, arg: str, *, rows: bool = True) -> pd.DataFrame:
    """``data`` as a pandas DataFrame with columns (and rows, unless ``rows`` is False); a dict
    of equal-length columns, a polars DataFrame and a pyarrow Table or RecordBatch are
    converted (:mod:`dpstats.formula.frames`).

    Other types (a polars LazyFrame, dask frames, numpy arrays) are refused with the call that
    converts them, so that nothing is silently computed. The data of a fit passes
    ``rows=False``: its row count is private, so a frame with no rows is fitted (and withheld
    or noisy) like any other; ``newdata`` must have rows.
    """
    if isinstance(data, Mapping) and not isinstance(data, pd.DataFrame):
        try:
            data = pd.DataFrame(dict(data))
        except (ValueError, TypeError):  # pandas' message may quote values: not passed on
            raise DataError(f"`{arg}` is a dict but not one of equal-length columns; pass "
                            f"{{'column name': list_or_array, ...}} with one entry per row in "
                            "every column, or a pandas DataFrame") from None
    if not isinstance(data, pd.DataFrame):
        converted = foreign_frame(data)      # a polars DataFrame, a pyarrow Table: converted
        if converted is None:
            raise DataError(f"`{arg}` must be a pandas DataFrame, got {type(data).__name__}; "
                            "pass a pandas DataFrame, e.g. pd.DataFrame(...)"
                            + conversion_hint(data, arg))
        data = converted
    if data.shape[1] == 0:   # the message must not quote the row count: it is private
        raise DataError(f"`{arg}` is empty (no columns); pass a DataFrame with the columns the "
                        "formula uses")
    if rows and data.shape[0] == 0:
        raise DataError(f"`{arg}` is empty (no rows); pass a DataFrame with at least one row")
    return data


def _check_names(data: pd.DataFrame, arg: str) -> None:
    names = list(data.columns)
    if not all(isinstance(c, str) for c in names) or len(set(names)) != len(names):
        raise DataError(f"column names of `{arg}` must be unique strings; fix them first, e.g. "
                        f"{arg}.columns = [f'x{{i}}' for i in range({arg}.shape[1])]")


def _refuse_stateful(fname: str, expr: str) -> None:
    """Refuse the call ``fname`` in the term ``expr`` if it would learn from the data.

    ``contr.*`` contrasts and ``C``/``Q`` are allowed; other names are matched on their last
    dotted component against the refused list and formulaic's stateful transforms.

    Raises
    ------
    StatefulTransformError
        Naming the call and the term, with the fix (transform with public constants).
    """
    stateful = "." not in fname and getattr(
        TRANSFORMS.get(fname), "__is_stateful_transform__", False)
    if not fname.startswith("contr.") and (fname.rsplit(".", 1)[-1] in _REFUSED or (
            stateful and fname not in _STATELESS_OK)):
        raise StatefulTransformError(_STATEFUL.format(fname=fname, expr=expr))


def _check_label_dtype(data: pd.DataFrame, label: str, arg: str) -> None:
    dtype = data[label].dtype
    if not pd.api.types.is_numeric_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype) \
            or pd.api.types.is_complex_dtype(dtype):
        raise DataError(f"the response {label!r} in `{arg}` has dtype {dtype}, but dp_lm needs a "
                        "numeric label; convert it first (for a yes/no outcome use 0/1 and "
                        "dp_glm with family='binomial')")


def _check_feature_dtypes(data: pd.DataFrame, cols: list[str], arg: str) -> None:
    bad = [c for c in cols if pd.api.types.is_datetime64_any_dtype(data[c].dtype)
           or pd.api.types.is_timedelta64_dtype(data[c].dtype)
           or isinstance(data[c].dtype, pd.PeriodDtype)]
    if bad:
        raise DataError(f"columns {bad} of `{arg}` hold dates or times, which cannot be used as "
                        "features directly; convert them to a number first, e.g. "
                        "data['year'] = data['date'].dt.year")
    cplx = [c for c in cols if pd.api.types.is_complex_dtype(data[c].dtype)]
    if cplx:
        raise DataError(f"columns {cplx} of `{arg}` hold complex numbers; use their real part, "
                        "imaginary part or modulus as real-valued columns instead, e.g. "
                        "np.real(z) or np.abs(z)")


def _check_values(mat: np.ndarray, names: list[str], arg: str) -> None:
    """Refuse infinite values and magnitudes float64 arithmetic cannot square (see
    :data:`MAX_ABS`, :data:`MIN_SCALE`) in ``newdata`` for ``score``, naming the columns, never
    a value. The data of a fit is never refused for its values: see
    :mod:`dpstats.formula.nonfinite`."""
    if mat.size == 0:
        return
    hi, lo = mat.max(axis=0), mat.min(axis=0)   # no copy of mat, unlike np.abs(mat)
    bad = ~(np.isfinite(hi) & np.isfinite(lo))
    if bad.any():
        cols = [n for n, b in zip(names, bad, strict=True) if b]
        raise DataError(f"columns {cols} of `{arg}` contain infinite values; drop those rows or "
                        "cap the values at public bounds first")
    big = np.maximum(np.abs(hi), np.abs(lo))
    huge, tiny = big > MAX_ABS, (big > 0) & (big < MIN_SCALE)
    if huge.any():
        cols = [n for n, b in zip(names, huge, strict=True) if b]
        raise DataError(f"columns {cols} of `{arg}` hold values beyond {MAX_ABS:g} in magnitude, "
                        "too large for float64 arithmetic (their squares overflow); rescale them "
                        "by a public constant, e.g. I(x / 1e100) in the formula or "
                        f"{arg}['x'] / 1e100, or drop or cap those rows at public bounds")
    if tiny.any():
        cols = [n for n, b in zip(names, tiny, strict=True) if b]
        raise DataError(f"columns {cols} of `{arg}` hold only values below {MIN_SCALE:g} in "
                        "magnitude (their squares underflow to zero); rescale them by a public "
                        f"constant, e.g. I(x * 1e100) in the formula or {arg}['x'] * 1e100")
