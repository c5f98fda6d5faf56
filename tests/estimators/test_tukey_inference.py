"""Standard errors of the Tukey-depth mechanism (estimators/inference/tukey.py,
mechanisms/model_spread.py): the window counts, the simulated noise factor and its
equivariance claim, the budget plan and gate, and what a fit shows."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats._kernels.depth import max_depth
from dpstats.estimators.inference import gate
from dpstats.estimators.inference import tukey as tinf
from dpstats.mechanisms.accountant import Ledger
from dpstats.mechanisms.model_spread import (
    GAUSSIAN_MEDIAN,
    count_sensitivity,
    tukey_noise_factor,
    window_counts,
)
from dpstats.mechanisms.ptr import ptr_parameters
from dpstats.mechanisms.tukey_em import restricted_tukey_em


def test_window_counts_count_and_charge():
    D = np.array([[0.1, 3.0], [-0.5, 0.2], [2.0, -0.1], [0.0, 0.0]])
    led = Ledger()
    n = window_counts(D, np.array([0.6, 0.5]), 1e9, np.random.default_rng(0), led,
                      stage="inference")
    assert np.allclose(n, [3.0, 3.0], atol=1e-3)
    (charge,) = led.charges
    assert charge.stage == "inference" and charge.eps == 1e9
    assert "L1 sensitivity 2" in charge.detail and count_sensitivity(2) == 2.0


def test_window_counts_noise_scale_is_p_over_eps():
    D = np.zeros((50, 4))
    draws = np.array([window_counts(D, np.ones(4), 2.0, np.random.default_rng(s))
                      for s in range(400)])
    # Laplace(p / eps = 2): mean absolute deviation 2
    assert abs(np.mean(np.abs(draws - 50.0)) - 2.0) < 0.3


def test_noise_factor_deterministic_and_ordered():
    a = tukey_noise_factor(1500, 4, 0.3)
    assert a == tukey_noise_factor(1500, 4, 0.3)
    assert tukey_noise_factor(1500, 4, 0.1) > a > tukey_noise_factor(1500, 4, 3.0)
    assert abs(tukey_noise_factor(1500, 4, 50.0) - GAUSSIAN_MEDIAN) < 0.1


@pytest.mark.parametrize("shape", ["anisotropic", "correlated"])
def test_noise_factor_holds_for_non_spherical_clouds(shape):
    """The mechanism sees each coordinate's sorted values only, so the spherical simulation's
    f predicts m * Var(point_j) / sigma_j^2 for scaled and correlated clouds too."""
    m, p, eps = 800, 3, 0.9
    prm = ptr_parameters(eps, 1e-5)
    scales = np.array([1.0, 30.0, 0.01])
    C = np.eye(p) if shape == "anisotropic" else np.full((p, p), 0.85) + 0.15 * np.eye(p)
    L = np.linalg.cholesky(C) * scales[:, None]
    rng = np.random.default_rng(3)
    out = []
    for _ in range(300):
        B = rng.standard_normal((m, p)) @ L.T
        pt = restricted_tukey_em(np.sort(B, axis=0), max_depth(m) // 2, prm.eps_em, rng)
        out.append(pt / scales)
    ratio = m * np.mean(np.square(out)) / tukey_noise_factor(m, p, prm.multiplier)
    assert 0.8 < ratio < 1.25, ratio


def test_plan_reasons_and_gate():
    assert tinf.plan_inference(0.0, 1.0, 5555, 6, "off", False).eps == 0.0
    assert tinf.plan_inference(0.05, 1.0, 5555, 6, "off", True) == \
        tinf.plan_inference(0.05, 1.0, 5555, 6, "off", False)          # dask: the same plan
    assert "identify='votes'" in tinf.plan_inference(0.05, 1.0, 5555, 6, "votes", False).reason
    assert tinf.plan_inference(0.05, 1.0, 5555, 6, "regroup", False).eps == pytest.approx(0.05)
    low = tinf.plan_inference(0.05, 0.5, 1000, 11, "off", False)
    assert low.eps == 0.0 and low.reason.startswith("intervals not released")
    assert f"{gate.TUKEY_THRESHOLD:,.0f}" in low.reason
    ok = tinf.plan_inference(0.05, 1.0, 5555, 6, "off", False)
    assert ok.eps == pytest.approx(0.05) and ok.reason is None


def _data(n, seed=0, p=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    df["y"] = 1.0 + X @ (0.5 + np.arange(p)) + rng.normal(size=n)
    return df


def test_fit_releases_standard_errors_from_the_inference_stage():
    df = _data(30_000)
    # m fixed at 3 rows per model per column (the regime the inference stage was calibrated in;
    # m="auto" now takes fewer, larger groups: design note on Tukey's misspecification bias)
    res = dp.dp_lm("y ~ x0 + x1", df, eps=1.0, method="tukey", random_state=1, m=30_000 // 9)
    assert res.released and np.isfinite(res.bse).all()
    inf_eps = sum(c.eps for c in res.charges if c.stage == "inference")
    reg_eps = sum(c.eps for c in res.charges if c.stage in ("regression", "inference"))
    assert inf_eps == pytest.approx(tinf.TUKEY_INFERENCE_SHARE * reg_eps)
    # within a factor 3 of the OLS standard errors (sampling dominates at this n)
    X = np.c_[np.ones(len(df)), df[["x0", "x1"]].to_numpy()]
    ols = np.sqrt(np.diag(np.linalg.inv(X.T @ X)))
    ratio = res.bse.to_numpy() / ols
    assert ((ratio > 1.0) & (ratio < 3.0)).all(), ratio
    text = str(res.summary())
    assert "Tukey: spread of group models" in text and "window counts" in text
    assert np.isfinite(res.cov_params().to_numpy()).all()  # correlations released
    assert res.inference.sigma == pytest.approx(1.0, rel=0.2)


def test_share_zero_gated_and_factor_fits_have_reasons():
    df = _data(30_000)
    none = dp.dp_lm("y ~ x0 + x1", df, eps=1.0, method="tukey", random_state=1,
                    inference_share=0.0)
    assert none.released and np.isnan(none.bse).all()
    assert not any(c.stage == "inference" for c in none.charges)
    assert "inference_share=0" in none.inference.reason
    gated = dp.dp_lm("y ~ x0 + x1", df, eps=1.0, method="tukey", m=700, random_state=1)
    assert gated.released and np.isnan(gated.bse).all()
    assert "release gate" in gated.inference.reason
    assert not any(c.stage == "inference" for c in gated.charges)
    df["g"] = np.where(np.arange(len(df)) % 3 == 0, "a", "b")
    fac = dp.dp_lm("y ~ x0 + g", df, eps=1.0, method="tukey", random_state=1, identify="votes")
    if fac.released:
        assert np.isnan(fac.bse).all() and "identify='votes'" in fac.inference.reason


def test_windows_near_the_models_spread():
    """The public windows land within a factor 3 of the group models' actual median absolute
    deviation (so the counts are informative), for slopes and the reported intercept."""
    rng = np.random.default_rng(4)
    n, m = 60_000, 3000
    X = np.c_[np.ones(n), rng.normal(5.0, 2.0, n), rng.exponential(1.0, n)]
    y = X @ np.array([1.0, 0.3, -2.0]) + rng.standard_t(5, n)
    from dpstats.estimators.tukey.linear import fit_models
    B = fit_models(X, y, m, rng)
    mad = np.median(np.abs(B - np.median(B, axis=0)), axis=0)
    scale = np.r_[1.0, np.median(np.abs(X[:, 1:] - np.median(X[:, 1:], axis=0)), axis=0)]
    theta = np.median(B, axis=0)
    resid = float(np.median(np.abs(y - X @ theta)))
    c = np.r_[0.0, np.median(X[:, 1:], axis=0)]
    w = tinf.windows(scale, resid, c, 0, float(n), m)
    assert ((w / mad > 1 / 3) & (w / mad < 3)).all(), w / mad
    assert math.isfinite(float(w.sum()))


@pytest.mark.parametrize("r", [0.0, 0.8, 2.25, 5.0])
def test_bias_aware_quantile_covers_a_shifted_normal(r):
    """The symmetric interval with half-width ``bias_aware_quantile(r)`` covers ``N(+-r, 1)``
    95% of the time (Monte Carlo, 40,000 draws: sd 0.0011); the old rule (1.96 + r, the sum of
    the half-widths) over-covers once r > 0, and 1.96 alone under-covers: both caught."""
    rng = np.random.default_rng(16)
    e = rng.normal(size=40_000) + r * np.where(rng.random(40_000) < 0.5, 1.0, -1.0)
    cv = tinf.bias_aware_quantile(r)
    assert abs(np.mean(np.abs(e) <= cv) - 0.95) < 0.005
    if r > 0.5:
        assert np.mean(np.abs(e) <= 1.96 + r) > 0.965
        assert np.mean(np.abs(e) <= 1.96) < 0.93
    assert tinf.bias_aware_quantile(r) <= 1.96 + r + 1e-12


def test_small_group_bias_uses_the_bias_aware_value():
    """At p = 1 and n/m = 6 (1.7% of groups with fewer rows than columns) the shift is about
    2.3 median standard errors; the standard error is ``sqrt(f/m) cv(r) / 1.96`` sigma, below
    the old ``sqrt(f/m) + b / 1.96`` and above the unbiased ``sqrt(f/m)``."""
    m, f = 16_636, 1.59
    b = tinf.median_shift(tinf.deficient_share(100_000, m, 2))
    base = math.sqrt(f / m)
    new = base * tinf.bias_aware_quantile(b / base) / 1.959964
    assert base * 1.9 < new < base + b / 1.959964
    assert 2.0 < b / base < 2.6
