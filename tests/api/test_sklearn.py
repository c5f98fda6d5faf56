"""The scikit-learn estimators of :mod:`dpstats.sklearn` (issue 18 item 4)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.model_selection import cross_val_score  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder  # noqa: E402

import dpstats as dp  # noqa: E402
from dpstats.errors import BudgetExceededError, PredictionError  # noqa: E402
from dpstats.sklearn import (  # noqa: E402
    DPLinearRegression,
    DPLogisticRegression,
    expected_failed_checks,
)

NUMERIC = ["age", "education_num", "hours_per_week"]


@pytest.fixture(scope="module")
def california():
    df = dp.datasets.load("california")
    return df.drop(columns="median_house_value"), df["median_house_value"]


@pytest.fixture(scope="module")
def adult():
    df = dp.datasets.load("adult")
    return df[NUMERIC + ["sex"]], df["income"]


# ---- regression -------------------------------------------------------------------------------

def test_regressor_fit_predict_score_on_a_frame(california):
    X, y = california
    est = DPLinearRegression(eps=1.0, random_state=0).fit(X, y)
    assert est.result_.released and isinstance(est.result_, dp.DPLMResult)
    assert est.n_features_in_ == 8 and list(est.feature_names_in_) == list(X.columns)
    assert est.coef_.shape == (8,) and np.isfinite(est.intercept_)
    pred = est.predict(X)
    assert pred.shape == (len(X),) and np.isfinite(pred).all()
    np.testing.assert_allclose(pred, est.result_.predict(X).to_numpy())
    assert 0.3 < est.score(X, y) < 1.0


def test_the_ledger_is_the_results_ledger(california):
    X, y = california
    est = DPLinearRegression(eps=0.5, random_state=1).fit(X, y)
    pd.testing.assert_frame_equal(est.ledger_, est.result_.ledger)
    assert est.result_.spent[0] == pytest.approx(0.5)


def test_an_array_gets_names_x0_to_xp(california):
    X, y = california
    est = DPLinearRegression(eps=1.0, random_state=0, select=None).fit(X.to_numpy()[:, :3], y)
    assert not hasattr(est, "feature_names_in_") and est.n_features_in_ == 3
    assert list(est.result_.params.index) == ["Intercept", "x0", "x1", "x2"]


def test_same_random_state_same_fit_and_method_options(california):
    X, y = california
    kw = dict(eps=1.0, method="bas", bounds="auto", random_state=3, method_options={"T": 3})
    a, b = DPLinearRegression(**kw).fit(X, y), DPLinearRegression(**kw).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.result_.method == "bas"


def test_a_withheld_fit_warns_and_predicts_nan():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 4)), rng.normal(size=30)
    with pytest.warns(UserWarning, match="nothing was released"):
        est = DPLinearRegression(random_state=0).fit(X, y)
    assert np.isnan(est.predict(X)).all() and np.isnan(est.score(X, y))


# ---- classification ---------------------------------------------------------------------------

def test_classifier_with_declared_classes(adult):
    X, y = adult
    est = DPLogisticRegression(eps=1.0, random_state=0, classes=("<=50K", ">50K")).fit(X, y)
    assert est.result_.released and isinstance(est.result_, dp.DPGLMResult)
    assert list(est.classes_) == ["<=50K", ">50K"]
    proba = est.predict_proba(X.head(50))
    assert proba.shape == (50, 2) and np.allclose(proba.sum(axis=1), 1.0)
    assert set(est.predict(X)) <= {"<=50K", ">50K"}
    assert est.score(X, y) > 0.7
    assert "sex[T.Male]" in est.result_.params.index     # the categorical column went through


def test_classifier_classes_from_bool_or_01_only(adult):
    X, y = adult
    y01 = (y == ">50K").to_numpy()
    est = DPLogisticRegression(eps=1.0, random_state=0).fit(X[NUMERIC], y01)
    assert list(est.classes_) == [False, True] and est.predict(X[NUMERIC]).dtype == bool
    est = DPLogisticRegression(eps=1.0, random_state=0).fit(X[NUMERIC], y01.astype(int))
    assert list(est.classes_) == [0, 1]
    with pytest.raises(ValueError, match="classes=") as err:
        DPLogisticRegression().fit(X[NUMERIC], y.astype(str))
    assert "not learned from the data" in str(err.value)
    with pytest.raises(ValueError, match="two distinct labels"):
        DPLogisticRegression(classes=("a", "a")).fit(X[NUMERIC], y)


def test_classifier_predict_refuses_a_withheld_fit():
    X = np.zeros((4, 2))
    with pytest.warns(UserWarning, match="nothing was released"):
        est = DPLogisticRegression(method="tukey", random_state=0).fit(X, [0, 1, 0, 1])
    with pytest.raises(PredictionError, match="nothing was released"):
        est.predict(X)
    assert np.isnan(est.score(X, [0, 1, 0, 1])) and np.isnan(est.predict_proba(X)).all()


# ---- scikit-learn conventions -----------------------------------------------------------------

def test_get_set_params_and_clone_share_the_budget():
    budget = dp.Budget(3.0, 1e-4)
    est = DPLinearRegression(eps=0.5, budget=budget, method_options={"m": 50})
    assert est.get_params()["eps"] == 0.5 and est.get_params()["budget"] is budget
    assert est.set_params(k=3, method="adassp") is est and est.k == 3
    copy = clone(est)
    assert copy.budget is budget, "a copied Budget would not be charged"
    assert copy.get_params()["method_options"] == {"m": 50}
    assert copy.method_options is not est.method_options
    assert not hasattr(copy, "result_")


def test_a_shared_budget_is_charged_by_every_fit_and_refuses_the_last(california):
    X, y = california
    budget = dp.Budget(2.0, 3e-5)
    est = DPLinearRegression(eps=1.0, budget=budget, random_state=0)
    scores = cross_val_score(est, X, y, cv=2)       # two clones, both charge the budget
    assert np.isfinite(scores).all()
    assert budget.spent[0] == pytest.approx(2.0)
    with pytest.raises(BudgetExceededError):
        clone(est).fit(X, y)


def test_pipeline_with_public_transforms(adult):
    X, y = adult
    pre = ColumnTransformer([
        ("num", FunctionTransformer(lambda a: (a - 40.0) / 10.0), NUMERIC),   # public constants
        ("sex", OneHotEncoder(categories=[["Female", "Male"]], drop="first"), ["sex"])])
    pipe = Pipeline([("pre", pre), ("clf", DPLogisticRegression(
        eps=1.0, random_state=0, classes=("<=50K", ">50K")))]).fit(X, y)
    assert pipe.named_steps["clf"].n_features_in_ == 4
    assert pipe.score(X, y) > 0.7
    assert clone(pipe).get_params()["clf__eps"] == 1.0


def test_import_dpstats_does_not_import_sklearn():
    code = "import sys, dpstats; dpstats.dp_lm; print('sklearn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_without_scikit_learn_the_import_error_says_what_to_install():
    code = ("import sys; sys.modules['sklearn'] = None\n"
            "try:\n    import dpstats.sklearn\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install dpstats[sklearn]" in out.stdout


# ---- check_estimator --------------------------------------------------------------------------

CONFIGS = [DPLinearRegression(), DPLogisticRegression(),
           # released on the checks' small data sets (public bounds, large eps)
           DPLinearRegression(eps=50.0, method="adassp", select=None, bounds=(-100, 100)),
           DPLogisticRegression(eps=50.0, select=None, bounds=(-100, 100))]


@pytest.mark.parametrize("est", CONFIGS, ids=lambda e: repr(e))
def test_check_estimator_with_the_documented_skips(est):
    from sklearn.utils.estimator_checks import check_estimator
    expected = expected_failed_checks(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(est, expected_failed_checks=expected, on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert failed == []
    xfailed = {r["check_name"] for r in results if r["status"] == "xfail"}
    assert xfailed <= set(expected)


def test_every_skip_has_a_reason_in_the_module_docstring():
    import dpstats.api.sklearn as mod
    for est in (DPLinearRegression(), DPLogisticRegression()):
        for name, reason in expected_failed_checks(est).items():
            assert reason and f"``{name}``" in mod.__doc__
