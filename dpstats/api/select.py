"""``dpstats.select``: private feature selection on its own (e.g. microarrays: thousands of
columns, tens of rows), from a formula, with its own ledger.

A thin entry point: the request is validated before the data is touched and run by
:func:`dpstats.pipeline.run.run` without a regression stage (the selection gets the budget the
private row count leaves).
"""

from __future__ import annotations

import pandas as pd

from ..dask import run  # a dask frame runs on its workers
from ..mechanisms.accountant import Budget
from ..pipeline.budget import LEVELS_SHARE, N_SHARE
from ..pipeline.finish import selection_result
from ..pipeline.request import build_request
from ..results.selection import SelectionResult

__all__ = ["select", "N_SHARE", "LEVELS_SHARE"]


def select(formula: str, data: pd.DataFrame, *, eps: float, method: str = "kendall",
           k: int = 5, bounds: object = "auto", groups: object = "auto",
           budget: Budget | None = None, random_state=None, delta: float = 0.0,
           levels: str = "private") -> SelectionResult:
    """Select ``k`` terms of a formula privately, without fitting a regression.

    Parameters
    ----------
    formula : str
        ``"y ~ ."`` or explicit terms; the intercept is never a candidate.
    data : pandas.DataFrame (or a polars DataFrame, a pyarrow Table, a dict of columns)
        One row per person. ``y ~ .`` on all-numeric columns skips formulaic, so frames with
        tens of thousands of columns are fine.
    eps : float
        Budget (pure eps-DP: delta is 0, unless ``delta`` is given for category levels).
        When the selector needs a private row count (``"auto"``, SubLasso), :data:`N_SHARE`
        of it pays for the count.
    method : {"kendall", "sublasso", "sis", "auto"}
        DPKendall, SubLasso / two-stage (``groups="sqrt"``), DP-SIS (needs bounds), or the
        ``dp_lm`` auto rule.
    k : int
        Number of terms, at most the number of candidates.
    bounds : "auto", tuple or dict
        DP-SIS only: public bounds, or ``"auto"`` for private ones (part of eps).
    groups : "auto", "sqrt" or int
        SubLasso only: number of groups.
    budget : Budget, optional
        Shared accountant, checked before the data is touched.
    random_state : int, Generator or None
        None (default) for the OS CSPRNG; a seed makes the result reproducible (and says so).
    delta : float, default 0
        Used only to discover category levels the data does not declare (a text column among
        the terms, ``C(col)`` on a column that is not a ``pd.Categorical``): that stage needs
        delta > 0 and spends all of it and :data:`LEVELS_SHARE` of eps. With such levels and
        ``delta=0`` the call is refused before anything is charged; declare the levels to keep
        the selection pure eps-DP.
    levels : {"private", "data"}, default "private"
        ``"data"`` reads undeclared levels from the data instead: NOT private
        (``private=False``, a ``NotPrivateWarning``).

    Returns
    -------
    SelectionResult

    Examples
    --------
    >>> import numpy as np, pandas as pd, dpstats as dp
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame(rng.standard_normal((300, 50)), columns=[f"g{i}" for i in range(50)])
    >>> df["y"] = df.g7 - df.g3 + 0.1 * rng.standard_normal(300)
    >>> res = dp.select("y ~ .", df, eps=50.0, k=2, random_state=1)
    >>> sorted(res.selected)
    ['g3', 'g7']
    """
    request = build_request("select", formula, data, eps=eps, select=method, k=k, bounds=bounds,
                            groups=groups, budget=budget, random_state=random_state,
                            delta=delta, levels=levels)
    return selection_result(request, run(request))
