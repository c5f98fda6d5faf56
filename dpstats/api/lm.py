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
          select: str | None = "auto", k: int | None = None, method: str = "auto",
          m: int | str = "auto", split: dict | None = None, bounds: object = "auto",
          groups: object = "auto", budget: Budget | None = None, random_state=None,
          lemma: str = "8.5", accounting: str = "swap", levels: str = "private",
          **method_opts) -> DPLMResult:
    """Fit a differentially private linear regression from a formula.

    Parameters
    ----------
    formula : str
        R-style formula, e.g. ``"price ~ ."`` or ``"y ~ x1 + C(g, levels=['a', 'b'])"``.
    data : pandas.DataFrame (or polars, pyarrow, dask, a dict of columns)
        One row per person; rows with missing, infinite or huge values are dropped.
    eps, delta : float
        Total budget: eps > 0; delta in (0, 1), well below 1/n (default 1e-5).
    select : {"auto", "kendall", "sublasso", "sis", None}
        Private feature selection before the regression. ``"auto"``: a formula with ``.``
        (``y ~ .``) selects automatically, an explicit formula (``y ~ a + b + C(g)``) is fitted
        as written (unless ``k`` is given); a named selector always selects. Which selector
        for ``"auto"``: SubLasso or DPKendall from the private row count
        (:mod:`dpstats.pipeline.select`). ``"sis"`` is DP-SIS (needs ``bounds``). The
        intercept is never a candidate and is always kept.
    k : int, optional
        Number of terms to select (a factor is one term: its dummies enter together). Default:
        from the private row count (:mod:`dpstats.pipeline.auto`): every term when the rows
        support them, else as many as the chosen method can fit (:func:`dpstats.rows_needed`).
    method : {"auto", "tukey", "adassp", "bas", "fw", "dpgd", "ols"}, default "auto"
        ``"auto"``: from the private row count and public values (:mod:`dpstats.pipeline.auto`):
        ``"tukey"`` where its PTR test passes with high probability, else ``"bas"``; the summary
        says why. If no method can fit, the fit stops after the count (only its share spent).
        ``"tukey"``: Tukey depth with propose-test-release (no bounds); ``"adassp"`` (Wang
        2018), ``"bas"`` (Boosted AdaSSP, 003): columns clipped to ``bounds``; ``"fw"``:
        Frank-Wolfe on an L1 ball (001); ``"dpgd"``: DP gradient descent (needs tuning);
        ``"ols"``: least squares, NOT PRIVATE (a baseline; it warns).
    m : "auto" or int
        Number of Tukey models; ``"auto"``: from the private row count.
    split : dict, optional
        Shares ``{"levels", "n", "selection", "regression"}`` of eps (levels: of delta too);
        default 5% / 5% / 5% / the rest; unused shares go to the regression.
    bounds : "auto", tuple or dict
        Clipping bounds (not Tukey): ``"auto"`` releases them privately from part of the
        regression's budget; ``(lo, hi)`` or ``{"x": ..., "y": ...}`` are public knowledge.
    groups : "auto", "sqrt" or int
        SubLasso groups: ``n_hat / p`` (003), ``sqrt(n_hat)`` (Kifer's two-stage) or a count.
    budget : Budget, optional
        Shared accountant, checked before the data are touched.
    random_state : int, Generator or None
        None (default): the OS CSPRNG. Else reproducible, and the summary says not for release.
    lemma, accounting : str
        Tukey's PTR distance lemma ``"8.5"`` (003, tighter) or ``"3.6"``; accounting ``"swap"``
        (sound), or ``"paper"`` (002/003, NOT private: it warns and marks ``private=False``).
    levels : {"private", "data"}, default "private"
        Undeclared category levels are discovered privately (:mod:`dpstats.pipeline.levels`;
        rare ones pooled into ``"(other)"``); ``"data"`` reads them (NOT private).
    **method_opts
        Options of an explicit ``method``, checked before anything is charged: e.g. ``T``,
        ``variant`` (bas); ``radius``, ``T``, ``screen`` (fw); ``lr``, ``clip``, ``epochs``
        (dpgd); ``bounds_share`` (bounded methods); ``centre`` (tukey). See each ``estimate``
        in :mod:`dpstats.estimators`; an unknown option raises and names the valid ones.

    Returns
    -------
    DPLMResult

    Examples
    --------
    >>> import dpstats as dp
    >>> df = dp.datasets.load("california")
    >>> fit = dp.dp_lm("median_house_value ~ .", df, eps=1.0, random_state=0)
    >>> fit.released, fit.method
    (True, 'tukey')
    >>> dp.dp_lm("median_house_value ~ median_income", df, eps=1.0, random_state=0).selected
    []
    """
    request = build_request("lm", formula, data, eps=eps, delta=delta, method=method,
                            select=select, k=k, m=m, split=split, bounds=bounds, groups=groups,
                            budget=budget, random_state=random_state, lemma=lemma,
                            accounting=accounting, options=method_opts, levels=levels)
    return lm_result(request, run(request))
