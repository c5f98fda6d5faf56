"""dp_glm end to end (fw, dpgd, tukey), DPGLMResult, the per-group logistic kernel against its
numpy reference and statsmodels, and validation errors that charge nothing."""

import functools
import importlib.util
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import dpstats as dp
from dpstats._kernels.logistic import group_logistic, group_logistic_reference
from dpstats.api.glm import dp_glm
from dpstats.errors import DataError, PredictionError, UnknownMethodError, ValidationError
from dpstats.estimators.tukey.glm import choose_m_glm
from dpstats.estimators.tukey.glm import estimate as tukey_glm
from dpstats.pipeline.glm_design import indicator_bounds as _indicator_bounds
from dpstats.results.glm import DPGLMResult

HAS_FW = importlib.util.find_spec("dpstats.estimators.fw") is not None
needs_fw = pytest.mark.skipif(not HAS_FW, reason="dpstats.estimators.fw is not available")


def _frame(n=30000, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(-1, 1, n)})
    eta = 0.3 + 1.5 * df.x1 - 1.0 * df.x2
    df["y"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(int)
    return df


@pytest.fixture(scope="module")
def frame():
    return _frame()


@pytest.fixture(scope="module")
def logit(frame):
    return sm.Logit(frame.y, sm.add_constant(frame[["x1", "x2"]])).fit(disp=0).params.to_numpy()


# -- kernel -------------------------------------------------------------------------------------
def _groups(n, p, m, seed, separable=False):
    rng = np.random.default_rng(seed)
    X = np.c_[np.ones(n), rng.normal(size=(n, p - 1)) * rng.uniform(0.1, 100, p - 1)]
    beta = rng.normal(size=p) / np.r_[1.0, np.abs(X[:, 1:]).mean(axis=0)]
    eta = X @ beta * (50.0 if separable else 1.0)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(float)
    return X, y, rng.integers(0, m, size=n)


@pytest.mark.parametrize("n,p,m,sep", [(4000, 4, 50, False), (600, 6, 100, False),
                                       (300, 3, 40, True), (3000, 5, 1, False)])
def test_group_logistic_matches_reference(n, p, m, sep):
    X, y, labels = _groups(n, p, m, n + p + m, sep)
    got = group_logistic(X, y, labels, m)
    ref = group_logistic_reference(X, y, labels, m)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_group_logistic_equals_statsmodels_on_a_large_group():
    X, y, _ = _groups(20000, 4, 1, 7)
    got = group_logistic(X, y, np.zeros(len(y), dtype=np.int64), 1)[0]
    np.testing.assert_allclose(got, sm.Logit(y, X).fit(disp=0).params, rtol=1e-3)


def test_group_logistic_degenerate_groups_do_not_crash():
    X, y, _ = _groups(40, 4, 1, 3)
    X[:, 2] = 0.0                                     # an all-zero column
    y[:] = 1.0                                        # every label 1: separable
    labels = np.array([0] * 2 + [1] * 38, dtype=np.int64)  # group 0 has fewer rows than columns
    out = group_logistic(X, y, labels, 3)             # group 2 is empty
    assert np.isfinite(out).all() and (out[:, 2] == 0).all() and (out[2] == 0).all()
    np.testing.assert_allclose(out, group_logistic_reference(X, y, labels, 3), rtol=1e-5,
                               atol=1e-6)


# -- accuracy at large eps ----------------------------------------------------------------------
def test_dpgd_large_eps_approaches_statsmodels_logit(frame, logit):
    fit = dp_glm("y ~ x1 + x2", frame, eps=1e4, method="dpgd", bounds=(-1, 1), epochs=600,
                 lr=12.0, random_state=0)
    assert isinstance(fit, DPGLMResult) and fit.released and fit.ptr is None
    np.testing.assert_allclose(fit.params.to_numpy(), logit, atol=0.05)


def test_tukey_large_eps_approaches_statsmodels_logit(frame, logit):
    fit = dp_glm("y ~ x1 + x2", frame, eps=1e3, method="tukey", m=150, random_state=1)
    assert fit.released and fit.ptr.passed and fit.m == 150
    np.testing.assert_allclose(fit.params.to_numpy(), logit, atol=0.1)


@needs_fw
def test_fw_large_eps_approaches_statsmodels_logit(frame, logit):
    fit = dp_glm("y ~ x1 + x2", frame, eps=1e4, method="fw", bounds=(-1, 1), T=2000,
                 random_state=2)
    assert fit.released
    np.testing.assert_allclose(fit.params.to_numpy(), logit, atol=0.15)


def test_auto_is_the_default_method(frame):
    """The default is method="auto"; on 30,000 rows it runs objective perturbation."""
    fit = dp_glm("y ~ x1 + x2", frame, eps=1.0, random_state=0)
    assert fit.method == "objpert" and fit.auto_choice == "objpert"
    assert fit.spent == pytest.approx((1.0, 1e-5))


# -- ledger and budget --------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["dpgd", "tukey", "outpert", "auto",
                                    pytest.param("fw", marks=needs_fw)])
def test_ledger_totals_and_shared_budget(frame, method):
    b = dp.Budget(3.0, 1e-4)
    fit = dp_glm("y ~ x1 + x2", frame, eps=1.5, delta=2e-5, method=method, budget=b,
                 random_state=3)
    assert fit.spent == pytest.approx((1.5, 2e-5))
    assert b.spent == pytest.approx(fit.spent)
    assert list(fit.ledger.columns) == ["stage", "mechanism", "eps", "delta", "detail"]
    assert set(fit.ledger.stage) <= {"private n", "selection", "regression",
                                     "regression: bounds", "regression: threshold",
                                     "regression: class counts", "inference"}
    if method in ("dpgd", "tukey"):
        assert fit.n_noisy is not None and fit.ledger.stage.iloc[0] == "private n"


def test_selection_runs_when_more_terms_than_k():
    rng = np.random.default_rng(4)
    n = 40000
    df = pd.DataFrame(rng.normal(size=(n, 8)), columns=[f"x{i}" for i in range(8)])
    eta = 1.5 * df.x1 - 1.5 * df.x5
    df["y"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(int)
    fit = dp_glm("y ~ .", df, eps=2.0, method="tukey", k=2, random_state=5)
    assert sorted(fit.selected) == ["x1", "x5"] and fit.selector in ("kendall", "sublasso")
    assert fit.spent == pytest.approx((2.0, 1e-5))
    assert fit.split == pytest.approx({"n": 0.1, "selection": 0.3, "regression": 1.6})
    assert (fit.params.drop(["Intercept", "x1", "x5"]) == 0).all()


# -- response coding ----------------------------------------------------------------------------
def test_two_level_categorical_and_bool_responses(frame):
    df = frame.assign(y=pd.Categorical(np.where(frame.y == 1, "yes", "no"),
                                       categories=["no", "yes"]))
    fit = dp_glm("y ~ x1 + x2", df, eps=2.0, method="dpgd", bounds=(-1, 1), random_state=6)
    assert fit.response_levels == ("no", "yes")
    assert any("1 = 'yes'" in note for note in fit.notes)
    assert 0.6 < fit.score(df) <= 1.0
    ref = dp_glm("y ~ x1 + x2", frame, eps=2.0, method="dpgd", bounds=(-1, 1), random_state=6)
    assert fit.score(df) == ref.score(frame)            # same coding, same noise
    fb = dp_glm("y ~ x1 + x2", frame.assign(y=frame.y == 1), eps=2.0, method="dpgd",
                bounds=(-1, 1), random_state=6)
    np.testing.assert_array_equal(fb.params.to_numpy(), ref.params.to_numpy())
    assert fb.score(frame.assign(y=frame.y == 1)) == ref.score(frame)


def test_response_expression_is_accepted(frame):
    df = frame.assign(label=np.where(frame.y == 1, "hi", "lo"))
    fit = dp_glm("I(label == 'hi') ~ x1 + x2", df, eps=2.0, method="dpgd", bounds=(-1, 1),
                 random_state=7)
    assert fit.released and 0.6 < fit.score(df) <= 1.0


def test_score_rejects_unknown_response_levels(frame):
    df = frame.assign(y=pd.Categorical(np.where(frame.y == 1, "yes", "no"),
                                       categories=["no", "yes"]))
    fit = dp_glm("y ~ x1 + x2", df, eps=2.0, method="dpgd", bounds=(-1, 1), random_state=6)
    bad = df.head(5).assign(y=["no", "maybe", "yes", "no", "no"])
    with pytest.raises(PredictionError, match="two fitted levels"):
        fit.score(bad)


# -- predictions and display --------------------------------------------------------------------
def test_predict_types_and_score(frame):
    fit = dp_glm("y ~ x1 + x2", frame, eps=3.0, method="tukey", random_state=8)
    prob = fit.predict(frame.head(50))
    link = fit.predict(frame.head(50), type="link")
    assert prob.between(0, 1).all() and prob.name == "probability"
    np.testing.assert_allclose(np.log(prob / (1 - prob)), link, rtol=1e-9, atol=1e-9)
    assert fit.score(frame) > 0.65
    with pytest.raises(ValidationError, match="type"):
        fit.predict(frame, type="probability")
    missing = frame.head(3).astype({"x1": float}).assign(x1=[np.nan, 0.0, 1.0])
    assert fit.predict(missing).isna().tolist() == [True, False, False]


def test_summary_and_repr_show_the_family(frame):
    fit = dp_glm("y ~ x1 + x2", frame, eps=1.0, method="dpgd", random_state=9)
    text, html = str(fit.summary()), fit._repr_html_()
    assert "GLM (family=binomial)" in text and "GLM (family=binomial)" in html
    assert "dpgd" in text and "gaussian (GDP)" in text and "seeded" in text.lower()
    assert "family=binomial" in repr(fit)
    assert fit.tidy().term.tolist() == ["Intercept", "x1", "x2"]


def test_ptr_failure_is_an_ordinary_result():
    df = _frame(3000, seed=10)
    fit = dp_glm("y ~ x1 + x2", df, eps=0.1, method="tukey", m=40, random_state=11)
    assert not fit.released and fit.params.isna().all()
    assert fit.unreleased_reason == "ptr_failed" and any("PTR failed" in n for n in fit.notes)
    assert np.isnan(fit.score(df)) and fit.predict(df.head(3)).isna().all()
    assert fit.spent == pytest.approx((0.1, 1e-5))
    assert "PTR failed" in str(fit.summary())


# -- validation: errors name the fix, nothing is charged ----------------------------------------
@pytest.mark.parametrize("change, kwargs, err, word", [
    ({"y": "text"}, {}, DataError, "ambiguous"),
    ({"y": "cat3"}, {}, DataError, "exactly two"),
    ({}, {"family": "poisson"}, UnknownMethodError, "family"),
    ({}, {"method": "ols"}, UnknownMethodError, "method"),
    ({}, {"method": "dpgd", "epochs": 0}, ValidationError, "epochs"),
    ({}, {"method": "dpgd", "learning_rate": 1.0}, ValidationError, "learning_rate"),
    ({}, {"method": "tukey", "ridge": -1.0}, ValidationError, "ridge"),
    ({}, {"method": "tukey", "eps_extra": 1}, ValidationError,
     "is not an option of method='tukey'"),
    ({}, {"method": "dpgd", "loss": "squared"}, ValidationError, "set by dp_glm"),
    ({}, {"eps": 0.0}, ValidationError, "eps"),
    ({}, {"m": 0}, ValidationError, "m must be"),
    ({}, {"bounds": "private"}, ValidationError, "bounds"),
    ({}, {"bounds": {"x": {"x1": (0, 1)}, "y": "auto"}, "method": "dpgd"}, ValidationError,
     "gives no"),
    ({}, {"split": {"n": 0.5}}, ValidationError, "sum"),
    ({}, {"budget": "lots"}, ValidationError, "budget"),
])
def test_validation_errors_charge_nothing(frame, change, kwargs, err, word):
    df = frame.head(500).copy()
    if change.get("y") == "three":
        df["y"] = df.y + (np.arange(500) % 7 == 0)
    elif change.get("y") == "text":
        df["y"] = np.where(df.y == 1, "a", "b")
    elif change.get("y") == "cat3":
        df["y"] = pd.Categorical(np.where(df.y == 1, "a", "b"), categories=["a", "b", "c"])
    b = dp.Budget(10.0, 1e-3)
    args = {"eps": 1.0, "method": "dpgd", **kwargs}
    if "budget" not in kwargs:
        args["budget"] = b
    with pytest.raises(err, match=word):
        dp_glm("y ~ x1 + x2", df, **args)
    assert b.spent == (0.0, 0.0) and len(b.ledger) == 0


def test_budget_too_small_is_refused_before_the_data(frame):
    b = dp.Budget(0.5, 1e-5)
    with pytest.raises(dp.BudgetExceededError):
        dp_glm("y ~ x1 + x2", frame, eps=1.0, method="dpgd", budget=b)
    assert b.spent == (0.0, 0.0)


# -- helpers ------------------------------------------------------------------------------------
def test_indicator_bounds_come_from_the_coding_not_the_data(mixed):
    from dpstats.formula.design import build_design
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = build_design("y ~ x + h + C(g, contr.sum) + h:x", mixed)
    keep = list(range(len(d.columns)))
    got = {d.columns[j]: r for j, r in _indicator_bounds(d.spec, d.columns, keep).items()}
    assert got["h[T.v]"] == (0.0, 1.0) and got["h[T.w]"] == (0.0, 1.0)
    assert all(got[c] == (-1.0, 1.0) for c in d.columns if c.startswith("C(g"))
    assert "x" not in got and "Intercept" not in got and not any(":x" in c for c in got)


def test_choose_m_glm_and_too_few_models():
    assert choose_m_glm(None, 3, 1.0, 1e-5) == 0
    assert choose_m_glm(90_000, 3, 1.0, 1e-5) >= 90_000 // (15 * 3)
    est = tukey_glm(np.ones((10, 1)), np.ones(10), eps=1.0, delta=1e-5,
                    rng=np.random.default_rng(0), m=3)
    assert not est.released and est.withheld == "too_few_models"


def test_public_per_column_bounds_follow_the_selection():
    rng = np.random.default_rng(12)
    n = 20000
    df = pd.DataFrame(rng.uniform(-1, 1, size=(n, 4)), columns=["a", "b", "c", "d"])
    df["y"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-2 * df.b))).astype(int)
    bounds = {"x": {c: (-1.0, 1.0) for c in "abcd"}, "y": "auto"}
    fit = dp_glm("y ~ .", df, eps=3.0, method="dpgd", k=2, bounds=bounds, random_state=13)
    assert len(fit.selected) == 2 and fit.spent == pytest.approx((3.0, 1e-5))
    assert "regression: bounds" not in set(fit.ledger.stage)      # public: nothing charged
    assert fit.clip is not None and np.isinf(fit.clip[0][0])       # intercept unbounded
    sel = [fit.params.index.get_loc(c) for c in fit.selected]
    assert (fit.clip[0][sel] == -1.0).all() and (fit.clip[1][sel] == 1.0).all()


def test_dpgd_predictions_clip_to_the_released_box(frame):
    fit = dp_glm("y ~ x1 + x2", frame, eps=2.0, method="dpgd", bounds=(-1, 1), random_state=14)
    far = pd.DataFrame({"x1": [1.0, 50.0], "x2": [-1.0, -50.0]})
    link = fit.predict(far, type="link")
    assert link.iloc[0] == pytest.approx(link.iloc[1])


# -- rows against the columns fitted after selection (the same check as dp_lm) ----------------
def _wide(n=30, p=60, seed=21):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, p)), columns=[f"g{j}" for j in range(p)])
    df["y"] = (df.g3 - df.g7 + 0.5 * rng.normal(size=n) > 0).astype(int)
    return df


@pytest.mark.parametrize("method", ["dpgd", "tukey"])
def test_more_columns_than_rows_fits_when_selection_leaves_few(method):
    """30 rows x 60 columns with select="kendall", k=2: the regression fits 3 columns, so
    dp_glm fits (as dp_lm does) instead of refusing n < p before the selection."""
    df = _wide()
    b = dp.Budget(10.0, 1e-3)
    fit = dp_glm("y ~ .", df, eps=2.0, method=method, select="kendall", k=2, budget=b,
                 random_state=22)
    lm_fit = dp.dp_lm("y ~ .", df, eps=2.0, select="kendall", k=2, method="tukey",
                      random_state=22)
    assert isinstance(fit, DPGLMResult) and fit.selector == "kendall"
    assert len(fit.selected) == 2 == len(lm_fit.selected)
    assert set(fit.params.index) == set(df.columns) - {"y"} | {"Intercept"}
    assert (fit.params.drop(["Intercept", *fit.selected]) == 0).all() or not fit.released
    assert "selection" in set(fit.ledger.stage) and 0 < b.spent[0] <= 2.0 + 1e-12
    if method == "tukey":            # 30 rows give too few models: withheld, not refused
        assert not fit.released and fit.unreleased_reason == "too_few_models"


@pytest.mark.parametrize("fit", [functools.partial(dp_glm, method="fw"),
                                 functools.partial(dp.dp_lm, method="tukey")],
                         ids=["dp_glm", "dp_lm"])
def test_k_too_large_for_the_rows_is_an_ordinary_result(fit):
    """Fewer rows than the columns after selection used to be refused, which read n exactly
    (issue 14, leak 7); now the fit runs and the mechanisms decide."""
    b = dp.Budget(10.0, 1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)        # notes from released bounds
        res = fit("y ~ .", _wide(), eps=2.0, select="kendall", k=40, budget=b, random_state=0)
    assert len(res.selected) == 40 and 0 < b.spent[0] <= 2.0 + 1e-12
    assert not res.released or np.isfinite(res.params).all()
