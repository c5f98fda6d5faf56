"""R-style formulas to design matrices: a thin, privacy-aware wrapper over formulaic.

Nothing is learned from the data for free: transforms that read statistics from the rows
(``center``, ``scale``, ``poly``, splines, ``np.mean``, ...) are refused, and category levels
read from the data trigger one :class:`~dpstats.errors.PrivacyLeakWarning`. Rows with missing
values are dropped and their number is never stored, and so are rows with values no method can
compute with (:mod:`dpstats.formula.nonfinite`). Error messages name columns, never values, and
no error depends on the data's values or row count.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import DataError, FormulaError, PredictionError, PrivacyLeakWarning
from .checks import (
    _NO_ROWS,
    _check_feature_dtypes,
    _check_frame,
    _check_label_dtype,
    _check_names,
    _check_values,
)
from .discovery import apply_coding
from .levels import (
    _categorical_factors,
    _categorical_source,
    _float_ints,
    _materialize,
    _plain_strings,
)
from .nonfinite import infinite_inputs, usable_rows
from .numeric import NumericSpec, complete_rows, fast_dot_spec
from .parse import _columns_of, _expand_dot, _factors, _parse, _split_formula

__all__ = ["Design", "build_design", "design_for_new_data", "response_for_new_data", "check_data"]


@dataclass(frozen=True, eq=False)
class Design:
    """A design matrix and response built from a formula.

    ``X`` (float64, C-contiguous, n x p, rows with missing values dropped) and ``y`` (n,);
    ``columns`` (``"Intercept"`` first when present); ``label`` (the response column or the
    left-hand-side expression); ``formula`` as written and ``expanded`` with ``.`` expanded;
    ``has_intercept``; ``spec``, the formulaic ``ModelSpec`` of the right-hand side that rebuilds
    ``X`` for new data; ``levels_from_data``, variables whose levels were read from the data;
    ``variables``, the data columns used (response first); ``recode``, the
    :class:`~dpstats.formula.discovery.LevelCoding` of columns whose levels were released by a
    private mechanism, applied to new data too; ``terms``, the formula's terms that have
    columns (the intercept is none), and ``term_of``, the index into ``terms`` of each column
    (-1 for the intercept): a factor or an interaction with one is one term of several columns,
    a numeric column one term; ``term_factor``, per term, whether it is a factor's main effect
    (its columns the factor's dummies). All are data-free (formula and declared or released
    levels).
    """

    X: np.ndarray
    y: np.ndarray
    columns: list[str]
    label: str
    formula: str
    expanded: str
    has_intercept: bool
    spec: object
    levels_from_data: tuple[str, ...]
    variables: tuple[str, ...] = ()
    recode: tuple = ()
    terms: tuple[str, ...] = ()
    term_of: tuple[int, ...] = ()
    term_factor: tuple[bool, ...] = ()


def _as_float(mat) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(mat, dtype=np.float64))


def _response(lhs_mm, label: str, arg: str) -> np.ndarray:
    if lhs_mm.shape[1] != 1 or _categorical_factors(lhs_mm.model_spec):
        raise DataError(f"the response {label!r} in `{arg}` is not numeric, but dp_lm needs a "
                        "numeric label; convert it to numbers first")
    return _as_float(lhs_mm).reshape(-1)


# ----------------------------------------------------------------------------- public API
def check_data(data: object, arg: str = "data") -> pd.DataFrame:
    """``data`` as a pandas DataFrame with columns (unique strings); it may have no rows (the
    row count of a fit's data is private, so it decides nothing here).

    A dict of equal-length columns is converted with ``pd.DataFrame(data)``, a polars DataFrame
    or a pyarrow Table by :mod:`dpstats.formula.frames`; other types (numpy arrays, a polars
    LazyFrame, dask frames, ...) raise a :class:`~dpstats.errors.DataError` that says how to
    convert them.

    >>> check_data({"y": [1.0, 2.0], "x": [0, 1]}).shape
    (2, 2)
    """
    data = _check_frame(data, arg, rows=False)
    _check_names(data, arg)
    return data


def build_design(formula: str, data: pd.DataFrame, *, warn_levels: bool = True) -> Design:
    """Build the design matrix and response for ``formula`` on ``data``.

    Parameters
    ----------
    formula : str
        R-style, e.g. ``"y ~ x1 + C(g, levels=['a', 'b'])"``. ``.`` means every other column
        (frame order); ``- 1`` or ``+ 0`` drops the intercept; ``a:b``, ``a*b`` interact;
        element-wise transforms such as ``np.log(x)`` or ``I((x - 50) / 10)`` work. Only
        transforms on the allowlist of :mod:`dpstats.formula.rowwise` are accepted, so that
        each design row depends on its own row alone (``x.shape``, indexing, reductions and
        sorts are refused).
    data : pandas.DataFrame
        Rows with a missing value in any variable used are dropped (the count is not stored),
        and so, silently, are rows with an infinite value in a variable used, rows whose
        transformed values are not finite (``np.log(0)``, ``np.sqrt(-1)``, ``I(1 / x)`` at 0)
        and rows with a design or response value beyond 1e150 in magnitude; values below
        1e-150 in magnitude are set to 0 (:mod:`dpstats.formula.nonfinite`). numpy's warnings
        are never shown. No value, and no row count (none left is a design with 0 rows),
        raises an error.
    warn_levels : bool, default True
        Warn when category levels are read from the data. The pipeline passes False: it
        discovers such levels privately (:mod:`dpstats.pipeline.levels`) and builds the design
        again from the released ones.

    Returns
    -------
    Design

    Raises
    ------
    DataError, FormulaError, StatefulTransformError
        Naming the argument and the fix, never a data value (nor a level read from the data;
        StatefulTransformError: a transform that learns from the data or is not provably
        row-wise). A :class:`~dpstats.errors.PrivacyLeakWarning` names, once, every variable
        whose category levels were read from the data (unless ``warn_levels`` is False).

    Examples
    --------
    >>> df = pd.DataFrame({"y": [1.0, 2.0, 4.0], "x": [0.0, 1.0, 2.0], "z": [1.0, 0.0, 1.0]})
    >>> d = build_design("y ~ .", df)
    >>> d.columns, d.X.shape, d.expanded
    (['Intercept', 'x', 'z'], (3, 3), 'y ~ (x + z)')
    """
    data = check_data(data, "data")
    lhs, rhs = _split_formula(formula)
    fast = fast_dot_spec(lhs, rhs, data)
    if fast is not None:
        return _fast_design(formula, lhs.strip(), fast, data)
    parsed, expanded, label, used = _parse_sides(lhs, rhs, data)
    frame = _complete_rows(data, used, parsed)
    mm = _materialize(lambda: parsed.get_model_matrix(frame, output="numpy", na_action="drop"),
                      lambda res: res.rhs.model_spec, frame, predict=False)
    spec = mm.rhs.model_spec
    cols = [str(c) for c in spec.column_names]
    if not cols:
        raise FormulaError(f"`formula` {formula!r} has no terms left on the right of '~'; add "
                           "at least one column or keep the intercept")
    X, y = _as_float(mm.rhs), _response(mm.lhs, label, "data")
    X, y = usable_rows(X, y)
    from_data = _levels_from_data(spec, frame)
    if from_data and warn_levels:
        _warn_levels(from_data)
    terms, term_of, factor = _term_structure(spec, len(cols))
    return Design(X=X, y=y, columns=cols, label=label, formula=formula, expanded=expanded,
                  has_intercept=any(str(t) == "1" for t in spec.formula), spec=spec,
                  levels_from_data=from_data, variables=tuple(used), terms=terms,
                  term_of=term_of, term_factor=factor)


def _term_structure(spec, p: int) -> tuple[tuple[str, ...], tuple[int, ...], tuple[bool, ...]]:
    """``(terms, term_of, term_factor)`` from formulaic's ``ModelSpec``: the terms with
    columns, in column order, each column's term (-1 for the intercept term ``1``) and whether
    each term is one categorical factor."""
    term_of, terms, factor = [-1] * p, [], []
    categorical = _categorical_factors(spec)
    for term, idx in spec.term_indices.items():
        if str(term) == "1" or not idx:
            continue
        for j in idx:
            term_of[j] = len(terms)
        terms.append(str(term))
        factor.append(len(term.factors) == 1 and term.factors[0] in categorical)
    return tuple(terms), tuple(term_of), tuple(factor)


def _parse_sides(lhs: str, rhs: str, data: pd.DataFrame):
    """Parse both sides of the formula (``.`` expanded) and check the variables they use.

    Returns ``(parsed, expanded, label, used)``: the formulaic formula, its expanded text, the
    response label and the data columns used (response first). Raises FormulaError for a bad
    response or a response among the terms, DataError for unusable dtypes.
    """
    names = list(data.columns)
    columns = dict.fromkeys(names)
    lhs_terms = list(_parse(f"{lhs} ~ 1").lhs)
    lhs_factors = _factors(lhs_terms)
    lhs_cols = _columns_of(lhs_factors, columns)
    if len(lhs_terms) != 1 or not lhs_cols:
        raise FormulaError(f"`formula` needs exactly one response built from a column on the "
                           f"left of '~', e.g. 'y ~ x' or 'np.log(y) ~ x'; got {lhs!r}")
    expanded = f"{lhs} ~ {_expand_dot(rhs, [c for c in names if c not in lhs_cols])}"
    parsed = _parse(expanded)
    rhs_cols = _columns_of(_factors(parsed.rhs), columns)
    single = len(lhs_factors) == 1 and lhs_factors[0].eval_method.value == "lookup"
    label = lhs_factors[0].expr if single else lhs
    if single:
        _check_label_dtype(data, label, "data")
    _check_feature_dtypes(data, rhs_cols, "data")
    both = set(lhs_cols) & set(rhs_cols)
    if both:
        raise FormulaError(f"the response variable(s) {sorted(both)} also appear among the terms; "
                           "remove them from the right of '~' (with '.', write 'y ~ . - x')")
    return parsed, expanded, label, list(dict.fromkeys(lhs_cols + rhs_cols))


def _complete_rows(data: pd.DataFrame, used: list, parsed) -> pd.DataFrame:
    """The ``used`` columns of the rows with no missing value (NaN, None or an infinite float),
    ready for formulaic; possibly none."""
    frame = _plain_strings(data[used])
    complete = frame.notna().all(axis=1).to_numpy()
    if not complete.all():  # faster than formulaic's per-factor drop; it still drops NaN
        frame = frame[complete].reset_index(drop=True)  # that transforms produce (log(-1))
    infinite = infinite_inputs(frame)
    if infinite.any():
        frame = frame[~infinite].reset_index(drop=True)
    return _float_ints(frame, _factors(parsed.lhs) + _factors(parsed.rhs))


def _levels_from_data(spec, frame: pd.DataFrame) -> tuple:
    """Variables whose category levels were read from the data."""
    return tuple(dict.fromkeys(c or f.expr for f in _categorical_factors(spec)
                               for c, known in [_categorical_source(f, frame)] if not known))


def _warn_levels(from_data: tuple) -> None:
    """Warn, once, to the caller of :func:`build_design`."""
    warnings.warn(PrivacyLeakWarning(
        f"the category levels of {list(from_data)} were read from the data, which reveals "
        "without privacy protection which values occur. Declare them instead: "
        "data[col] = pd.Categorical(data[col], categories=[...]) or write "
        "C(col, levels=[...]) in the formula"), stacklevel=3)


#: Frames with more columns than this (and at most _CONSOLIDATE_MAX_ENTRIES values) are copied
#: into consolidated blocks before the fast ``y ~ .`` design is built.
_WIDE_COLUMNS = 256
_CONSOLIDATE_MAX_ENTRIES = 1 << 25


def _fast_design(formula: str, label: str, spec: NumericSpec, data: pd.DataFrame) -> Design:
    """``label ~ .`` on all-numeric columns, without formulaic (see :mod:`._formula_fast`)."""
    if data.shape[1] > _WIDE_COLUMNS and data.size <= _CONSOLIDATE_MAX_ENTRIES:
        # pandas keeps a wide frame (read_csv of a microarray) as one block per column, and
        # every frame-wide step then loops over thousands of blocks: on golub (72 x 7,130) a
        # copy that consolidates them takes 0.1 s and the design 0.6 s -> 0.01 s after it
        data = data.copy()
    complete = complete_rows(data, [label, *spec.names])
    keep = None if complete.all() else complete
    X = spec.matrix(data, keep)
    y = data[label].to_numpy(dtype=np.float64)
    y = y[keep] if keep is not None else y.copy()
    X, y = usable_rows(X, y)          # the columns are the inputs: infinities are dropped here
    rhs = _expand_dot(".", spec.names) + ("" if spec.intercept else " - 1")
    first = int(spec.intercept)
    return Design(X=X, y=y, columns=list(spec.column_names), label=label, formula=formula,
                  expanded=f"{label} ~ {rhs}", has_intercept=spec.intercept, spec=spec,
                  levels_from_data=(), variables=(label, *spec.names), terms=tuple(spec.names),
                  term_of=(-1,) * first + tuple(range(len(spec.names))),
                  term_factor=(False,) * len(spec.names))


def design_for_new_data(design: Design, newdata: pd.DataFrame) -> np.ndarray:
    """Rebuild the fitted design matrix for ``newdata`` (same columns, same order).

    Rows with a missing input come back as rows of NaN, so the result has one row per row of
    ``newdata`` (their predictions are NaN, as with R's ``na.exclude``).

    Raises
    ------
    DataError
        ``newdata`` is not a non-empty pandas DataFrame.
    PredictionError
        A column is missing, or a categorical variable has a level neither seen nor declared
        at fit time (the variable is named, the value is not). In a column whose levels were
        discovered privately, a level that was not released counts as the pooled level, or
        as missing when there is none (as at fit time).

    Examples
    --------
    >>> df = pd.DataFrame({"y": [1.0, 2.0, 4.0], "x": [0.0, 1.0, 2.0]})
    >>> design_for_new_data(build_design("y ~ x", df), pd.DataFrame({"x": [5.0, None]}))
    array([[ 1.,  5.],
           [nan, nan]])
    """
    newdata = apply_coding(_check_frame(newdata, "newdata"), getattr(design, "recode", ()))
    spec = design.spec
    need = _required_columns(design)
    missing = [v for v in need if v not in newdata.columns]
    if missing:
        raise PredictionError(f"`newdata` lacks the column(s) {missing} that the model uses; "
                              "pass a DataFrame with the same columns as the fitted data")
    n, p = newdata.shape[0], len(design.columns)
    if not need:
        return np.ones((n, p))
    sub = _plain_strings(newdata[need].reset_index(drop=True))
    _check_feature_dtypes(sub, need, "newdata")
    complete = sub.notna().all(axis=1).to_numpy()
    if not complete.any():
        return np.full((n, p), np.nan)
    rows = sub if complete.all() else sub[complete].reset_index(drop=True)
    if not isinstance(spec, NumericSpec):
        rows = _float_ints(rows, _factors(spec.formula))
    mm = _materialize(lambda: spec.get_model_matrix(rows, na_action="ignore"),
                      lambda _res: spec, rows, predict=True)
    if complete.all():
        return _as_float(mm)
    X = np.full((n, p), np.nan)
    X[complete] = mm
    return X


def _required_columns(design: Design) -> list[str]:
    """The data columns the right-hand side reads, sorted.

    formulaic's ``required_variables`` keeps only the part of a name before its first dot (it
    takes ``a.fillna`` for an attribute of ``a``), so a column such as ``flc.grp`` came back as
    ``flc``. The fitted variables are the columns by their full names: the factors are resolved
    against them, as at fit time.
    """
    spec = design.spec
    if isinstance(spec, NumericSpec):
        return sorted(spec.names)
    variables = getattr(design, "variables", ())
    if not variables:        # a design built before the variables were recorded
        return sorted(str(v) for v in spec.required_variables)
    return sorted(_columns_of(_factors(spec.formula), dict.fromkeys(variables),
                              "newdata", PredictionError))


def response_for_new_data(design: Design, newdata: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Build ``(X, y)`` for scoring on ``newdata``, dropping rows with a missing value.

    Raises
    ------
    DataError
        ``newdata`` is not a DataFrame, the response is not numeric, values are infinite or
        no complete rows remain.
    PredictionError
        A column (the response included) is missing, or a category level is unseen.

    Examples
    --------
    >>> df = pd.DataFrame({"y": [1.0, 2.0, 4.0], "x": [0.0, 1.0, 2.0]})
    >>> X, y = response_for_new_data(build_design("y ~ x", df), df.iloc[:2])
    >>> X.shape, y.tolist()
    ((2, 2), [1.0, 2.0])
    """
    newdata = _check_frame(newdata, "newdata")
    lhs_formula = _parse(f"{_split_formula(design.expanded)[0]} ~ 1")
    try:
        lhs_cols = _columns_of(_factors(lhs_formula.lhs), dict.fromkeys(newdata.columns),
                               "newdata", PredictionError)
    except PredictionError as exc:                 # the fit found it: newdata lacks it
        if f"names {design.label!r}," in str(exc):       # the response is a plain column
            raise PredictionError(f"score needs the response column {design.label!r} in "
                                  "newdata; it is not a column of `newdata`") from None
        raise PredictionError(f"score needs the response {design.label!r} in newdata: "
                              f"{exc}") from None
    if design.label in lhs_cols:
        _check_label_dtype(newdata, design.label, "newdata")
    X = design_for_new_data(design, newdata)
    lhs_frame = _float_ints(newdata[lhs_cols].reset_index(drop=True), _factors(lhs_formula.lhs))
    mm = lhs_formula.get_model_matrix(lhs_frame, output="numpy", na_action="ignore")
    y = _response(mm.lhs, design.label, "newdata")
    keep = ~(np.isnan(X).any(axis=1) | np.isnan(y))
    if not keep.any():
        raise DataError(_NO_ROWS.format(arg="newdata"))
    X, y = X[keep], y[keep]
    _check_values(y[:, None], [design.label], "newdata")
    _check_values(X, design.columns, "newdata")
    return X, y
