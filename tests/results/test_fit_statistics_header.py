"""The summary header's private fit statistics (statsmodels' lines, marked private) and the
covariance type, for AdaSSP / Boosted AdaSSP fits with and without released intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpstats as dp


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(8)
    n = 20_000
    df = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    df["y"] = 1 + df.a - df.b + rng.normal(size=n) * (0.5 + np.abs(df.a))
    return df


def _facts(fit) -> dict:
    return dict(fit.summary().facts)


@pytest.mark.parametrize("cov_type, shown", [("nonrobust", "nonrobust"),
                                             ("HC1", "HC1 (private sandwich)")])
def test_header_has_fit_statistics_and_cov_type(data, cov_type, shown):
    fit = dp.dp_lm("y ~ .", data, eps=1.0, delta=1e-5, method="bas", select=None,
                   random_state=1, cov_type=cov_type)
    facts = _facts(fit)
    assert facts["Covariance type:"] == shown
    r2 = float(facts["R-squared (private):"])
    assert 0.0 <= float(facts["Adj. R-squared (private):"]) <= r2 <= 1.0
    assert float(facts["Resid. std. err. (private):"]) > 0
    text = fit.summary().as_text()
    assert "R-squared (private):" in text and "Covariance type:" in text
    assert "R-squared (private)" in fit.summary().as_html()


def test_gated_fit_keeps_fit_statistics_but_no_cov_type(data):
    fit = dp.dp_lm("y ~ .", data.iloc[:2000], eps=1.0, delta=1e-5, method="bas", select=None,
                   random_state=2)
    facts = _facts(fit)
    assert fit.bse.isna().all() and facts["Std. errors:"] == "none (see notes)"
    assert "Covariance type:" not in facts
    assert 0.0 <= float(facts["R-squared (private):"]) <= 1.0


def test_methods_without_inference_have_no_fit_statistics(data):
    fit = dp.dp_lm("y ~ .", data, eps=1.0, delta=1e-5, method="fw", select=None,
                   random_state=3)
    assert "R-squared (private):" not in _facts(fit)
