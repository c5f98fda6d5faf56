"""The design side of :func:`dpstats.dp_glm`: a 0/1 response, and public ranges of indicator
columns.

Both read only public facts (declared levels, dtypes, the contrast coding) or act on each row
alone (a row whose response is not 0 or 1 is dropped like a missing row); nothing here is
charged, and nothing here raises an error that depends on the data's values.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..errors import DataError
from ..formula.design import check_data
from ..formula.parse import _split_formula
from ..results.glm import code_binary_label

__all__ = ["binary_response", "binary_rows", "binary_arrays", "numeric_label_note",
           "indicator_bounds"]

_CODE_IT = ("code it 0/1 first, e.g. data[{l!r}] = (data[{l!r}] == <the level meaning 1>)"
            ".astype(int), declare it as pd.Categorical with its two levels (the second is "
            "coded 1), or write the formula as 'I({l} == ...) ~ ...'")


def binary_rows(design):
    """``design`` without the rows whose response is not 0 or 1: they are missing rows for
    ``family="binomial"``, dropped silently like rows with a missing value (a refusal would
    tell whether one row holds such a value). A bool or two-level categorical response is
    always 0/1; for a numeric one, :func:`numeric_label_note` tells the user the rule.

    >>> from dpstats.formula.design import build_design
    >>> d = build_design("y ~ x", pd.DataFrame({"y": [0, 1, 2, 1], "x": [1.0, 2.0, 3.0, 4.0]}))
    >>> binary_rows(d).y.tolist()
    [0.0, 1.0, 1.0]
    """
    X, y = binary_arrays(design.X, design.y)
    return design if X is design.X else replace(design, X=X, y=y)


def binary_arrays(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``(X, y)`` whose response is 0 or 1 (:func:`binary_rows` on bare arrays;
    the same arrays when every row is kept, else C-ordered copies).

    >>> X, y = binary_arrays(np.ones((3, 1)), np.array([0.0, 2.0, -0.0]))
    >>> X.shape, y.tolist()
    ((2, 1), [0.0, -0.0])
    """
    keep = (y == 0.0) | (y == 1.0)
    if keep.all():
        return X, y
    return np.ascontiguousarray(X[keep]), np.ascontiguousarray(y[keep])


def numeric_label_note(formula: str, data) -> str | None:
    """The note of a fit whose response is a numeric (not bool) column: rows where it is not 0
    or 1 are dropped. Reads the formula and the column's dtype only (public).

    >>> numeric_label_note("y ~ x", pd.DataFrame({"y": [0, 1], "x": [1.0, 2.0]}))[:27]
    "Response 'y' is numeric: ro"
    >>> numeric_label_note("y ~ x", pd.DataFrame({"y": [False, True], "x": [1.0, 2.0]})) is None
    True
    """
    data = check_data(data)
    label = _split_formula(formula)[0].strip().strip("`")
    if label not in data.columns:
        return None
    dtype = data[label].dtype
    if pd.api.types.is_bool_dtype(dtype) or str(dtype) == "boolean" \
            or not pd.api.types.is_numeric_dtype(dtype):
        return None
    return (f"Response {label!r} is numeric: rows where it is not 0 or 1 are dropped like "
            "missing rows (family='binomial'); code it as bool or a two-level pd.Categorical "
            "to make the coding explicit.")


def binary_response(formula: str, data: pd.DataFrame) -> tuple[pd.DataFrame, tuple | None]:
    """Code a bool or two-level categorical response column 0/1 (a copy of ``data``).

    Numeric responses and response expressions are left alone (checked after the design).
    """
    if not isinstance(data, pd.DataFrame) or not isinstance(formula, str) or "~" not in formula:
        return data, None                                    # build_design reports these
    label = _split_formula(formula)[0].strip().strip("`")
    if label not in data.columns:
        return data, None
    col = data[label]
    dtype = col.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        levels = tuple(dtype.categories)
        if len(levels) != 2:
            raise DataError(f"the response {label!r} is categorical with {len(levels)} declared "
                            "levels, but family='binomial' needs exactly two; "
                            + _CODE_IT.format(l=label))
        return data.assign(**{label: code_binary_label(col, levels)}), levels
    if pd.api.types.is_bool_dtype(dtype) or str(dtype) == "boolean":
        return data.assign(**{label: col.astype("Float64").astype(np.float64)}), None
    if not pd.api.types.is_numeric_dtype(dtype):
        raise DataError(f"the response {label!r} holds text (dtype {dtype}); which value means "
                        "1 is ambiguous, so " + _CODE_IT.format(l=label))
    return data, None


def indicator_bounds(spec, columns: list[str], keep: list[int]) -> dict[int, tuple]:
    """Public ranges of columns built only from categorical factors (e.g. 0/1 dummies).

    The range follows from the contrast coding alone (public), never from the data. Keys are
    positions in ``keep``.
    """
    state = getattr(spec, "encoder_state", None)
    if not state:
        return {}
    ranges = {}
    for st in spec.structure:
        lo, hi, ok = 1.0, 1.0, bool(st.term.factors)
        for f in st.term.factors:
            kind, info = state.get(f.expr, (None, {}))
            con = info.get("contrasts") if isinstance(info, dict) else None
            if getattr(kind, "value", "") != "categorical" or con is None:
                ok = False
                break
            vals = np.concatenate([con.contrasts.get_coding_matrix(con.levels, reduced_rank=r)
                                   .to_numpy().ravel() for r in (True, False)])
            a, b = float(min(vals.min(), 0.0)), float(max(vals.max(), 0.0))
            prods = [lo * a, lo * b, hi * a, hi * b]
            lo, hi = min(prods), max(prods)
        if ok and hi > lo:
            ranges.update({c: (lo, hi) for c in st.columns})
    pos = {columns[j]: i for i, j in enumerate(keep)}
    return {pos[c]: r for c, r in ranges.items() if c in pos}
