"""``dp_lm``: differentially private linear regression from a formula.

A thin entry point: it validates its arguments into a
:class:`~dpstats.pipeline.request.FitRequest` (nothing charged, no data read), runs the
pipeline (:func:`dpstats.pipeline.run.run`: shared-budget check -> design -> budget plan and
private row count -> selection -> regression) and builds a :class:`~dpstats.results.lm.DPLMResult`.
Every released number comes from a mechanism that charges the fit's ledger.
"""

from __future__ import annotations

import pandas as pd

from ..dask import run  # a dask frame runs on its workers
from ..mechanisms.accountant import Budget
from ..pipeline.budget import DEFAULT_SPLIT
from ..pipeline.finish import lm_result
from ..pipeline.request import build_request
from ..pipeline.select import SELECT_CHOICES
from ..results.lm import DPLMResult

__all__ = ["dp_lm", "DEFAULT_SPLIT", "SELECT_CHOICES"]


def dp_lm(formula: str, data: pd.DataFrame, *, eps: float, delta: float = 1e-5,
          select: str | None = "auto", k: int = 5, method: str = "tukey",
          m: int | str = "auto", split: dict | None = None, bounds: object = "auto",
          groups: object = "auto", budget: Budget | None = None, random_state=None,
          lemma: str = "8.5", accounting: str = "swap", levels: str = "private",
          **method_opts) -> DPLMResult:
    """Fit a differentially private linear regression from a formula.

    Parameters
    ----------
    formula : str
        R-style formula, e.g. ``"price ~ ."`` or ``"y ~ x1 + C(g, levels=['a', 'b'])"``.
    data : pandas.DataFrame (or a polars DataFrame, a pyarrow Table, a dict of columns)
        One row per person. Missing, infinite or huge (> 1e150) values make a row missing
        (:mod:`dpstats.formula.nonfinite`); no error depends on values or the row count.
    eps, delta : float
        Total budget of the fit: eps > 0; delta in (0, 1), well below 1/n (default 1e-5).
    select : {"auto", "kendall", "sublasso", "sis", None}
        Private feature selection before the regression. ``"auto"`` selects nothing when the
        formula has at most ``k`` terms besides the intercept, else SubLasso or DPKendall from
        the private row count (:mod:`dpstats.pipeline.select`). ``"sis"`` is DP-SIS (needs
        ``bounds``). The intercept is never a candidate and is always kept.
    k : int, default 5
        Number of terms to select (design columns; a categorical contributes one per level).
    method : {"tukey", "adassp", "bas", "fw", "dpgd", "ols"}
        ``"tukey"``: Tukey-depth mechanism with propose-test-release (no bounds needed);
        ``"adassp"``: AdaSSP (Wang 2018); ``"bas"``: Boosted AdaSSP (003), both on columns
        clipped to ``bounds`` (predictions clip to the released box); ``"fw"``: private
        Frank-Wolfe on an L1 ball (001); ``"dpgd"``: DP gradient descent, a baseline that
        needs tuning; ``"ols"``: least squares, NOT PRIVATE (a baseline; it warns).
    m : "auto" or int
        Number of Tukey models. ``"auto"`` spends ``split["n"]`` of eps on a private row count.
    split : dict, optional
        Shares ``{"levels", "n", "selection", "regression"}`` of eps (levels: of delta too);
        unused shares go to the regression. Default 5% / 5% / 5% / the rest.
    bounds : "auto", tuple or dict
        Clipping bounds for methods that need them (not Tukey). ``"auto"`` estimates them
        privately from part of that stage's budget; a tuple ``(lo, hi)`` or
        ``{"x": ..., "y": ...}`` is taken as public knowledge.
    groups : "auto", "sqrt" or int
        SubLasso groups: ``n_hat / p`` (003), ``sqrt(n_hat)`` (Kifer's two-stage) or a count.
    budget : Budget, optional
        Shared accountant, checked before the data is touched; charges are recorded there.
    random_state : int, Generator or None
        None (default) draws from the OS CSPRNG. Anything else makes the fit reproducible; the
        summary then says it is not fit for release.
    lemma : {"8.5", "3.6"}
        Distance lemma of the PTR test (003 Lemma 8.5 is tighter).
    accounting : {"swap", "paper"}
        Tukey analysis: ``"swap"`` is sound when one row changes one of the m models; ``"paper"``
        (002/003, for comparison) is NOT private: it warns and marks the fit ``private=False``.
    levels : {"private", "data"}, default "private"
        Undeclared category levels (text columns, ``C(col)`` on codes) are discovered privately
        (:mod:`dpstats.pipeline.levels`; rare ones pooled into ``"(other)"``); ``"data"`` reads
        them from the data and marks the fit NOT private. Declared levels cost nothing.
    **method_opts
        Options of the method, checked before anything is charged: e.g. ``T=50``,
        ``variant="paper"`` (bas); ``radius``, ``T``, ``screen`` (``"every"``, ``"last"`` or
        every j-th iteration) (fw); ``lr``, ``clip``, ``epochs`` (dpgd); ``bounds_share``,
        ``bounds_method`` (bounded methods); ``centre=None`` (tukey). See each ``estimate`` in
        :mod:`dpstats.estimators`; an unknown option raises and names the valid ones.

    Returns
    -------
    DPLMResult

    Examples
    --------
    >>> import dpstats as dp
    >>> df = dp.datasets.load("california")
    >>> fit = dp.dp_lm("median_house_value ~ .", df, eps=1.0, random_state=0)
    >>> fit.released, len(fit.selected)
    (True, 5)
    """
    request = build_request("lm", formula, data, eps=eps, delta=delta, method=method,
                            select=select, k=k, m=m, split=split, bounds=bounds, groups=groups,
                            budget=budget, random_state=random_state, lemma=lemma,
                            accounting=accounting, options=method_opts, levels=levels)
    return lm_result(request, run(request))
