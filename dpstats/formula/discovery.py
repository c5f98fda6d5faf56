"""Category levels that were not declared: which columns need them, their histograms, and the
data recoded to the levels a private mechanism released.

The formula layer draws no noise. The pipeline (:mod:`dpstats.pipeline.levels`) asks
:func:`undeclared_columns` which columns a formula reads levels of, passes the histograms of
:func:`level_histograms` to :func:`dpstats.mechanisms.levels.private_levels`, and builds the
design from :func:`apply_coding`'s copy of the data, in which each such column is a
``pd.Categorical`` with the released levels only. A row whose level was not released goes to
the pooled level :data:`POOLED` when that level was released, and is dropped otherwise (like a
row with a missing value; the number is never reported). New data for ``predict`` is recoded
the same way.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from ..errors import DataError, DPStatsError, FormulaError
from .levels import _categorical_factors, _categorical_source
from .parse import (
    _columns_of,
    _expand_dot,
    _factor_columns,
    _factors,
    _parse,
    _python_expr,
    _split_formula,
)

__all__ = ["POOLED", "LevelCoding", "undeclared_columns", "level_histograms", "apply_coding",
           "pooled_name", "text_factor_columns", "with_placeholders"]

#: Name of the pooled level (rows of every level that was not released).
POOLED = "(other)"


@dataclass(frozen=True)
class LevelCoding:
    """How one column is recoded: ``levels`` (released, in their public order) and the name of
    the pooled level (None when rows of other levels are dropped)."""

    column: str
    levels: tuple
    pooled: str | None

    @property
    def categories(self) -> list:
        """The levels of the recoded column: the released ones, then the pooled level."""
        return list(self.levels) + ([self.pooled] if self.pooled is not None else [])


def pooled_name(levels: Sequence) -> str:
    """:data:`POOLED`, with underscores appended while it equals a released level.

    >>> pooled_name(["a", "b"]), pooled_name(["(other)", "a"])
    ('(other)', '(other)_')
    """
    name, taken = POOLED, {v for v in levels if isinstance(v, str)}
    while name in taken:
        name += "_"
    return name


def _is_text(dtype) -> bool:
    """Columns formulaic reads as categories with levels from the data (object or str)."""
    return (pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)) \
        and not isinstance(dtype, pd.CategoricalDtype)


def _plain_category_of(factor, columns) -> str | None:
    """The column of ``col`` or ``C(col)`` / ``C(col, contrasts)`` without ``levels=``."""
    if factor.eval_method.value == "lookup":
        return factor.expr if factor.expr in columns else None
    if factor.eval_method.value != "python":
        return None
    tree, aliases = _python_expr(factor.expr, columns)
    call = tree.body
    if isinstance(call, ast.Call) and ast.unparse(call.func) == "C" and call.args \
            and isinstance(call.args[0], ast.Name) \
            and not any(kw.arg == "levels" for kw in call.keywords):
        col = aliases.get(call.args[0].id, call.args[0].id)
        return col if col in columns else None
    return None


def text_factor_columns(formula: str, data: pd.DataFrame) -> tuple[str, ...]:
    """Text columns that the right-hand side of ``formula`` uses only as plain categories
    (``g`` or ``C(g)`` without ``levels=``): their levels would be read from the data.

    Public: reads the formula and the dtypes. The pipeline builds its first design with these
    columns as one-level placeholders (:func:`with_placeholders`), so that no design with a
    column per level of the data is ever materialised. A formula that cannot be parsed gives
    ``()``; the design builder reports its errors itself.

    >>> df = pd.DataFrame({"y": [1.0, 2.0], "g": ["a", "b"], "h": ["u", "v"], "x": [0.0, 1.0]})
    >>> text_factor_columns("y ~ .", df), text_factor_columns("y ~ g + I(h == 'u') + C(x)", df)
    (('g', 'h'), ('g',))
    """
    try:
        lhs, rhs = _split_formula(formula)
        columns = dict.fromkeys(data.columns)
        lhs_cols = _columns_of(_factors(_parse(f"{lhs} ~ 1").lhs), columns)
        parsed = _parse(f"{lhs} ~ {_expand_dot(rhs, [c for c in columns if c not in lhs_cols])}")
        uses: dict[str, bool] = {}
        for factor in _factors(parsed.rhs):
            plain = _plain_category_of(factor, columns)
            for col in _factor_columns(factor, columns, []):
                uses[col] = uses.get(col, True) and col == plain
    except DPStatsError:
        return ()
    return tuple(c for c, only in uses.items() if only and _is_text(data[c].dtype))


def with_placeholders(data: pd.DataFrame, columns) -> pd.DataFrame:
    """A copy of ``data`` in which each of ``columns`` is a one-level ``pd.Categorical``
    (:data:`POOLED` where the value is present, missing where it is missing).

    >>> with_placeholders(pd.DataFrame({"g": ["a", None]}), ["g"])["g"].tolist()
    ['(other)', nan]
    """
    if not columns:
        return data
    out = data.copy()
    for col in columns:
        out[col] = pd.Categorical(out[col].notna().map({True: POOLED, False: None}),
                                  categories=[POOLED])
    return out


def undeclared_columns(spec, data: pd.DataFrame, placeholders=()) -> tuple[str, ...]:
    """Columns whose category levels the design ``spec`` would read from ``data``.

    Reads the formula and the dtypes only (public); ``placeholders`` (columns replaced by
    :func:`with_placeholders`) count as undeclared. Raises :class:`FormulaError` for a
    categorical term whose levels cannot be traced to one column (e.g. ``C(f(x))``) and for a
    column used both as a category with undeclared levels and in another term (``g`` and
    ``I(g == 'a')``, or ``g`` and ``C(g, levels=[...])``): both need declared levels.

    >>> df = pd.DataFrame({"y": [1.0, 2.0, 3.0], "g": ["a", "b", "a"], "x": [0.0, 1.0, 2.0]})
    >>> from dpstats.formula.design import build_design
    >>> undeclared_columns(build_design("y ~ x + g", df, warn_levels=False).spec, df)
    ('g',)
    """
    if not hasattr(spec, "encoder_state"):
        return ()
    found, undeclared = {}, []
    for factor in _categorical_factors(spec):
        col, known = _categorical_source(factor, data)
        if known and col not in placeholders:
            continue
        if col is None:
            raise FormulaError(
                f"the term {factor.expr!r} is categorical, but its levels come from the data "
                "and cannot be traced to one column, so they cannot be discovered privately; "
                "declare them with C(..., levels=[...]) or compute the column first and "
                "declare it as pd.Categorical(..., categories=[...])")
        found[factor.expr] = col
        undeclared.append(col)
    cols = tuple(dict.fromkeys(undeclared))
    columns = dict.fromkeys(data.columns)
    for factor in _factors(spec.formula):
        if factor.expr in found:
            continue
        clash = sorted(set(_factor_columns(factor, columns, [])) & set(cols))
        if clash:
            raise FormulaError(
                f"the column(s) {clash} are used as categories with undeclared levels and also "
                f"in the term {factor.expr!r}; declare their levels (data[col] = "
                "pd.Categorical(data[col], categories=[...])) so that every term sees the "
                "same values")
    return cols


def level_histograms(data: pd.DataFrame, variables: Sequence[str],
                     columns: Sequence[str]) -> list[dict]:
    """``{level: count}`` of each of ``columns`` over the rows of ``data`` complete in
    ``variables`` (the rows the design uses). Not a release: the input of the private
    mechanism. Values that cannot be levels (lists, ...) raise a DataError naming the column.

    >>> df = pd.DataFrame({"y": [1.0, None, 3.0], "g": ["a", "b", "a"]})
    >>> level_histograms(df, ["y", "g"], ["g"])
    [{'a': 2}]
    """
    frame = data[list(variables)]
    complete = frame.notna().all(axis=1).to_numpy()
    out = []
    for col in columns:
        try:
            counts = frame[col][complete].astype(object).value_counts(sort=False, dropna=True)
            out.append({k: int(c) for k, c in counts.items() if c > 0})
        except TypeError:           # unhashable values; the message may quote them
            raise DataError(f"could not evaluate the term {col!r} on `data`; check that each "
                            "variable is a numeric or categorical column of the expected "
                            "type") from None
    return out


def apply_coding(data: pd.DataFrame, codings: Sequence[LevelCoding]) -> pd.DataFrame:
    """A copy of ``data`` with each coded column (when present) as a ``pd.Categorical`` of
    its released levels: other values become the pooled level, or missing when there is none.

    >>> c = LevelCoding("g", ("a",), "(other)")
    >>> apply_coding(pd.DataFrame({"g": ["a", "zz", None]}), [c])["g"].tolist()
    ['a', '(other)', nan]
    """
    present = [c for c in codings if c.column in data.columns]
    if not present:
        return data
    out = data.copy()
    for coding in present:
        values = out[coding.column].astype(object)
        known = values.isin(list(coding.levels))
        values = values.where(known | values.isna(), coding.pooled)
        out[coding.column] = pd.Categorical(values, categories=coding.categories)
    return out
