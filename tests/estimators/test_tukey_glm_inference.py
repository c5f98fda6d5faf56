"""The logistic Tukey mechanism's intervals (estimators/inference/tukey_glm.py) and its groups'
median bias reduction (estimators/tukey/glm_bias.py): the adjusted score against its closed form,
the bias it removes, what a fit shows and charges, the noise-aware critical value and the gates."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import logit

import dpstats as dp
from dpstats.errors import ValidationError
from dpstats.estimators.inference import tukey_glm as tg
from dpstats.estimators.tukey import glm as tglm
from dpstats.estimators.tukey.glm import choose_m_glm
from dpstats.estimators.tukey.glm_bias import median_bias_reduce, resolve_bias
from dpstats.mechanisms.weighted_moments import weighted_sensitivity


def test_median_bias_reduction_matches_the_binomial_closed_form():
    """One column (the intercept), k successes of n: the median-bias-reduced score
    ``k - n mu + (1 - 2 mu) / 6`` has root ``logit((k + 1/6) / (n + 1/3))`` (Kenne Pagui et al.
    2017); Firth's mean-bias reduction would give ``(k + 1/2) / (n + 1)``, the MLE ``k / n``."""
    n, k = 12, 3
    X = np.ones((n, 1))
    y = np.r_[np.ones(k), np.zeros(n - k)]
    b = median_bias_reduce(X, y, np.zeros(n, dtype=np.int64), 1, np.array([[logit(k / n)]]),
                           steps=30)
    assert b[0, 0] == pytest.approx(logit((k + 1 / 6) / (n + 1 / 3)), abs=1e-8)
    assert abs(b[0, 0] - logit((k + 0.5) / (n + 1))) > 0.05
    assert abs(b[0, 0] - logit(k / n)) > 0.03


def test_median_bias_reduction_centres_small_group_fits():
    """Groups of 40 rows, 3 columns: each MLE coordinate is median-biased away from 0; after
    the reduction about half of the group fits fall on each side of the truth."""
    from dpstats._kernels.logistic import group_logistic
    g = np.random.default_rng(3)
    m, ng = 1500, 40
    X = np.c_[np.ones(m * ng), g.normal(size=(m * ng, 2))]
    beta = np.array([-0.5, 1.0, -0.7])
    y = (g.uniform(size=m * ng) < 1 / (1 + np.exp(-X @ beta))).astype(float)
    labels = np.repeat(np.arange(m), ng)
    mle = group_logistic(X, y, labels, m, 1e-6)
    mbr = median_bias_reduce(X, y, labels, m, mle)
    below_mle, below_mbr = (mle < beta).mean(0), (mbr < beta).mean(0)
    assert np.abs(below_mle[1:] - 0.5).min() > 0.04          # the bias is there
    assert np.abs(below_mbr - 0.5).max() < 0.035              # and removed


def test_bias_option():
    assert resolve_bias("auto", True) == "median" and resolve_bias("auto", False) == "none"
    with pytest.raises(ValidationError, match="bias"):
        resolve_bias("mean", True)


@pytest.mark.parametrize("v", [0.0, 0.03, 0.08])
def test_noise_aware_quantile_covers(v):
    """``Z / e^L`` with ``L ~ N(0, v)`` is inside +-c(v) 95% of the time; 1.96 under-covers."""
    g = np.random.default_rng(7)
    t = g.normal(size=400_000) / np.exp(np.sqrt(v) * g.normal(size=400_000))
    c = tg.noise_aware_quantile(v)
    assert np.mean(np.abs(t) <= c) == pytest.approx(0.95, abs=0.002)
    if v > 0.02:
        assert np.mean(np.abs(t) <= 1.959964) < 0.945


def test_plan_gates_and_dask():
    assert tg.plan_glm_inference(0.08, 0.95, 1666, 6, "off", False, 1e5).eps > 0
    assert "release gate" in tg.plan_glm_inference(0.08, 0.95, 1111, 6, "off", False, 1e5).reason
    assert "rows per column" in tg.plan_glm_inference(0.08, 0.95, 3000, 6, "off", False,
                                                      1e5).reason
    dask = tg.plan_glm_inference(0.08, 0.95, 1666, 6, "off", True, 1e5)
    assert dask == tg.plan_glm_inference(0.08, 0.95, 1666, 6, "off", False, 1e5)
    assert tg.plan_glm_inference(0.0, 0.95, 1666, 6, "off", False, 1e5).reason is None
    # m="auto" rises to the gate when groups can keep 10 rows per column
    assert choose_m_glm(100_000, 6, 0.95, 1e-5) * 0.95 / 6 >= 250
    assert 100_000 / (choose_m_glm(100_000, 6, 0.95, 1e-5) * 6) >= tg.GLM_ROWS_PER_COLUMN


def test_choose_m_keeps_the_medians_residual_bias_in_bounds():
    """Between the gate and twice the gate m stops where the median's residual bias reaches
    BIAS_TARGET of its sd (n = 2e5, p = 6: 2,609 models; the old rule took 3,158, a shift of
    0.53 sd measured, design note 64); it never drops below the gate, and the 15 rows per
    column of large n are capped too (1e6: 7,631 instead of 11,111)."""
    def shift(n, m, p):     # BIAS_SLOPE sqrt(m) / (rows per column)
        return tglm.BIAS_SLOPE * np.sqrt(m) * m * p / n
    for n in (1e5, 1.5e5, 2e5, 3e5, 1e6):
        m = choose_m_glm(n, 6, 0.95, 1e-5)
        assert shift(n, m, 6) <= tglm.BIAS_TARGET + 1e-9, n
        assert m * 0.95 / 6 >= 250 and n / (m * 6) >= tg.GLM_ROWS_PER_COLUMN
    assert choose_m_glm(200_000, 6, 0.95, 1e-5) == 2609
    assert choose_m_glm(1e6, 6, 0.95, 1e-5) == 7631
    # the gate wins over the bias (fewer models would withhold the intervals)
    assert choose_m_glm(200_000, 6, 0.475, 1e-5) == math.ceil(250 * 6 / 0.475)     # the gate
    assert choose_m_glm(100_000, 6, 3.8, 1e-5) == 100_000 // 90       # 15 rows per column
    ms = [choose_m_glm(n, 6, 0.95, 1e-5) for n in np.linspace(1e5, 1e6, 40)]
    assert all(np.diff(ms) >= 0)


def test_choose_m_bias_bound_grows_with_the_columns():
    """The residual median bias's slope grows about as p^(1/3) (simulated means 0.077, 0.101,
    0.121 at 3, 6 and 11 columns, design note 67), so m_bias falls as p^(-8/9): at p = 11,
    n = 1e6 m is 4,452 (the p-free slope took 5,094, a shift of 0.49 sd); wherever the gate
    allows, the bound holds."""
    from dpstats.estimators.inference.tukey_bias import BIAS_TARGET, glm_median_bias
    for p in (3, 6, 11, 21):
        gate = math.ceil(250 * p / 0.95)
        for n in np.geomspace(1e5, 3e6, 15):
            m = choose_m_glm(n, p, 0.95, 1e-5)
            if n / (tg.GLM_ROWS_PER_COLUMN * p) < gate:
                continue                                # no intervals at any m
            assert m >= gate - 1, (p, n)
            assert m <= gate or glm_median_bias(n, m, p) <= BIAS_TARGET + 1e-6, (p, n)
    assert choose_m_glm(1e6, 11, 0.95, 1e-5) == 4452
    assert glm_median_bias(1e6, 5094, 11) > 0.48
    assert choose_m_glm(200_000, 6, 0.95, 1e-5) == 2609         # p = 6: unchanged


def test_bias_beyond_the_cap_widens_the_critical_value():
    """Where the gate forces m above m_bias (n = 2e5, eps 0.475: 3,158 models, a shift of
    0.53 sd) the excess over BIAS_TARGET enters the critical value, which then covers a
    worst-case bias at 95%; at the chosen m of the cap it is 0 (the critical value as before)."""
    from scipy.special import ndtr

    from dpstats.estimators.inference.tukey_bias import critical_value
    for n, eps in ((1e5, 0.95), (2e5, 0.95), (1e6, 0.95)):
        assert tg.bias_excess(n, choose_m_glm(n, 6, eps, 1e-5), 6, 2.1) < 1e-3
    m = choose_m_glm(2e5, 6, 0.475, 1e-5)
    r = tg.bias_excess(2e5, m, 6, 2.4)
    assert 0.1 < r < 0.12
    c = critical_value(r, 0.0)
    assert ndtr(c - r) - ndtr(-c - r) == pytest.approx(0.95, abs=1e-9)
    assert c > critical_value(0.0, 0.0) + 0.005


def test_fit_above_the_bias_cap_says_so_and_widens(monkeypatch):
    """A fit whose m is above the bias cap (here: the slope made 20x larger) gets wider
    intervals by the critical value's bias allowance and its summary says why."""
    from dpstats.estimators.inference import tukey_bias as tb
    df, _ = _frame(20_000)
    kw = dict(eps=4.0, method="tukey", m=600, select=None, random_state=4)
    base = dp.dp_glm("y ~ x1 + x2", df, **kw)
    assert "residual median bias" not in str(base.summary())
    monkeypatch.setattr(tb, "BIAS_SLOPE", 2.0)
    wide = dp.dp_glm("y ~ x1 + x2", df, **kw)
    assert np.allclose(wide.params, base.params)
    ratio = (wide.bse / base.bse).to_numpy()
    assert np.all(ratio > 1.4), ratio
    assert "residual median bias" in str(wide.summary())


def _frame(n, seed=0):
    g = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": g.normal(size=n), "x2": g.exponential(size=n)})
    eta = -0.4 + 0.8 * df.x1 - 0.5 * (df.x2 - 1)
    df["y"] = (g.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(int)
    return df, np.array([-0.4 + 0.5, 0.8, -0.5])


def test_fit_releases_intervals_with_summary_columns_and_charges():
    df, truth = _frame(20_000)
    fit = dp.dp_glm("y ~ x1 + x2", df, eps=4.0, method="tukey", select=None, random_state=1)
    assert fit.released and np.isfinite(fit.bse).all()
    ci = fit.conf_int()
    assert list(ci.index) == list(fit.params.index) and ci.shape == (3, 2)
    assert np.all(np.abs(fit.params.to_numpy() - truth) < 5 * fit.bse.to_numpy())
    text = str(fit.summary())
    for col in ("std err", "P>|z|", "[0.025", "0.975]", "Tukey (logistic)", "Kenne Pagui"):
        assert col in text
    assert fit.tidy()[["std_error", "conf_low", "conf_high"]].notna().all().all()
    led = fit.ledger
    inf = led[led.stage == "inference"]
    moments = inf[inf.detail.str.contains("weighted design moments")]
    assert len(moments) == 1
    assert f"L1 sensitivity {weighted_sensitivity(2):.4g}" in moments.detail.iloc[0]
    reg = led[led.stage.isin(["regression", "inference"])].eps.sum()
    assert inf.eps.sum() == pytest.approx(tg.TUKEY_GLM_INFERENCE_SHARE * reg)


def test_gated_fits_say_why_and_take_nothing():
    df, _ = _frame(5_000)
    fit = dp.dp_glm("y ~ x1 + x2", df, eps=1.0, method="tukey", select=None, random_state=2)
    assert fit.bse.isna().all()
    assert "intervals not released" in str(fit.summary())
    assert (fit.ledger.stage != "inference").all()
    df, _ = _frame(20_000)
    fit = dp.dp_glm("y ~ x1 + x2", df, eps=4.0, method="tukey", m=1500, select=None,
                    random_state=2)
    assert fit.bse.isna().all() and "rows per column" in str(fit.summary())


def test_auto_never_picks_tukey():
    df, _ = _frame(100_000)
    fit = dp.dp_glm("y ~ x1 + x2", df, eps=1.0, select=None, random_state=3)
    assert fit.method != "tukey"
