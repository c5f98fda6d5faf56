"""dp_lm passes method options to the estimator, checks them before charging, and refuses
options it sets itself."""

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import ValidationError

F = "y ~ x1 + x2"


@pytest.fixture(scope="module")
def df():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(4000, 2))
    return pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": 1 + X @ [2.0, -1.0]
                         + rng.normal(size=4000)})


def _details(fit):
    return " ".join(c.detail for c in fit.charges)


@pytest.mark.parametrize("method, opts, text", [
    ("bas", {"T": 7}, "7 rounds of X'r"),
    ("dpgd", {"epochs": 13, "clip": 2.0}, "13 releases of the squared-loss gradient sum"),
    ("dpgd", {"epochs": 13, "clip": 2.0}, "clipped to L2 norm 2"),
    ("fw", {"radius": 3.0}, "L1 radius 3"),
])
def test_options_reach_the_estimator(df, method, opts, text):
    fit = dp.dp_lm(F, df, eps=2.0, method=method, random_state=0, **opts)
    assert text in _details(fit)


def test_fw_screening_option_adds_a_release(df):
    plain = dp.dp_lm(F, df, eps=2.0, method="fw", random_state=0, T=50)
    screened = dp.dp_lm(F, df, eps=2.0, method="fw", random_state=0, T=50, screen="last")
    assert "screening" not in _details(plain)
    assert "screening" in _details(screened)


def test_tukey_centre_none_changes_the_ledger(df):
    auto = dp.dp_lm(F, df, eps=2.0, method="tukey", random_state=0)
    raw = dp.dp_lm(F, df, eps=2.0, method="tukey", random_state=0, centre=None)
    assert "centre" in _details(auto).lower()
    assert "centre" not in _details(raw).lower()


@pytest.mark.parametrize("method, opts, needle", [
    ("bas", {"T": 0}, "T (boosting rounds)"),
    ("bas", {"lr": 0.1}, "`lr` is not an option of method='bas'"),
    ("bas", {"variant": "fast"}, "variant"),
    ("dpgd", {"epochs": -1}, "epochs"),
    ("dpgd", {"lr": "big"}, "lr"),
    ("fw", {"screen": "sometimes"}, "screen"),
    ("fw", {"T": 2.5}, "T must be an integer"),
    ("fw", {"q": 0.7}, "q must be"),
    ("adassp", {"rho": 2.0}, "rho"),
    ("adassp", {"bounds_method": "guess"}, "bounds_method"),
    ("tukey", {"centre": "mean"}, "centre"),
    ("tukey", {"centre": np.zeros(3)}, "centre='auto' or None"),
    ("tukey", {"T": 5}, "is not an option of method='tukey'"),
    ("tukey", {"fitter": None}, "set by dp_lm itself"),
    ("bas", {"loss": "logistic"}, "set by dp_lm itself"),
    ("ols", {"T": 3}, "takes no options"),
])
def test_bad_options_raise_before_charging(df, method, opts, needle):
    budget = dp.Budget(5.0, 1e-4)
    with pytest.raises(ValidationError) as err:
        dp.dp_lm(F, df, eps=1.0, method=method, budget=budget, **opts)
    assert needle in str(err.value)
    assert budget.spent == (0.0, 0.0)


def test_glm_still_checks_options():
    rng = np.random.default_rng(0)
    d = pd.DataFrame({"x": rng.normal(size=500)})
    d["y"] = (d.x > 0).astype(int)
    with pytest.raises(ValidationError, match="screen"):
        dp.dp_glm("y ~ x", d, eps=1.0, method="fw", screen="sometimes")
