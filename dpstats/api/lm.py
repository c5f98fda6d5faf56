"""Public entry points: validate -> budget check -> design -> (select) -> estimate -> result.

Orchestration only: every released number is produced by a mechanism that charges the fit's
ledger; this module never adds noise itself.
"""

from __future__ import annotations

import numbers
import warnings

import pandas as pd

from ..errors import DataError, NotPrivateWarning, ValidationError
from ..estimators import METHODS, estimator_call, get_estimator
from ..estimators.tukey.choose_m import MAX_MODELS, choose_m
from ..formula.design import build_design
from ..mechanisms import private_count
from ..mechanisms.accountant import Budget, Ledger, split_budget
from ..mechanisms.rng import as_rng
from ..pipeline.assemble import released_params, result_fields
from ..pipeline.options import check_method_opts
from ..pipeline.select import (
    SELECT_CHOICES,
    auto_selector,
    bounds_for_kept,
    candidate_columns,
    check_bounds_arg,
    check_bounds_for,
    check_groups,
    needs_row_count,
    resolve_selector,
    run_selection,
)
from ..results.lm import DPLMResult, FitSpec
from ..validation import check_choice, check_delta, check_eps, check_k

__all__ = ["dp_lm", "DEFAULT_SPLIT", "SELECT_CHOICES"]

#: Default budget shares (003 section 4): private n, feature selection, regression.
DEFAULT_SPLIT = {"n": 0.05, "selection": 0.05, "regression": 0.90}
#: Arguments dp_lm passes to the estimator itself; method options may not set them.
_LM_RESERVED = {"X", "y", "eps", "delta", "rng", "ledger", "m", "lemma", "accounting",
                "intercept_col", "names", "bounds", "n_noisy", "stage", "loss", "fitter",
                "known_x_bounds", "split"}


def _check_split(split: object) -> dict[str, float]:
    if split is None:
        return dict(DEFAULT_SPLIT)
    if not isinstance(split, dict) or set(split) - set(DEFAULT_SPLIT):
        raise ValidationError(
            f"split must be a dict with keys among {sorted(DEFAULT_SPLIT)} and shares summing to "
            f"1, e.g. {DEFAULT_SPLIT}; got {split!r}")
    bad = sorted(key for key, val in split.items()
                 if isinstance(val, bool) or not isinstance(val, numbers.Real))
    if bad:
        raise ValidationError(f"split shares must be numbers (shares of eps summing to 1, e.g. "
                              f"{DEFAULT_SPLIT}); {bad} are not")
    full = {key: float(split.get(key, 0.0)) for key in DEFAULT_SPLIT}
    split_budget(1.0, full)  # validates shares
    return full


def _check_rows(n: int, p: int, p_fit: int) -> None:
    """The regression needs at least as many complete rows as the columns it fits."""
    if n < p_fit:
        what = (f"the design has more columns ({p})" if p_fit == p else
                f"the regression after selection fits more columns ({p_fit})")
        raise DataError(f"{what} than there are rows with complete data; use fewer terms "
                        "(or select=..., smaller k) or more rows")


def _check_m(m: object) -> int | str:
    if isinstance(m, str) and m == "auto":
        return "auto"
    if isinstance(m, numbers.Integral) and not isinstance(m, bool) and 1 <= int(m) <= MAX_MODELS:
        return int(m)
    raise ValidationError(f"m must be 'auto' or an integer from 1 to {MAX_MODELS} (number of "
                          f"Tukey models); got {m!r}")


def dp_lm(formula: str, data: pd.DataFrame, *, eps: float, delta: float = 1e-5,
          select: str | None = "auto", k: int = 5, method: str = "tukey",
          m: int | str = "auto", split: dict | None = None, bounds: object = "auto",
          groups: object = "auto", budget: Budget | None = None, random_state=None,
          lemma: str = "8.5", accounting: str = "swap", **method_opts) -> DPLMResult:
    """Fit a differentially private linear regression from a formula.

    Parameters
    ----------
    formula : str
        R-style formula, e.g. ``"price ~ ."`` or ``"y ~ x1 + C(g, levels=['a', 'b'])"``.
    data : pandas.DataFrame
        One row per person (the privacy unit). Rows with missing values are dropped.
    eps : float
        Total privacy budget of the fit (> 0).
    delta : float, default 1e-5
        Total delta, in (0, 1); choose it well below 1/n.
    select : {"auto", "kendall", "sublasso", "sis", None}
        Private feature selection before the regression. ``"auto"`` (default) selects nothing
        when the formula has at most ``k`` terms besides the intercept; otherwise it uses
        SubLasso when the private row count gives enough groups for its votes to beat the noise
        and DPKendall when not (see :mod:`dpstats.pipeline.select`). ``"sublasso"`` votes per-group
        Lasso supports, ``"sis"`` is DP-SIS (needs bounds, see ``bounds``). The intercept is
        never a candidate and is always kept.
    k : int, default 5
        Number of terms to select (design columns; a categorical contributes one per level).
    method : {"tukey", "adassp", "bas", "fw", "dpgd", "ols"}
        ``"tukey"``: the Tukey-depth mechanism with propose-test-release (no bounds needed).
        ``"adassp"``: AdaSSP (Wang 2018); ``"bas"``: Boosted AdaSSP (003), both on columns
        clipped to public or private ``bounds`` (predictions clip to the released box);
        ``"fw"``: private Frank-Wolfe on an L1 ball (001); ``"dpgd"``: DP gradient descent,
        a baseline that needs tuning. ``"ols"``: plain least squares, NOT PRIVATE (a
        baseline; it warns and says so).
    m : "auto" or int
        Number of Tukey models. ``"auto"`` spends ``split["n"]`` of eps on a private row count.
    split : dict, optional
        Budget shares ``{"n", "selection", "regression"}``; shares a stage does not use go to
        the regression. Default 5% / 5% / 90%.
    bounds : "auto", tuple or dict
        Clipping bounds for methods that need them (DP-SIS; the Tukey mechanism needs none).
        ``"auto"`` estimates them privately from part of that stage's budget; a tuple
        ``(lo, hi)`` or ``{"x": ..., "y": ...}`` is taken as public knowledge.
    groups : "auto", "sqrt" or int
        SubLasso groups: ``n_hat / p`` (003), ``sqrt(n_hat)`` (Kifer's two-stage), or a count.
    budget : Budget, optional
        Shared accountant: the fit must fit in ``budget.remaining`` (checked before the data is
        touched) and its charges are recorded there.
    random_state : int, Generator or None
        None (default) draws from the OS CSPRNG. Anything else makes the fit reproducible; the
        summary then says it is not fit for release.
    lemma : {"8.5", "3.6"}
        Distance lemma of the PTR test (003 Lemma 8.5 is tighter).
    accounting : {"swap", "paper"}
        Privacy analysis of the Tukey stage. ``"swap"`` (default) is sound when one row changes
        one of the m models; ``"paper"`` reproduces 002/003, whose analysis assumes one row
        adds or removes a whole model (see :func:`dpstats.mechanisms.ptr.ptr_parameters`).
    **method_opts
        Options of the regression method, checked before anything is charged, e.g.
        ``T=50`` or ``variant="paper"`` for ``"bas"``; ``radius``, ``T`` and ``screen``
        (``"every"``, ``"last"`` or every j-th iteration) for ``"fw"``; ``lr``, ``clip`` and
        ``epochs`` for ``"dpgd"``; ``bounds_share``/``bounds_method`` for the bounded methods;
        ``centre=None`` for ``"tukey"``. See each method's ``estimate`` in
        :mod:`dpstats.estimators` for the full list; an unknown option raises and names them.

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
    # 1. arguments (nothing about the data yet)
    eps = check_eps(eps)
    delta = check_delta(delta)
    check_choice(method, METHODS, "method")
    check_choice(select, SELECT_CHOICES, "select")
    k = check_k(k)
    m = _check_m(m)
    shares = _check_split(split)
    groups = check_groups(groups)
    check_bounds_arg(bounds)
    check_choice(lemma, ("8.5", "3.6"), "lemma")
    check_choice(accounting, ("swap", "paper"), "accounting")
    if budget is not None and not isinstance(budget, Budget):
        raise ValidationError(f"budget must be a dpstats.Budget or None; got "
                              f"{type(budget).__name__}")
    _check_lm_opts(method, method_opts, delta)
    rng, seeded = as_rng(random_state)
    # 2. the shared budget can pay for this fit: checked before the data is touched
    if budget is not None:
        budget.check(eps, delta)
    # 3. design matrix (validates the data; charges nothing)
    design = build_design(formula, data)
    n, p = design.X.shape
    spec = FitSpec(formula=design.formula, expanded=design.expanded, label=design.label,
                   columns=tuple(design.columns), has_intercept=design.has_intercept,
                   model_spec=design.spec, levels_from_data=tuple(design.levels_from_data))
    notes = []
    if design.levels_from_data:
        notes.append("Category levels of " + ", ".join(design.levels_from_data) + " were read "
                     "from the data (not private); declare them to avoid this.")
    if method == "ols":
        _check_rows(n, p, p)
        return _fit_ols(design, spec, eps, delta, notes, seeded)
    candidates = candidate_columns(design.columns, design.has_intercept)
    check_bounds_for(bounds, design.columns, candidates)
    selector, skip_note = resolve_selector(select, len(candidates), k)
    # the regression sees the non-candidate columns plus the k selected ones
    _check_rows(n, p, p - len(candidates) + k if selector else p)
    if skip_note:
        notes.append(skip_note)
    ledger = budget.ledger_for(eps, delta) if budget is not None else Ledger(eps, delta)
    # 4. budget split: stages not used give their share to the regression
    tukey = method == "tukey"
    use_n = (tukey and m == "auto") or method == "dpgd" or needs_row_count(selector, groups)
    eps_n = eps * shares["n"] if use_n else 0.0
    eps_sel = eps * shares["selection"] if selector else 0.0
    eps_reg = eps - eps_n - eps_sel
    n_noisy = private_count(n, eps_n, rng, ledger, stage="private n") if use_n else None
    # 5. selection (the intercept is never a candidate and always kept)
    keep = list(range(p))
    selection = None
    if selector == "auto":
        selector = auto_selector(n_noisy, len(candidates), k, eps_sel)
    if selector:
        selection = run_selection(selector, design.X, design.y, candidates, k=k, eps=eps_sel,
                                  rng=rng, ledger=ledger, n_noisy=n_noisy, groups=groups,
                                  bounds=bounds, names=design.columns)
        keep = sorted(set(range(p)) - set(candidates) | set(selection.indices))
    # 6. regression on the kept columns
    p_used = len(keep)
    m_used = (choose_m(n_noisy, p_used, eps_reg, delta, lemma, accounting)
              if tukey and m == "auto" else m)
    names = [design.columns[i] for i in keep]
    icol = names.index("Intercept") if design.has_intercept else None
    est_bounds = bounds_for_kept(bounds, design.columns, candidates, keep)
    est = estimator_call(method, design.X[:, keep], design.y, dict(
        eps=eps_reg, delta=delta, rng=rng, ledger=ledger, m=m_used, lemma=lemma,
        accounting=accounting, intercept_col=icol, names=names, bounds=est_bounds,
        n_noisy=n_noisy, stage="regression"), method_opts)
    params, clip = released_params(est, design, keep, notes, bounds, names, m_used)
    return DPLMResult(
        params=params, spec=spec, method=method, eps=eps, delta=delta, clip=clip,
        **result_fields(design=design, selection=selection, k=k, est=est, ledger=ledger,
                        selector=selector, n_noisy=n_noisy, seeded=seeded,
                        split={"n": eps_n, "selection": eps_sel, "regression": eps_reg},
                        notes=notes))


def _check_lm_opts(method: str, opts: dict, delta: float) -> None:
    """Method options of dp_lm, by name and value (nothing charged, no data read)."""
    if not opts:
        return
    if method == "ols":
        raise ValidationError(f"method='ols' takes no options; got {sorted(opts)}")
    check_method_opts(get_estimator(method), method, opts, _LM_RESERVED, "dp_lm",
                      fixed={"loss": "squared", "delta": delta})
    if "centre" in opts and not (opts["centre"] is None or isinstance(opts["centre"], str)):
        raise ValidationError("dp_lm takes centre='auto' or None (the columns after selection "
                              "are not known in advance); for a public centre array call "
                              "dpstats.estimators.tukey.linear.estimate")


def _fit_ols(design, spec, eps, delta, notes, seeded) -> DPLMResult:
    warnings.warn("method='ols' is NOT differentially private: it is the non-private baseline. "
                  "Do not release its output.", NotPrivateWarning, stacklevel=3)
    est = get_estimator("ols")(design.X, design.y)
    notes = [*notes, "NOT PRIVATE: ordinary least squares on the raw data (baseline only)."]
    return DPLMResult(params=pd.Series(est.params, index=design.columns, name="coef"),
                      spec=spec, method="ols", eps=eps, delta=delta, charges=(), released=True,
                      private=False, seeded=seeded, notes=tuple(notes))
