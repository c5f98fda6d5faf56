"""Category levels: finding categorical factors, where their levels came from, and
evaluating formulaic quietly so that level mismatches become dpstats errors naming the
variables but never the values.
"""

from __future__ import annotations

import ast
import re
import warnings

import numpy as np
import pandas as pd
from formulaic.errors import DataMismatchWarning, FormulaicError

from ..errors import DataError, PredictionError
from .parse import _factors, _python_expr


def _plain_strings(frame: pd.DataFrame) -> pd.DataFrame:
    """formulaic treats only object/"str" columns as categorical: convert "string[...]" ones."""
    conv = {c: "str" for c, t in frame.dtypes.items()
            if pd.api.types.is_string_dtype(t) and str(t) not in ("object", "str")}
    return frame.astype(conv) if conv else frame


def _float_ints(frame: pd.DataFrame, factors) -> pd.DataFrame:
    """Integer columns as float64, so that formula arithmetic cannot wrap around silently.

    numpy integer arrays overflow without a warning (``I(x * 1000)`` on int64 values near
    1e16, ``I(u - 10)`` on uint8), which would put wrong values in the design. Columns used as
    ``C(col, ...)`` keep their integer levels (and level names).
    """
    ints = [c for c, t in frame.dtypes.items() if pd.api.types.is_integer_dtype(t)]
    if not ints:
        return frame
    as_levels = set()
    for factor in factors:
        if factor.eval_method.value != "python":
            continue
        tree, aliases = _python_expr(factor.expr, frame.columns)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "C" and node.args \
                    and isinstance(node.args[0], ast.Name):
                as_levels.add(aliases.get(node.args[0].id, node.args[0].id))
    conv = {c: "float64" for c in ints if c not in as_levels}
    return frame.astype(conv) if conv else frame


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
    """Run formulaic quietly; turn level mismatches and failures into dpstats errors.

    numpy's floating-point warnings are silenced and every caught warning is dropped, never
    re-emitted: whether ``np.log(x)`` warns depends on the values of ``x`` (one row with
    ``x = -1``), so a warning would reveal a row. Non-finite results are dropped as missing
    rows instead (:mod:`dpstats.formula.nonfinite`).
    """
    err, arg = (PredictionError, "newdata") if predict else (DataError, "data")
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
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
    return result  # other warnings are dropped: their presence and text depend on the values
