"""``dp_glm``: differentially private logistic regression from a formula.

A thin entry point, as :func:`dpstats.dp_lm`: it validates its arguments into a
:class:`~dpstats.pipeline.request.FitRequest` (nothing charged), runs the pipeline
(:func:`dpstats.pipeline.run.run`; the 0/1 response is coded by
:mod:`dpstats.pipeline.glm_design`) and builds a :class:`~dpstats.results.glm.DPGLMResult`.
Every released number comes from a mechanism that charges the fit's ledger.

``method="tukey"`` (:mod:`dpstats.estimators.tukey.glm`): per-group logistic fits, each
median-bias reduced (Kenne Pagui, Salvan and Sartori 2017, "Median bias reduction of maximum
likelihood estimates", Biometrika; option ``bias="auto"|"median"|"none"``, ``"auto"``: when
intervals are released), through the Tukey mechanism with propose-test-release. Its standard
errors and intervals (:mod:`dpstats.estimators.inference.tukey_glm`): the private spread of the
group fits near the released point (window counts; windows from private weighted design moments
at the released point), times the simulated Tukey noise factor, with a noise-aware critical
value (about 2.1 instead of 1.96). Budget share ``inference_share=0.08`` of the regression's
eps (ledger stage ``"inference"``, taken from the PTR test and the exponential mechanism; 0:
none). Withheld, with the reason, below the release gate (``m eps / p >= 250`` and at least 10
released rows per column per group; ``m="auto"`` rises to the gate where groups can keep 10 rows
per column, and above the gate stops where the median of the groups' fits would carry their
residual bias beyond 0.4 of its standard deviation, design note 64). On a dask frame too (the
scales and the weighted moments from the rows' Bernoulli subsample the first pass keeps).
``method="auto"`` never picks Tukey.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from ..dask import run  # a dask frame runs on its workers
from ..mechanisms.accountant import Budget
from ..pipeline.budget import GLM_DEFAULT_SPLIT
from ..pipeline.finish import glm_result
from ..pipeline.request import FAMILIES, GLM_METHODS, build_request
from ..results.glm import DPGLMResult

__all__ = ["dp_glm", "FAMILIES", "GLM_METHODS", "GLM_DEFAULT_SPLIT"]


def dp_glm(formula: str, data: pd.DataFrame, *, family: str = "binomial", eps: float,
           delta: float = 1e-5, method: str = "auto", select: str | None = "auto", k: int = 5,
           bounds: object = "auto", m: int | str = "auto", budget: Budget | None = None,
           random_state=None, split: dict | None = None, levels: str = "private",
           **method_opts) -> DPGLMResult:
    """Fit a differentially private logistic regression (``family="binomial"``).

    Parameters
    ----------
    formula : str
        R-style formula, e.g. ``"default ~ ."`` or ``"y ~ x + C(g, levels=['a', 'b'])"``.
        The response must be boolean, a ``pd.Categorical`` with exactly two declared levels
        (the first is coded 0, the second 1, as in R), numeric coded 0/1, or an expression
        such as ``I(income == '>50K')``. Rows where a numeric response (or expression) is not
        0 or 1 are dropped like missing rows, never refused (a refusal would reveal that one
        row holds such a value); the fit's notes say so for a numeric column. Text responses
        are refused by their dtype (which value means 1 would be a guess).
    data : pandas.DataFrame (or a polars DataFrame, a pyarrow Table, a dict of columns)
        One row per person (the privacy unit); rows with missing values are dropped, and so
        are rows with values no method can compute with, as in :func:`dpstats.dp_lm`.
    family : {"binomial"}
        Logistic regression (logit link).
    eps, delta : float
        Total budget of the fit (add/remove one row).
    method : {"auto", "objpert", "outpert", "fw", "dpgd", "tukey"}
        ``"auto"`` (default; :mod:`~dpstats.estimators.glm_auto`): from the private row count
        and the budget, withheld (``"too_few_rows"``, rows needed in the notes), ``"outpert"``
        or on more rows ``"objpert"`` (the result's ``method``; a note says why): output or
        objective perturbation with a private threshold that can fall back to the majority
        class. ``"fw"``: Frank-Wolfe (001), ``"dpgd"``: DP gradient descent, ``"tukey"``: the
        Tukey mechanism, intervals from 8% of the regression eps (module docstring).
    select, k : as in :func:`dpstats.dp_lm`
        Private feature selection on the 0/1 label, of ``k`` design columns (the intercept is
        always kept and never scored).
    bounds : "auto", tuple or dict
        Feature bounds for ``"fw"`` and ``"dpgd"`` (and DP-SIS); ``"auto"`` estimates them
        privately. Indicator columns of categoricals have public ranges from their coding and
        cost nothing (dpgd). The Tukey method needs none.
    m : "auto" or int
        Number of Tukey models; ``"auto"`` uses the private row count
        (:func:`dpstats.estimators.tukey.glm.choose_m_glm`).
    budget, random_state : as in :func:`dpstats.dp_lm`
        Shared accountant (checked before the data is touched); None (default) for the OS
        CSPRNG, anything else is reproducible and not for release.
    split : dict, optional
        Budget shares ``{"levels", "n", "selection", "regression"}``, default
        :data:`GLM_DEFAULT_SPLIT` (5% levels, only when undeclared category levels must be
        discovered / 5% / 15% / the rest; selection gets more than in dp_lm, see there).
        The row count is released for ``"dpgd"`` (its step averages over it), for
        ``"tukey"`` with ``m="auto"`` and when selection needs it; unused shares go to the
        regression.
    levels : {"private", "data"}, default "private"
        As in :func:`dpstats.dp_lm`: undeclared levels are discovered privately.
    **method_opts
        Passed to the estimator, e.g. ``lr``, ``clip``, ``epochs`` for ``"dpgd"``;
        ``lemma``, ``accounting``, ``centre``, ``ridge``, ``inference_share``, ``bias`` for
        ``"tukey"`` (``accounting="paper"`` is not private, as in :func:`dpstats.dp_lm`).
        Names and values are checked (``check_options``) before anything is charged.

    Returns
    -------
    DPGLMResult

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.uniform(-2, 2, size=20_000)})
    >>> df["y"] = (rng.uniform(size=20_000) < 1 / (1 + np.exp(-2 * df.x))).astype(int)
    >>> fit = dp_glm("y ~ x", df, eps=2.0, method="tukey", random_state=0)
    >>> fit.released, fit.family, round(fit.score(df), 1)
    (True, 'binomial', 0.8)
    """
    request = build_request("glm", formula, data, family=family, eps=eps, delta=delta,
                            method=method, select=select, k=k, m=m, split=split, bounds=bounds,
                            budget=budget, random_state=random_state, options=method_opts,
                            levels=levels)
    out = run(request)
    return _with_choice(glm_result(request, out), request, out)


def _with_choice(result: DPGLMResult, request, out) -> DPGLMResult:
    """With ``method="auto"``: the method that ran (or "auto" when withheld) and why (a
    function of the released row count and public values)."""
    if request.method != "auto":
        return result
    chosen = out.est.details.get("method")
    return replace(result, method=chosen or "auto", auto_choice=chosen,
                   notes=result.notes + (out.est.details["why"],))
