"""R-style formulas to design matrices: a thin, privacy-aware wrapper over formulaic.

Nothing is learned from the data for free: transforms that read statistics from the rows
(``center``, ``scale``, ``poly``, splines, ``np.mean``, ...) are refused, and category levels
read from the data trigger one :class:`~dpstats.errors.PrivacyLeakWarning`. Rows with missing
values are dropped and their number is never stored. Error messages name columns, never values.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import keyword
import re
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from formulaic import Formula
from formulaic.errors import DataMismatchWarning, FormulaicError
from formulaic.transforms import TRANSFORMS
from formulaic.utils.code import sanitize_variable_names

from .errors import (
    DataError,
    FormulaError,
    PredictionError,
    PrivacyLeakWarning,
    StatefulTransformError,
)

__all__ = ["Design", "build_design", "design_for_new_data", "response_for_new_data"]

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
_KNOWN = set(TRANSFORMS) | set(dir(builtins))
_ANSI = re.compile(r"\x1b\[[0-9;]*m|[\u29da\u29db]")
_STATEFUL = ("`formula` uses {fname}(...) in the term {expr!r}. That transform learns from the "
             "data (means, standard deviations, quantiles, knots, hash buckets or row order) "
             "without privacy protection, so its output would leak them. Transform with public "
             "constants before fitting instead, e.g. I((x - 50) / 10) with a centre and scale "
             "you know from outside the data, or compute the column yourself with such values")
_NO_ROWS = ("no rows of `{arg}` are left after dropping rows with a missing value in the "
            "response or a variable the formula uses; fill or drop the missing values first")


@dataclass(frozen=True, eq=False)
class Design:
    """A design matrix and response built from a formula.

    ``X`` (float64, C-contiguous, n x p, rows with missing values dropped) and ``y`` (n,);
    ``columns`` (``"Intercept"`` first when present); ``label`` (the response column or the
    left-hand-side expression); ``formula`` as written and ``expanded`` with ``.`` expanded;
    ``has_intercept``; ``spec``, the formulaic ``ModelSpec`` of the right-hand side that rebuilds
    ``X`` for new data; ``levels_from_data``, variables whose levels were read from the data.
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


# ----------------------------------------------------------------------------- parsing
def _check_frame(data: object, arg: str) -> pd.DataFrame:
    if not isinstance(data, pd.DataFrame):
        how = {"polars": "to_pandas()", "dask": "compute()", "pyarrow": "to_pandas()"}
        lib = type(data).__module__.split(".")[0]
        raise DataError(f"`{arg}` must be a pandas DataFrame, got {type(data).__name__}; pass "
                        "a pandas DataFrame, e.g. pd.DataFrame(...)" + (
                            f"; convert a {lib} frame with {arg}.{how[lib]}" if lib in how else ""))
    if data.shape[0] == 0 or data.shape[1] == 0:
        raise DataError(f"`{arg}` is empty ({data.shape[0]} rows, {data.shape[1]} columns); "
                        "pass a DataFrame with at least one row and the columns the formula uses")
    return data


def _quoted(text: str) -> list[bool]:
    """For each char: is it inside backticks or a string literal (delimiters included)?"""
    out, quote = [], None
    for ch in text:
        was = quote
        if quote is None:
            quote = ch if ch in "`'\"" else None
        elif ch == quote:
            quote = None
        out.append(was is not None or quote is not None)
    return out


def _split_formula(formula: object) -> tuple[str, str]:
    if not isinstance(formula, str):
        raise FormulaError(f"`formula` must be a string such as 'y ~ x1 + x2' or 'y ~ .'; got "
                           f"{type(formula).__name__}")
    tildes = [i for i, q in enumerate(_quoted(formula)) if formula[i] == "~" and not q]
    if len(tildes) != 1:
        raise FormulaError(f"`formula` must contain exactly one '~' separating the response from "
                           f"the terms, e.g. 'y ~ x1 + x2'; got {formula!r}")
    lhs, rhs = formula[: tildes[0]].strip(), formula[tildes[0] + 1:].strip()
    if not lhs or not rhs:
        side = "response (left of '~')" if not lhs else "terms (right of '~')"
        raise FormulaError(f"`formula` {formula!r} has no {side}; write e.g. 'y ~ x1 + x2'")
    return lhs, rhs


def _quote(name: str) -> str:
    if name.isidentifier() and not keyword.iskeyword(name):
        return name
    if "`" in name:
        raise FormulaError(f"column {name!r} contains a backtick and cannot be used in a formula; "
                           "rename it first, e.g. data.rename(columns={...})")
    return f"`{name}`"


def _expand_dot(rhs: str, names: list[str]) -> str:
    """Replace each stand-alone ``.`` (not in ``np.log``, ``1.5`` or a quoted name) by names."""
    out = []
    for k, quoted in enumerate(_quoted(rhs)):
        prev, nxt = rhs[:k].rstrip()[-1:], rhs[k + 1:].lstrip()[:1]
        glued = (prev.isalnum() or (prev != "" and prev in "_)]`'\"")
                 or nxt.isalnum() or (nxt != "" and nxt in "_(`"))
        if rhs[k] == "." and not quoted and not glued:
            if not names:
                raise FormulaError("'.' in `formula` means all other columns, but `data` has "
                                   "no column besides the response")
            out.append("(" + " + ".join(_quote(n) for n in names) + ")")
        else:
            out.append(rhs[k])
    return "".join(out)


def _parse(text: str):
    try:
        parsed = Formula(text)
    except (FormulaicError, SyntaxError, ValueError, TypeError) as exc:
        msg = " ".join(_ANSI.sub("", str(exc)).split())
        raise FormulaError(f"`formula` could not be parsed: {msg}. Check the operators "
                           "(+ - : * ^ ~) and quote odd column names with backticks") from None
    rhs = getattr(parsed, "rhs", None)
    if rhs is None or isinstance(rhs, tuple):
        raise FormulaError(f"`formula` {text!r} must have one response and one set of terms "
                           "('y ~ a + b'); multi-part formulas with '|' are not supported")
    return parsed


def _factors(terms) -> list:
    return list({f.expr: f for term in terms for f in term.factors}.values())


def _python_expr(expr: str, columns) -> tuple[ast.AST, dict]:
    aliases: dict[str, str] = {}
    code = sanitize_variable_names(expr, dict.fromkeys(columns), aliases)
    return ast.parse(code, mode="eval"), aliases


def _factor_columns(factor, columns: dict, unknown: list) -> list[str]:
    """Data columns a factor reads; refuses stateful calls; appends unknown names."""
    method = factor.eval_method.value
    if method != "python":  # "literal" (1, 0) or "lookup" (a column name)
        if method == "lookup" and factor.expr not in columns:
            unknown.append(factor.expr)
        return [factor.expr] if factor.expr in columns and method == "lookup" else []
    tree, aliases = _python_expr(factor.expr, columns)
    used = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fname = ast.unparse(node.func)
            stateful = "." not in fname and getattr(
                TRANSFORMS.get(fname), "__is_stateful_transform__", False)
            if not fname.startswith("contr.") and (fname.rsplit(".", 1)[-1] in _REFUSED or (
                    stateful and fname not in _STATELESS_OK)):
                raise StatefulTransformError(_STATEFUL.format(fname=fname, expr=factor.expr))
            if fname == "Q" and node.args and isinstance(node.args[0], ast.Constant):
                name = str(node.args[0].value)
                (used if name in columns else unknown).append(name)
        elif isinstance(node, ast.Name):
            name = aliases.get(node.id, node.id)
            if name in columns:
                used.append(name)
            elif name not in _KNOWN:
                unknown.append(name)
    return used


def _columns_of(factors, columns: dict, arg: str = "data", err=FormulaError) -> list[str]:
    unknown: list[str] = []
    used = [c for f in factors for c in _factor_columns(f, columns, unknown)]
    if unknown:
        parts = []
        for name in dict.fromkeys(unknown):
            close = difflib.get_close_matches(name, list(columns), n=3)
            parts.append(repr(name) + (f" (did you mean {', '.join(map(repr, close))}?)"
                                       if close else ""))
        raise err(f"`formula` names {', '.join(parts)}, which "
                  f"{'is not a column' if len(parts) == 1 else 'are not columns'} of `{arg}` "
                  "(nor a known function); check the spelling, and quote names with spaces or "
                  "symbols in backticks, e.g. `my column`")
    return list(dict.fromkeys(used))


# ----------------------------------------------------------------------------- data checks
def _check_label_dtype(data: pd.DataFrame, label: str, arg: str) -> None:
    dtype = data[label].dtype
    if not pd.api.types.is_numeric_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype):
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


def _finite_or_raise(mat: np.ndarray, names: list[str], arg: str) -> None:
    bad = ~np.isfinite(mat).all(axis=0)
    if bad.any():
        cols = [n for n, b in zip(names, bad, strict=True) if b]
        raise DataError(f"columns {cols} of `{arg}` contain infinite values; drop those rows or "
                        "cap the values at public bounds before fitting")


def _plain_strings(frame: pd.DataFrame) -> pd.DataFrame:
    """formulaic treats only object/"str" columns as categorical: convert "string[...]" ones."""
    conv = {c: "str" for c, t in frame.dtypes.items()
            if pd.api.types.is_string_dtype(t) and str(t) not in ("object", "str")}
    return frame.astype(conv) if conv else frame


def _as_float(mat) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(mat, dtype=np.float64))


def _categorical_factors(spec) -> list:
    state = spec.encoder_state
    return [f for f in _factors(spec.formula)
            if f.expr in state and getattr(state[f.expr][0], "value", "") == "categorical"]


def _categorical_source(factor, data: pd.DataFrame) -> tuple[str | None, bool]:
    """(column holding the raw values or None, whether the levels were declared)."""
    if factor.eval_method.value == "lookup":
        return factor.expr, isinstance(data[factor.expr].dtype, pd.CategoricalDtype)
    (tree, aliases), col = _python_expr(factor.expr, data.columns), None
    call = tree.body
    if isinstance(call, ast.Call) and ast.unparse(call.func) == "C" and call.args:
        if isinstance(call.args[0], ast.Name):
            col = aliases.get(call.args[0].id, call.args[0].id)
            col = col if col in data.columns else None
        if any(kw.arg == "levels" for kw in call.keywords):
            return col, True
        return col, col is not None and isinstance(data[col].dtype, pd.CategoricalDtype)
    return None, False


def _mismatched(spec, data: pd.DataFrame) -> list[str]:
    """Columns holding values outside the fitted/declared levels (the values are not reported)."""
    names = []
    for factor in _categorical_factors(spec):
        col, _ = _categorical_source(factor, data)
        cats = spec.encoder_state[factor.expr][1].get("categories")
        if col is None or cats is None:
            names.append(factor.expr)
        elif bool((data[col].notna() & ~data[col].isin(list(cats))).any()):
            names.append(col)
    return names


def _materialize(build, spec_of, data: pd.DataFrame, *, predict: bool):
    """Run formulaic quietly; turn level mismatches and failures into dpstats errors."""
    err, arg = (PredictionError, "newdata") if predict else (DataError, "data")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = build()
        except (FormulaicError, ValueError, TypeError, ArithmeticError) as exc:  # may quote
            # data values, so the original message is not passed on
            m = re.search(r"factor `(.*?)`\. \[(\w+)", str(exc))
            where = f"the term {m[1]!r} ({m[2]})" if m else f"the formula ({type(exc).__name__})"
            raise err(f"could not evaluate {where} on `{arg}`; check that each variable is a "
                      "numeric or categorical column of the expected type") from None
    if any(issubclass(w.category, DataMismatchWarning) for w in caught):
        spec = spec_of(result)
        names = _mismatched(spec, data) or [f.expr for f in _categorical_factors(spec)]
        what = "not seen or declared at fit time" if predict else "outside the declared levels"
        raise err(f"`{arg}` has values of {names} {what}; declare every level, e.g. "
                  "pd.Categorical(x, categories=[...]) or C(x, levels=[...]), or remove or "
                  "recode those rows first")
    for w in caught:  # keep numpy's warnings; drop formulaic's (they quote values) and pandas'
        if not issubclass(w.category, (DataMismatchWarning, DeprecationWarning, FutureWarning)):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return result


def _response(lhs_mm, label: str, arg: str) -> np.ndarray:
    if lhs_mm.shape[1] != 1 or _categorical_factors(lhs_mm.model_spec):
        raise DataError(f"the response {label!r} in `{arg}` is not numeric, but dp_lm needs a "
                        "numeric label; convert it to numbers first")
    return _as_float(lhs_mm).reshape(-1)


# ----------------------------------------------------------------------------- public API
def build_design(formula: str, data: pd.DataFrame) -> Design:
    """Build the design matrix and response for ``formula`` on ``data``.

    Parameters
    ----------
    formula : str
        R-style, e.g. ``"y ~ x1 + C(g, levels=['a', 'b'])"``. ``.`` means every other column
        (frame order); ``- 1`` or ``+ 0`` drops the intercept; ``a:b``, ``a*b`` interact;
        stateless transforms such as ``np.log(x)`` or ``I((x - 50) / 10)`` work.
    data : pandas.DataFrame
        Rows with a missing value in any variable used are dropped (the count is not stored).

    Returns
    -------
    Design

    Raises
    ------
    DataError, FormulaError, StatefulTransformError
        Naming the argument and the fix, never a data value. A
        :class:`~dpstats.errors.PrivacyLeakWarning` names, once, every variable whose category
        levels were read from the data.

    Examples
    --------
    >>> df = pd.DataFrame({"y": [1.0, 2.0, 4.0], "x": [0.0, 1.0, 2.0], "z": [1.0, 0.0, 1.0]})
    >>> d = build_design("y ~ .", df)
    >>> d.columns, d.X.shape, d.expanded
    (['Intercept', 'x', 'z'], (3, 3), 'y ~ (x + z)')
    """
    data = _check_frame(data, "data")
    names = list(data.columns)
    if not all(isinstance(c, str) for c in names) or len(set(names)) != len(names):
        raise DataError("column names of `data` must be unique strings; fix them first, e.g. "
                        "data.columns = [f'x{i}' for i in range(data.shape[1])]")
    columns = dict.fromkeys(names)
    lhs, rhs = _split_formula(formula)
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
    frame = _plain_strings(data[list(dict.fromkeys(lhs_cols + rhs_cols))])
    complete = frame.notna().all(axis=1).to_numpy()
    if not complete.any():
        raise DataError(_NO_ROWS.format(arg="data"))
    if not complete.all():  # faster than formulaic's per-factor drop; it still drops NaN
        frame = frame[complete].reset_index(drop=True)  # that transforms produce (log(-1))
    mm = _materialize(lambda: parsed.get_model_matrix(frame, output="numpy", na_action="drop"),
                      lambda res: res.rhs.model_spec, frame, predict=False)
    spec = mm.rhs.model_spec
    cols = [str(c) for c in spec.column_names]
    if not cols:
        raise FormulaError(f"`formula` {formula!r} has no terms left on the right of '~'; add "
                           "at least one column or keep the intercept")
    X, y = _as_float(mm.rhs), _response(mm.lhs, label, "data")
    if X.shape[0] == 0:
        raise DataError(_NO_ROWS.format(arg="data"))
    _finite_or_raise(y[:, None], [label], "data")
    _finite_or_raise(X, cols, "data")
    from_data = tuple(dict.fromkeys(c or f.expr for f in _categorical_factors(spec)
                                    for c, known in [_categorical_source(f, frame)] if not known))
    if from_data:
        warnings.warn(PrivacyLeakWarning(
            f"the category levels of {list(from_data)} were read from the data, which reveals "
            "without privacy protection which values occur. Declare them instead: "
            "data[col] = pd.Categorical(data[col], categories=[...]) or write "
            "C(col, levels=[...]) in the formula"), stacklevel=2)
    return Design(X=X, y=y, columns=cols, label=label, formula=formula, expanded=expanded,
                  has_intercept=any(str(t) == "1" for t in spec.formula), spec=spec,
                  levels_from_data=from_data)


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
        at fit time (the variable is named, the value is not).

    Examples
    --------
    >>> df = pd.DataFrame({"y": [1.0, 2.0, 4.0], "x": [0.0, 1.0, 2.0]})
    >>> design_for_new_data(build_design("y ~ x", df), pd.DataFrame({"x": [5.0, None]}))
    array([[ 1.,  5.],
           [nan, nan]])
    """
    newdata = _check_frame(newdata, "newdata")
    spec = design.spec
    need = sorted(str(v) for v in spec.required_variables)
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
    mm = _materialize(lambda: spec.get_model_matrix(rows, na_action="ignore"),
                      lambda _res: spec, rows, predict=True)
    if complete.all():
        return _as_float(mm)
    X = np.full((n, p), np.nan)
    X[complete] = mm
    return X


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
    lhs_cols = _columns_of(_factors(lhs_formula.lhs), dict.fromkeys(newdata.columns),
                           "newdata", PredictionError)
    if design.label in lhs_cols:
        _check_label_dtype(newdata, design.label, "newdata")
    X = design_for_new_data(design, newdata)
    lhs_frame = newdata[lhs_cols].reset_index(drop=True)
    mm = lhs_formula.get_model_matrix(lhs_frame, output="numpy", na_action="ignore")
    y = _response(mm.lhs, design.label, "newdata")
    keep = ~(np.isnan(X).any(axis=1) | np.isnan(y))
    if not keep.any():
        raise DataError(_NO_ROWS.format(arg="newdata"))
    X, y = X[keep], y[keep]
    _finite_or_raise(y[:, None], [design.label], "newdata")
    _finite_or_raise(X, design.columns, "newdata")
    return X, y
