"""``dpstats.select``: private feature selection on its own (e.g. microarrays: thousands of
columns, tens of rows), from a formula, with its own ledger."""

from __future__ import annotations

import pandas as pd

from ..errors import ValidationError
from ..formula.design import build_design
from ..mechanisms import private_count
from ..mechanisms.accountant import Budget, Ledger
from ..mechanisms.rng import as_rng
from ..pipeline.select import (
    auto_selector,
    candidate_columns,
    check_bounds_arg,
    check_bounds_for,
    check_groups,
    needs_row_count,
    run_selection,
)
from ..results.selection import SelectionResult
from ..selection import SELECTORS
from ..validation import check_choice, check_eps, check_k

__all__ = ["select", "N_SHARE"]

#: Share of eps spent on a private row count when the selector needs one.
N_SHARE = 0.10


def select(formula: str, data: pd.DataFrame, *, eps: float, method: str = "kendall",
           k: int = 5, bounds: object = "auto", groups: object = "auto",
           budget: Budget | None = None, random_state=None) -> SelectionResult:
    """Select ``k`` terms of a formula privately, without fitting a regression.

    Parameters
    ----------
    formula : str
        ``"y ~ ."`` or explicit terms; the intercept is never a candidate.
    data : pandas.DataFrame
        One row per person. ``y ~ .`` on all-numeric columns skips formulaic, so frames with
        tens of thousands of columns are fine.
    eps : float
        Budget (pure eps-DP: delta is 0).
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
    eps = check_eps(eps)
    check_choice(method, (*SELECTORS, "auto"), "method")
    k = check_k(k)
    groups = check_groups(groups)
    check_bounds_arg(bounds)
    if budget is not None and not isinstance(budget, Budget):
        raise ValidationError(f"budget must be a dpstats.Budget or None; got "
                              f"{type(budget).__name__}")
    rng, seeded = as_rng(random_state)
    if budget is not None:
        budget.check(eps, 0.0)
    design = build_design(formula, data)
    candidates = candidate_columns(design.columns, design.has_intercept)
    if not candidates:
        raise ValidationError(f"`formula` {design.formula!r} has no terms to select from (the "
                              "intercept is never selected); add terms, e.g. 'y ~ .'")
    if k > len(candidates):
        raise ValidationError(f"k={k} but the formula has only {len(candidates)} candidate "
                              "terms (the intercept is never selected); use a smaller k")
    check_bounds_for(bounds, design.columns, candidates)
    ledger = budget.ledger_for(eps, 0.0) if budget is not None else Ledger(eps, 0.0)
    use_n = needs_row_count(method, groups)
    eps_n = N_SHARE * eps if use_n else 0.0
    n_noisy = private_count(design.X.shape[0], eps_n, rng, ledger) if use_n else None
    chosen = auto_selector(n_noisy, len(candidates), k, eps - eps_n) if method == "auto" \
        else method
    sel = run_selection(chosen, design.X, design.y, candidates, k=k, eps=eps - eps_n, rng=rng,
                        ledger=ledger, n_noisy=n_noisy, groups=groups, bounds=bounds,
                        names=design.columns)
    return SelectionResult(selected=[design.columns[i] for i in sel.indices], method=chosen,
                           k=k, candidates=len(candidates), eps=eps, charges=ledger.charges,
                           formula=design.formula, label=design.label, ordered=sel.ordered,
                           n_noisy=n_noisy, seeded=seeded)
