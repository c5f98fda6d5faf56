"""Fast path for ``"y ~ ."`` on all-numeric frames (thousands of columns, e.g. microarrays).

formulaic parses and evaluates every term, which takes about 20 s for 7,000 columns. When the
right-hand side is just ``.`` (optionally ``- 1`` / ``+ 0``), the response is a plain column and
every other column is a non-boolean numeric dtype, the design is simply the columns themselves
(after an intercept), so it is built directly. :class:`NumericSpec` stands in for formulaic's
``ModelSpec`` in :func:`dpstats.formula.design.design_for_new_data`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["NumericSpec", "fast_dot_spec", "complete_rows", "INTERCEPT"]

#: Name of the intercept column of every design (formulaic names it so too).
INTERCEPT = "Intercept"

_DOT_RHS = {".": True, ".-1": False, ".+0": False, "0+.": False, "-1+.": False, "1+.": True,
            ".+1": True}


class NumericSpec:
    """Data-free spec of a design that is an intercept (optional) and numeric columns as is.

    >>> s = NumericSpec(["a", "b"], True)
    >>> s.column_names, s.get_model_matrix(pd.DataFrame({"a": [1.0], "b": [2.0]})).tolist()
    (['Intercept', 'a', 'b'], [[1.0, 1.0, 2.0]])
    """

    def __init__(self, names: list[str], intercept: bool):
        self.names = list(names)
        self.intercept = bool(intercept)
        self.required_variables = set(self.names)
        self.column_names = ([INTERCEPT] if intercept else []) + self.names

    def get_model_matrix(self, rows: pd.DataFrame, **_: object) -> np.ndarray:
        """Design rows for ``rows`` (which must hold the named columns)."""
        return self.matrix(rows)

    def matrix(self, data: pd.DataFrame, keep: np.ndarray | None = None) -> np.ndarray:
        """The design of ``data`` (rows where ``keep`` is True, all when None): float64, C order.

        Filled a block of rows at a time, so no full-size copy of the frame is made on the way
        (at 1e6 x 50 the design step peaked at three times the design's size before).
        """
        n = data.shape[0] if keep is None else int(np.count_nonzero(keep))
        first = int(self.intercept)
        out = np.empty((n, first + len(self.names)))
        if first:
            out[:, 0] = 1.0
        step = _chunk_rows(len(self.names))
        at = 0
        for lo in range(0, data.shape[0], step):
            block = data.iloc[lo:lo + step][self.names].to_numpy(dtype=np.float64)
            if keep is not None:
                block = block[keep[lo:lo + step]]
            out[at:at + block.shape[0], first:] = block
            at += block.shape[0]
        return out


def _chunk_rows(columns: int) -> int:
    """Rows per block when copying a frame: about 4 million entries (32 MB) at a time."""
    return max(1024, (1 << 22) // max(columns, 1))


def complete_rows(data: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Boolean mask of the rows with no missing value in ``columns`` (block by block).

    >>> complete_rows(pd.DataFrame({"a": [1.0, None], "b": [1, 2]}), ["a", "b"]).tolist()
    [True, False]
    """
    out = np.empty(data.shape[0], dtype=bool)
    step = _chunk_rows(len(columns))
    for lo in range(0, data.shape[0], step):
        out[lo:lo + step] = data.iloc[lo:lo + step][columns].notna().to_numpy().all(axis=1)
    return out


def _plain_numeric(dt) -> bool:
    return (pd.api.types.is_numeric_dtype(dt) and not pd.api.types.is_bool_dtype(dt)
            and not isinstance(dt, pd.CategoricalDtype)
            and not pd.api.types.is_complex_dtype(dt))    # refused by the formula path


def fast_dot_spec(lhs: str, rhs: str, data: pd.DataFrame) -> NumericSpec | None:
    """A :class:`NumericSpec` when the fast path applies to ``lhs ~ rhs`` on ``data``, else None.

    >>> df = pd.DataFrame({"y": [1.0, 2.0], "x": [3, 4]})
    >>> fast_dot_spec("y", ".", df).column_names
    ['Intercept', 'x']
    >>> fast_dot_spec("np.log(y)", ".", df) is None
    True
    """
    key = "".join(rhs.split())
    label = lhs.strip()
    if key not in _DOT_RHS or label not in data.columns:
        return None
    names = [c for c in data.columns if c != label]
    kinds = set(data.dtypes.tolist())          # a few distinct dtypes, however many columns
    if not names or not all(_plain_numeric(dt) for dt in kinds):
        return None
    return NumericSpec(names, _DOT_RHS[key])
