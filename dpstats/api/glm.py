"""``dp_glm``: differentially private logistic regression from a formula.

Orchestration only, in the order of :func:`dpstats.dp_lm`: validate every argument (nothing
charged) -> check the shared budget -> design and response coding (nothing charged) -> private
row count -> private selection -> private regression -> result. Every released number comes
from a mechanism that charges the fit's ledger; this module adds no noise itself.
"""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd

from ..errors import DataError, UnknownMethodError, ValidationError
from ..formula.design import build_design, check_data
from ..formula.parse import _split_formula
from ..mechanisms import private_count
from ..mechanisms.accountant import Budget, Ledger
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
    needs_row_count,
    resolve_selector,
    run_selection,
)
from ..results.glm import DPGLMResult, code_binary_label
from ..results.lm import FitSpec
from ..validation import check_choice, check_delta, check_eps, check_k
from .lm import _check_m, _check_split

__all__ = ["dp_glm", "FAMILIES", "GLM_METHODS", "GLM_DEFAULT_SPLIT"]

FAMILIES = ("binomial",)
GLM_METHODS = ("fw", "dpgd", "tukey")
#: Default budget shares of dp_glm: private n, feature selection, regression. Selection gets
#: 15% instead of dp_lm's 5%: on a 0/1 label the selectors' scores are weaker, and at 5% they
#: often pick rare indicator columns, which cost accuracy for every method and make the Tukey
#: PTR test fail (a column that is all zero in a group gives a spike of identical model
#: coordinates). Measured on adult and default-credit (10 splits, eps 0.5 to 5): 15% was
#: better than or within noise of 5%, 10% and 25% for fw, dpgd and tukey; e.g. tukey on adult
#: at eps = 1 went from 4/10 PTR failures to none (benchmarks/logistic_accuracy.py).
GLM_DEFAULT_SPLIT = {"n": 0.05, "selection": 0.15, "regression": 0.80}
#: Arguments dp_glm passes itself; method_opts may not set them.
_RESERVED = {"X", "y", "eps", "delta", "rng", "ledger", "loss", "intercept_col", "names",
             "stage", "n_noisy", "known_x_bounds", "bounds", "m"}
_CODE_IT = ("code it 0/1 first, e.g. data[{l!r}] = (data[{l!r}] == <the level meaning 1>)"
            ".astype(int), declare it as pd.Categorical with its two levels (the second is "
            "coded 1), or write the formula as 'I({l} == ...) ~ ...'")


def _estimator(method: str):
    """The ``estimate`` function for ``method`` (the module of that name, as the registry of
    :mod:`dpstats.estimators` does; "tukey" means the logistic variant)."""
    name = "tukey.glm" if method == "tukey" else method
    try:
        return importlib.import_module(f"..estimators.{name}", __package__).estimate
    except ImportError:
        raise UnknownMethodError(f"method={method!r} is not available in this installation "
                                 "of dpstats; use method='dpgd' or 'tukey'") from None


def _check_method_opts(method: str, opts: dict, delta: float) -> None:
    """Validate method options by name and value (nothing charged, no data read)."""
    check_method_opts(_estimator(method), method, opts, _RESERVED, "dp_glm",
                      fixed={"loss": "logistic", "delta": delta})


def _binary_response(formula: str, data: pd.DataFrame) -> tuple[pd.DataFrame, tuple | None]:
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


def _indicator_bounds(spec, columns: list[str], keep: list[int]) -> dict[int, tuple]:
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


def dp_glm(formula: str, data: pd.DataFrame, *, family: str = "binomial", eps: float,
           delta: float = 1e-5, method: str = "fw", select: str | None = "auto", k: int = 5,
           bounds: object = "auto", m: int | str = "auto", budget: Budget | None = None,
           random_state=None, split: dict | None = None, **method_opts) -> DPGLMResult:
    """Fit a differentially private logistic regression (``family="binomial"``).

    Parameters
    ----------
    formula : str
        R-style formula, e.g. ``"default ~ ."`` or ``"y ~ x + C(g, levels=['a', 'b'])"``.
        The response must be coded 0/1 (numeric or boolean), be a ``pd.Categorical`` with
        exactly two declared levels (the first is coded 0, the second 1, as in R), or be an
        expression such as ``I(income == '>50K')``. Text responses are refused (which value
        means 1 would be a guess).
    data : pandas.DataFrame
        One row per person (the privacy unit); rows with missing values are dropped.
    family : {"binomial"}
        Logistic regression (logit link).
    eps, delta : float
        Total budget of the fit (add/remove one row).
    method : {"fw", "dpgd", "tukey"}
        ``"fw"`` (default): private Frank-Wolfe on an L1 ball (001). ``"dpgd"``: full-batch DP
        gradient descent, a baseline that needs tuning (:mod:`dpstats.estimators.dpgd`).
        ``"tukey"``: subsample and aggregate per-group logistic fits through the Tukey
        mechanism with PTR (:mod:`dpstats.estimators.tukey.glm`).
    select : {"auto", "kendall", "sublasso", "sis", None}
        Private feature selection on the 0/1 label, as in :func:`dpstats.dp_lm`
        (``"auto"``: none when at most ``k`` terms, else SubLasso or DPKendall).
    k : int
        Number of design columns to select (the intercept is always kept and never scored).
    bounds : "auto", tuple or dict
        Feature bounds for ``"fw"`` and ``"dpgd"`` (and DP-SIS); ``"auto"`` estimates them
        privately. Indicator columns of categoricals have public ranges from their coding and
        cost nothing (dpgd). The Tukey method needs none.
    m : "auto" or int
        Number of Tukey models; ``"auto"`` uses the private row count
        (:func:`dpstats.estimators.tukey.glm.choose_m_glm`).
    budget : Budget, optional
        Shared accountant, checked before the data is touched.
    random_state : int, Generator or None
        None (default) draws from the OS CSPRNG; anything else is reproducible, not for release.
    split : dict, optional
        Budget shares ``{"n", "selection", "regression"}``, default
        :data:`GLM_DEFAULT_SPLIT` (5% / 15% / 80%; selection gets more than in dp_lm, see
        there). The row count is released for ``"dpgd"`` (its step averages over it), for
        ``"tukey"`` with ``m="auto"`` and when selection needs it; unused shares go to the
        regression.
    **method_opts
        Passed to the estimator, e.g. ``lr``, ``clip``, ``epochs`` for ``"dpgd"``;
        ``lemma``, ``accounting``, ``centre``, ``ridge`` for ``"tukey"``. Names are checked
        against the estimator's parameters, and values by the estimator module's
        ``check_options`` where it has one (dpgd, tukey), before anything is charged.

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
    # 1. arguments (nothing about the data yet)
    check_choice(family, FAMILIES, "family")
    eps, delta = check_eps(eps), check_delta(delta)
    check_choice(method, GLM_METHODS, "method")
    check_choice(select, SELECT_CHOICES, "select")
    k = check_k(k)
    m = _check_m(m)
    shares = dict(GLM_DEFAULT_SPLIT) if split is None else _check_split(split)
    check_bounds_arg(bounds)
    _check_method_opts(method, method_opts, delta)
    if budget is not None and not isinstance(budget, Budget):
        raise ValidationError(f"budget must be a dpstats.Budget or None; got "
                              f"{type(budget).__name__}")
    rng, seeded = as_rng(random_state)
    if budget is not None:
        budget.check(eps, delta)
    # 2. design and a 0/1 response (validates the data; charges nothing)
    data, levels = _binary_response(formula, check_data(data))
    design = build_design(formula, data)
    if not np.isin(design.y, (0.0, 1.0)).all():
        raise DataError(f"the response {design.label!r} must be coded 0/1 for "
                        "family='binomial' (it has other values); " + _CODE_IT.format(
                            l=design.label))
    n, p = design.X.shape
    if n < p:
        raise DataError(f"the design has more columns ({p}) than rows with complete data; use "
                        "fewer terms (or select=..., smaller k) or more rows")
    spec = FitSpec(formula=design.formula, expanded=design.expanded, label=design.label,
                   columns=tuple(design.columns), has_intercept=design.has_intercept,
                   model_spec=design.spec, levels_from_data=tuple(design.levels_from_data))
    notes = []
    if levels is not None:
        notes.append(f"Response {design.label!r} coded 0 = {levels[0]!r}, 1 = {levels[1]!r} "
                     "(declared level order).")
    candidates = candidate_columns(design.columns, design.has_intercept)
    check_bounds_for(bounds, design.columns, candidates)
    selector, skip_note = resolve_selector(select, len(candidates), k)
    if skip_note:
        notes.append(skip_note)
    ledger = budget.ledger_for(eps, delta) if budget is not None else Ledger(eps, delta)
    # 3. budget split; stages not used give their share to the regression
    use_n = (method == "tukey" and m == "auto") or method == "dpgd" \
        or needs_row_count(selector, "auto")
    eps_n = eps * shares["n"] if use_n else 0.0
    eps_sel = eps * shares["selection"] if selector else 0.0
    eps_reg = eps - eps_n - eps_sel
    n_noisy = private_count(n, eps_n, rng, ledger, stage="private n") if use_n else None
    # 4. selection (the intercept is never a candidate and is always kept)
    keep, selection = list(range(p)), None
    if selector == "auto":
        selector = auto_selector(n_noisy, len(candidates), k, eps_sel)
    if selector:
        selection = run_selection(selector, design.X, design.y, candidates, k=k, eps=eps_sel,
                                  rng=rng, ledger=ledger, n_noisy=n_noisy, bounds=bounds,
                                  names=design.columns)
        keep = sorted(set(range(p)) - set(candidates) | set(selection.indices))
    # 5. regression on the kept columns
    names = [design.columns[i] for i in keep]
    icol = names.index("Intercept") if design.has_intercept else None
    reg_bounds = bounds_for_kept(bounds, design.columns, candidates, keep)
    X = design.X[:, keep]
    common = {"eps": eps_reg, "delta": delta, "rng": rng, "ledger": ledger,
              "intercept_col": icol, "names": names, "stage": "regression"}
    m_used = m
    if method == "tukey":
        from ..estimators.tukey.glm import choose_m_glm
        if m == "auto":
            m_used = choose_m_glm(n_noisy, len(keep), eps_reg, delta,
                                  method_opts.get("lemma", "8.5"),
                                  method_opts.get("accounting", "swap"))
        est = _estimator("tukey")(X, design.y, m=m_used, **common, **method_opts)
    elif method == "dpgd":
        est = _estimator("dpgd")(X, design.y, loss="logistic", bounds=reg_bounds,
                                 n_noisy=n_noisy, known_x_bounds=_indicator_bounds(
                                     design.spec, design.columns, keep), **common, **method_opts)
    else:
        est = _estimator("fw")(X, design.y, loss="logistic", bounds=reg_bounds, **common,
                               **method_opts)
    params, clip = released_params(est, design, keep, notes, bounds, names, m_used)
    return DPGLMResult(
        params=params, spec=spec, method=method, eps=eps, delta=delta, clip=clip,
        family=family, response_levels=levels,
        **result_fields(design=design, selection=selection, k=k, est=est, ledger=ledger,
                        selector=selector, n_noisy=n_noisy, seeded=seeded,
                        split={"n": eps_n, "selection": eps_sel, "regression": eps_reg},
                        notes=notes))
