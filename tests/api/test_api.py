"""dp_lm end to end: results, budgets, the OLS baseline, and every validation error (with
nothing charged)."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import dpstats as dp
from dpstats.errors import (
    BudgetExceededError,
    DataError,
    DPStatsError,
    FormulaError,
    NotPrivateWarning,
    PrivacyParameterError,
    UnknownMethodError,
    ValidationError,
)


def _frame(n=20000, seed=0, noise=1.0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.uniform(-3, 3, size=n)})
    df["y"] = 2.0 + 3.0 * df.x1 - 1.5 * df.x2 + noise * rng.normal(size=n)
    return df


@pytest.fixture(scope="module")
def frame():
    return _frame()


def test_fit_releases_params_in_design_order(frame):
    fit = dp.dp_lm("y ~ x1 + x2", frame, eps=2.0, random_state=1)
    assert fit.released and list(fit.params.index) == ["Intercept", "x1", "x2"]
    assert fit.spent == pytest.approx((2.0, 1e-5))
    assert fit.n_noisy is not None and fit.m is not None and fit.ptr.passed
    assert fit.seeded and fit.selected == [] and fit.private
    assert list(fit.ledger.columns) == ["stage", "mechanism", "eps", "delta", "detail"]
    np.testing.assert_allclose(fit.params.to_numpy(), [2.0, 3.0, -1.5], atol=0.3)
    test = _frame(2000, seed=9)
    assert fit.score(test) > 0.8
    assert fit.predict(test).shape == (2000,)
    assert "seeded" in str(fit.summary()).lower()
    assert "PTR" in fit._repr_html_()


def test_large_eps_approaches_statsmodels_ols():
    df = _frame(60000, seed=2, noise=0.5)
    fit = dp.dp_lm("y ~ .", df, eps=1e4, random_state=3)
    ols = sm.OLS(df.y, sm.add_constant(df[["x1", "x2"]])).fit().params.to_numpy()
    np.testing.assert_allclose(fit.params.to_numpy(), ols, atol=0.03)


def test_explicit_m_skips_private_n(frame):
    fit = dp.dp_lm("y ~ x1", frame, eps=1.0, m=1000, method="tukey", random_state=0)
    assert fit.n_noisy is None and fit.m == 1000
    # no "private n" stage; the standard errors' own releases are stage "inference"
    assert list(fit.ledger.stage.unique()) in (["regression"], ["regression", "inference"])


def test_ptr_failure_is_a_normal_result():
    fit = dp.dp_lm("y ~ .", _frame(2000, seed=4), eps=0.1, m=200, method="tukey", k=5,
                   random_state=0)
    assert not fit.released and fit.params.isna().all()
    assert fit.unreleased_reason == "ptr_failed" and not fit.ptr.passed
    assert fit.spent == pytest.approx((0.1, 1e-5))  # the budget is still spent
    text = str(fit.summary())
    assert "PTR failed" in text and "threshold" in text
    assert "PTR failed" in fit._repr_html_()


def test_too_few_rows_charges_only_the_private_count():
    fit = dp.dp_lm("y ~ .", _frame(60, seed=4), eps=0.5, random_state=0)   # the default
    assert not fit.released and fit.unreleased_reason == "too_few_rows"
    assert fit.spent[0] == pytest.approx(0.025)  # 5% on n; the data was not used further
    assert "Too few rows" in str(fit.summary())


def _not_private_marks(fit, caught) -> dict[str, bool]:
    """Every place a non-private fit must say so (issue 14, leak 5), True when it does."""
    from dpstats.__main__ import result_dict
    text, html = str(fit.summary()), fit._repr_html_()
    mech = [c.detail for c in fit.charges if c.mechanism == "restricted exponential"]
    return {"private flag": fit.private is False,
            "warning": any(issubclass(w.category, NotPrivateWarning) for w in caught),
            "summary text": "NOT PRIVATE" in text and "(eps, delta)-DP, add" not in text,
            "summary HTML": 'class="dpstats-banner"' in html and "NOT PRIVATE</span>" in html,
            "repr": "NOT PRIVATE" in repr(fit),
            "JSON": result_dict(fit)["private"] is False
            and any("NOT PRIVATE" in n for n in result_dict(fit)["notes"]),
            "ledger": bool(mech) and all("NOT PRIVATE" in d for d in mech)}


def _paper_fit(frame, kind="lm"):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if kind == "lm":
            fit = dp.dp_lm("y ~ x1 + x2", frame, eps=1.0, method="tukey", accounting="paper",
                           random_state=0)
        else:
            df = frame.assign(y=(frame.y > 2.0).astype(float))
            fit = dp.dp_glm("y ~ x1 + x2", df, eps=3.0, method="tukey", accounting="paper",
                            m=200, random_state=0)
    return fit, caught


@pytest.mark.parametrize("kind", ["lm", "glm"])
def test_paper_accounting_is_selectable_but_marked_not_private(frame, kind):
    """accounting="paper" is not (eps, delta)-DP under one-model swaps: the fit still runs (to
    reproduce the papers) but is marked NOT PRIVATE wherever method="ols" is."""
    fit, caught = _paper_fit(frame, kind)
    assert fit.released
    marks = _not_private_marks(fit, caught)
    assert all(marks.values()), marks
    swap = dp.dp_lm("y ~ x1 + x2", frame, eps=1.0, random_state=0)   # the default stays private
    assert swap.private and "NOT PRIVATE" not in str(swap.summary())


def test_paper_accounting_marks_have_teeth(frame, monkeypatch):
    """With the marking removed (the request no longer recognises paper accounting, the
    estimator writes no ledger note) every check above fails: the fit would claim
    (eps, delta)-DP."""
    from dpstats.estimators.tukey import linear
    from dpstats.pipeline.request import FitRequest
    monkeypatch.setattr(FitRequest, "paper_accounting", property(lambda self: False))
    monkeypatch.setattr(linear, "PAPER_NOTE", "")
    fit, caught = _paper_fit(frame)
    assert not any(_not_private_marks(fit, caught).values())


def test_ols_is_flagged_not_private(frame):
    with pytest.warns(NotPrivateWarning):
        fit = dp.dp_lm("y ~ x1 + x2", frame, eps=1.0, method="ols")
    assert not fit.private and fit.spent == (0.0, 0.0)
    assert "NOT PRIVATE" in str(fit.summary()) and "NOT PRIVATE" in fit._repr_html_()


def test_shared_budget(frame):
    b = dp.Budget(1.0, 1e-5)
    dp.dp_lm("y ~ x1", frame, eps=0.6, delta=5e-6, budget=b, random_state=0)
    assert b.spent == pytest.approx((0.6, 5e-6))
    with pytest.raises(BudgetExceededError):
        dp.dp_lm("y ~ x1", frame, eps=0.6, delta=1e-6, budget=b)
    assert b.spent == pytest.approx((0.6, 5e-6))
    assert set(b.ledger.fit) == {"fit 1"}


def test_budget_checked_before_the_data_is_touched():
    b = dp.Budget(0.5, 1e-5)
    with pytest.raises(BudgetExceededError):
        dp.dp_lm("y ~ x", "this is not a data frame", eps=1.0, budget=b)


BAD_CALLS = [
    ({"eps": 0}, PrivacyParameterError, "eps"),
    ({"eps": -1.0}, PrivacyParameterError, "eps"),
    ({"eps": math.inf}, PrivacyParameterError, "eps"),
    ({"eps": math.nan}, PrivacyParameterError, "eps"),
    ({"eps": "1"}, PrivacyParameterError, "eps"),
    ({"delta": 0}, PrivacyParameterError, "delta"),
    ({"delta": 1}, PrivacyParameterError, "delta"),
    ({"delta": -1e-5}, PrivacyParameterError, "delta"),
    ({"method": "lasso"}, UnknownMethodError, "method"),
    ({"select": "magic"}, UnknownMethodError, "select"),
    ({"m": 0}, ValidationError, "m"),
    ({"m": "many"}, ValidationError, "m"),
    ({"k": 0}, ValidationError, "k"),
    ({"split": {"n": 0.5, "regression": 0.6}}, PrivacyParameterError, "sum"),
    ({"formula": "y ~ nosuch"}, FormulaError, "nosuch"),
    ({"formula": "y x1"}, FormulaError, "~"),
    ({"formula": "y ~ scale(x1)"}, FormulaError, "scale"),
    ({"formula": "s ~ x1"}, DataError, "numeric"),
    ({"data": "not a frame"}, DataError, "DataFrame"),
    ({"data": pd.DataFrame()}, DataError, "empty"),
    ({"random_state": "abc"}, ValidationError, "random_state"),
    ({"budget": 1.0}, ValidationError, "Budget"),
]


@pytest.mark.parametrize("override,exc,needle", BAD_CALLS)
def test_bad_input_raises_clear_error_and_charges_nothing(frame, override, exc, needle):
    df = frame.head(500).assign(s="a")
    kwargs = {"formula": "y ~ x1 + x2", "data": df, "eps": 1.0, "delta": 1e-5}
    if override.get("data") is not None and isinstance(override["data"], pd.DataFrame) \
            and len(override["data"]) == 3:
        kwargs["formula"] = "y ~ x1 + x2 + I(x1 * x2) + I(x1 ** 2)"
    kwargs.update(override)
    b = dp.Budget(10.0, 1e-3)
    formula, data = kwargs.pop("formula"), kwargs.pop("data")
    kwargs.setdefault("budget", b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc) as info:
            dp.dp_lm(formula, data, **kwargs)
    assert isinstance(info.value, DPStatsError)
    assert needle.lower() in str(info.value).lower()
    assert b.spent == (0.0, 0.0)


def test_more_columns_than_rows_is_fine_when_selection_cuts_them():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 60))
    df = pd.DataFrame(X, columns=[f"g{j}" for j in range(60)])
    df["y"] = X[:, 3] + 0.1 * rng.normal(size=40)
    fit = dp.dp_lm("y ~ .", df, eps=5.0, select="kendall", k=2, method="bas",
                   random_state=0)
    assert len(fit.selected) == 2
    # more columns than rows is not refused (that would read n exactly): the mechanisms run,
    # here Tukey finds too few models from the private row count and withholds
    wide = dp.dp_lm("y ~ .", df, eps=5.0, select=None, method="tukey", random_state=0)
    assert not wide.released and wide.params.isna().all()
    few = dp.dp_lm("y ~ .", df.iloc[:4], eps=5.0, select="kendall", k=5, method="tukey",
                   random_state=0)
    assert len(few.selected) == 5 and not few.released
    with pytest.raises(dp.errors.DataError, match="more columns"):   # not private
        dp.dp_lm("y ~ .", df, eps=5.0, method="ols")
