"""The design side of :func:`dpstats.dp_glm`: a 0/1 response, and public ranges of indicator
columns.

Both read only public facts (declared levels, dtypes, the contrast coding) or check the data
without releasing anything; nothing here is charged.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import DataError
from ..formula.design import build_design, check_data
from ..formula.parse import _split_formula
from ..results.glm import code_binary_label

__all__ = ["binary_design", "binary_response", "check_binary", "indicator_bounds"]

_CODE_IT = ("code it 0/1 first, e.g. data[{l!r}] = (data[{l!r}] == <the level meaning 1>)"
            ".astype(int), declare it as pd.Categorical with its two levels (the second is "
            "coded 1), or write the formula as 'I({l} == ...) ~ ...'")


def binary_design(formula: str, data: pd.DataFrame):
    """The design of ``formula`` with a 0/1 response, and the declared levels of a two-level
    categorical response (None otherwise). Raises :class:`~dpstats.errors.DataError` when the
    response is not 0/1."""
    data, levels = binary_response(formula, check_data(data))
    design = build_design(formula, data)
    check_binary(design)
    return design, levels


def check_binary(design) -> None:
    """Refuse a design whose response is not 0/1 (DataError)."""
    if not np.isin(design.y, (0.0, 1.0)).all():
        raise DataError(f"the response {design.label!r} must be coded 0/1 for "
                        "family='binomial' (it has other values); " + _CODE_IT.format(
                            l=design.label))


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
