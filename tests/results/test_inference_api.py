"""The inference API of results: bse, tvalues, pvalues, conf_int, cov_params, tidy, summary
columns, plot error bars, get_prediction; NaN for terms and fits without intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dpstats as dp
from dpstats.errors import ValidationError


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 20000
    df = pd.DataFrame(rng.normal(size=(n, 4)), columns=list("abcd"))
    df["y"] = 1 + 2 * df.a - df.b + rng.normal(size=n)
    return df


@pytest.fixture(scope="module")
def fit(data):
    return dp.dp_lm("y ~ .", data, eps=2.0, delta=1e-5, method="bas", select=None,
                 random_state=1)


def test_shapes_and_consistency(fit):
    idx = fit.params.index
    for s in (fit.bse, fit.tvalues, fit.pvalues):
        assert list(s.index) == list(idx) and np.isfinite(s).all()
    np.testing.assert_allclose(fit.tvalues, fit.params / fit.bse)
    np.testing.assert_allclose(fit.pvalues, 2 * stats.norm.sf(np.abs(fit.tvalues)))
    ci = fit.conf_int()
    assert list(ci.columns) == ["lower", "upper"] and list(ci.index) == list(idx)
    np.testing.assert_allclose(ci["upper"] - ci["lower"], 2 * 1.959964 * fit.bse, rtol=1e-5)
    assert (fit.conf_int(0.01)["upper"] > ci["upper"]).all()
    cov = fit.cov_params()
    np.testing.assert_allclose(np.sqrt(np.diag(cov)), fit.bse)
    assert np.isfinite(fit.inference.sigma) and fit.inference.sigma > 0


def test_ledger_has_the_inference_stage(fit):
    stages = list(fit.ledger["stage"])
    assert "inference" in stages and fit.spent[0] == pytest.approx(2.0)


@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5])
def test_bad_alpha(fit, alpha):
    with pytest.raises(ValidationError, match="alpha"):
        fit.conf_int(alpha)


def test_tidy_columns(fit):
    t = fit.tidy()
    assert list(t.columns) == ["term", "estimate", "std_error", "statistic", "p_value",
                               "conf_low", "conf_high", "selected", "selection_rank"]
    np.testing.assert_allclose(t["std_error"], fit.bse.to_numpy())
    np.testing.assert_allclose(t["conf_low"], fit.conf_int()["lower"].to_numpy())


def test_summary_has_the_statsmodels_columns(fit):
    text = fit.summary().as_text()
    for col in ("std err", "z", "P>|z|", "[0.025", "0.975]", "Std. errors:", "Resid. std. err.",
                "A 95% interval covers"):
        assert col in text, col
    assert "0.975]" in fit.summary().as_html()


def test_unselected_terms_have_no_interval(data):
    f = dp.dp_lm("y ~ .", data, eps=2.0, delta=1e-5, method="bas", select="sublasso", k=2,
                 random_state=2)
    unselected = [c for c in f.params.index if f.params[c] == 0]
    assert unselected and f.bse[unselected].isna().all()
    assert f.conf_int().loc[unselected].isna().all().all()
    kept = [c for c in f.params.index if c not in unselected]
    assert np.isfinite(f.bse[kept]).all()
    assert "conditional on the selected terms" in " ".join(f.summary().as_text().split())


def test_methods_without_inference_say_why(data):
    f = dp.dp_lm("y ~ .", data, eps=2.0, delta=1e-5, method="tukey", select=None,
                 random_state=3, inference_share=0.0)     # Tukey's own: test_tukey_inference
    assert f.released and f.bse.isna().all() and f.pvalues.isna().all()
    assert "No standard errors" in f.summary().as_text()
    assert f.get_prediction(data.head(2)).se_mean.isna().all()


def test_withheld_fit_has_nan_everything(data):
    small = data.head(40)
    f = dp.dp_lm("y ~ .", small, eps=0.1, delta=1e-5, method="tukey", random_state=4)
    assert not f.released
    assert f.bse.isna().all() and f.conf_int().isna().all().all()
    assert np.isnan(f.tidy()["p_value"]).all()


def test_inference_share_zero_gives_no_intervals(data):
    f = dp.dp_lm("y ~ .", data, eps=2.0, delta=1e-5, method="adassp", random_state=5,
                 select=None, inference_share=0.0)
    assert f.bse.isna().all() and "inference" not in list(f.ledger["stage"])


def test_get_prediction(fit, data):
    new = data.head(5)
    pr = fit.get_prediction(new)
    sf = pr.summary_frame()
    assert list(sf.columns) == ["mean", "mean_se", "mean_ci_lower", "mean_ci_upper"]
    np.testing.assert_allclose(sf["mean"], fit.predict(new))
    X = np.c_[np.ones(5), np.clip(new[list("abcd")].to_numpy(), fit.clip[0][1:],
                                  fit.clip[1][1:])]
    se = np.sqrt(np.einsum("ij,jk,ik->i", X, fit.cov_params().to_numpy(), X))
    np.testing.assert_allclose(sf["mean_se"], se)
    assert (sf["mean_ci_lower"] < sf["mean"]).all() and (sf["mean"] < sf["mean_ci_upper"]).all()


def test_plot_draws_interval_bars(fit):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    ax = fit.plot()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "95% interval" in labels
    import matplotlib.pyplot as plt
    plt.close("all")
