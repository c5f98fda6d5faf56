"""Covariances of the Tukey point (estimators/inference/tukey_cov.py,
mechanisms/design_moments.py): the design-moment release, the models' correlations, the
correlation of coordinate-wise medians, the map to the reported intercept, and a fit's
``cov_params`` and ``get_prediction``."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.estimators.inference import tukey as tinf
from dpstats.estimators.inference.tukey_cov import (
    intercept_map,
    median_correlation,
    model_correlation,
    reported_covariance,
)
from dpstats.estimators.tukey.linear import fit_models
from dpstats.mechanisms.accountant import Ledger
from dpstats.mechanisms.design_moments import design_moments, moments_sensitivity


def test_design_moments_exact_clipped_and_charged():
    X = np.array([[0.0, 10.0], [2.0, -1.0], [1.0, 0.5]])
    led = Ledger()
    S1, S2 = design_moments(X, np.array([1.0, 0.0]), np.ones(2), 1e9, np.random.default_rng(0),
                            led, bound=3.0, stage="inference")
    U = np.clip(X - [1.0, 0.0], -3.0, 3.0)            # the 10 is clipped to 3
    # exact sums of the rows on a grid of 2^-20 of the bound (dpstats._kernels.row_sums)
    np.testing.assert_allclose(S1, U.sum(axis=0), atol=1e-5)
    np.testing.assert_allclose(S2, U.T @ U, atol=1e-4)
    (charge,) = led.charges
    assert charge.stage == "inference" and charge.eps == 1e9
    assert moments_sensitivity(2, 3.0) == 2 * 3.0 + 3 * 9.0


def test_design_moments_noise_scale():
    """Laplace scale = L1 sensitivity / eps (sd sqrt(2) scale): a release with the first
    moments' sensitivity only would be 6x too quiet here."""
    X = np.zeros((5, 2))
    draws = np.array([design_moments(X, np.zeros(2), np.ones(2), 1.0,
                                     np.random.default_rng(s), bound=1.0)[0][0]
                      for s in range(800)])
    assert np.std(draws) == pytest.approx(math.sqrt(2) * 5.0, rel=0.12)


def _groups(n=90_000, m=3000, skew=True, seed=3):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 1))
    a = rng.exponential(1.0, n) - 1.0 if skew else rng.normal(size=n)
    X = np.c_[np.ones(n), a, 0.6 * z[:, 0] + 0.8 * rng.normal(size=n)]
    X[:, 2] += 0.5 * X[:, 1]
    y = X @ np.array([1.0, 0.5, -1.0]) + rng.normal(size=n)
    c = np.r_[0.0, np.median(X[:, 1:], axis=0)]
    B = fit_models(X, y, m, rng)
    B[:, 0] += B @ c                                  # the mechanism's coordinates
    return X, c, B


def test_model_correlation_matches_the_group_models():
    """corr(M^-1) from exact design moments is the group models' correlation (prediction at
    the median centre and slopes, skewed and correlated columns), within 0.06."""
    X, c, B = _groups()
    s = np.r_[1.0, np.median(np.abs(X[:, 1:] - c[1:]), axis=0)]
    S1, S2 = design_moments(X[:, 1:], c[1:], s[1:], 1e12, np.random.default_rng(0), bound=50.0)
    R = model_correlation(S1, S2, X.shape[0], 0, 3)
    emp = np.corrcoef(B.T)
    assert np.abs(R - emp).max() < 0.06, (R, emp)
    assert abs(emp[0, 1]) > 0.2            # the skewed column's median centre: correlated


def test_combination_of_medians_is_what_the_intercept_is():
    """The reported intercept is median(prediction at c) - c . median(slopes); with skewed
    columns its variance is A V A' with arcsin correlations (within 12% over 600 simulated
    clouds), and the old estimate (the median of the groups' reported intercepts, pi/2 times
    their variance) is more than 15% too small: the 0.920 coverage of the skewed cell."""
    rng = np.random.default_rng(5)
    R = np.array([[1.0, -0.45, 0.3], [-0.45, 1.0, 0.2], [0.3, 0.2, 1.0]])
    L = np.linalg.cholesky(R)
    c = np.array([0.0, -0.7, 0.4])
    A = intercept_map(c, 0, 3)
    m, reps = 1500, 600
    vals = []
    for _ in range(reps):
        B = rng.normal(size=(m, 3)) @ L.T
        vals.append(A[0] @ np.median(B, axis=0))
    var_true = np.var(vals) * m
    V = reported_covariance(np.ones(3), median_correlation(R, math.pi / 2), A) * math.pi / 2
    assert V[0, 0] == pytest.approx(var_true, rel=0.12)
    old = math.pi / 2 * float(A[0] @ R @ A[0])          # median of a_g - c . b_g
    assert old < 0.85 * var_true


def test_reported_covariance_is_psd_and_propagates_missing():
    rho = np.array([[1.0, 0.9, -0.5], [0.9, 1.0, -0.3], [-0.5, -0.3, 1.0]])
    C = median_correlation(rho, 1.9)
    assert np.linalg.eigvalsh(C).min() > 0
    V = reported_covariance(np.array([1.0, 2.0, np.nan]), C, intercept_map(np.r_[0, 1, 0.0], 0, 3))
    assert np.isfinite(V[:2, :2]).all() and np.isnan(V[2]).all() and np.isnan(V[:, 2]).all()
    V = reported_covariance(np.array([1.0, 2.0, np.nan]), C, intercept_map(np.r_[0, 1, 1.0], 0, 3))
    assert np.isnan(V[0, 0]) and np.isfinite(V[1, 1])   # the intercept uses the missing slope


def test_fit_releases_correlations_and_tighter_predictions():
    """A fit with x around 5: the released intercept-slope correlation is strongly negative
    (OLS: -5/sqrt(26) = -0.98) and the fitted mean at x = 5 has a standard error far below
    the worst-case bound sum |x_j| se_j that was used before correlations were released."""
    rng = np.random.default_rng(8)
    n = 60_000
    x = rng.normal(5.0, 1.0, n)
    df = pd.DataFrame({"x": x, "y": 2.0 + 0.5 * x + rng.normal(size=n)})
    fit = dp.dp_lm("y ~ x", df, eps=2.0, delta=1e-5, method="tukey", random_state=1)
    V = fit.cov_params().to_numpy()
    assert np.isfinite(V).all() and np.linalg.eigvalsh(V).min() > 0
    assert V[0, 1] / math.sqrt(V[0, 0] * V[1, 1]) < -0.9
    new = pd.DataFrame({"x": [0.0, 5.0, -3.0]})
    se = fit.get_prediction(new).se_mean.to_numpy()
    X = np.c_[np.ones(3), new["x"]]
    np.testing.assert_allclose(se, np.sqrt(np.einsum("ij,jk,ik->i", X, V, X)), rtol=1e-12)
    assert se[1] < 0.3 * (np.abs(X[1]) @ fit.bse.to_numpy())
    mom = [c for c in fit.charges if c.stage == "inference" and "design moments" in c.detail]
    inf_eps = sum(c.eps for c in fit.charges if c.stage == "inference")
    assert len(mom) == 1 and mom[0].eps == pytest.approx(tinf.COV_SHARE * inf_eps)


# ------------------------------------------------------------------ factor designs and the gate
def _factor_frame(n=60_000, share=0.3, seed=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    g = np.where(rng.random(n) < share, "b", "a")
    df = pd.DataFrame(X, columns=["x0", "x1"])
    df["g"] = g
    df["y"] = 1.0 + X @ np.array([0.5, 1.0]) + 2.0 * (g == "b") + rng.normal(size=n)
    return df


def test_factor_design_releases_intervals_for_identified_coefficients():
    """A binary factor (identify='regroup', the default with a factor): every coefficient,
    the dummy included, gets an interval and a correlation (before: all NaN)."""
    fit = dp.dp_lm("y ~ .", _factor_frame(), eps=2.0, method="tukey", random_state=4)
    assert fit.released and np.isfinite(fit.bse).all(), fit.inference.reason
    assert np.isfinite(fit.cov_params().to_numpy()).all()
    assert (np.abs(fit.params - [1.0, 0.5, 1.0, 2.0]) < 5 * fit.bse).all()


def test_groups_count_only_where_they_identify(monkeypatch):
    """The window counts leave out groups that do not identify a coordinate (their minimum-
    norm value is not a draw of that coefficient), and a coordinate where every group votes
    (too rarely identified: pulled towards 0) gets no interval."""
    seen = {}
    real = tinf.window_counts

    def spy(D, w, eps, rng, ledger=None, **kw):
        seen["D"] = D
        return real(D, w, eps, rng, ledger, **kw)
    monkeypatch.setattr(tinf, "window_counts", spy)
    rng = np.random.default_rng(0)
    n, m = 40_000, 2000
    X = np.c_[np.ones(n), rng.normal(size=n), rng.normal(size=n)]
    y = X @ np.array([1.0, 2.0, 3.0]) + rng.normal(size=n)
    models = fit_models(X, y, m, rng)
    ident = np.ones((m, 3), dtype=bool)
    ident[: m // 10, 2] = False
    plan = tinf.InferencePlan(0.065 * 50.0, 0.065)
    inf = tinf.tukey_inference(X, y, models, np.median(models, axis=0), None, 0, plan=plan,
                               n_hat=float(n), multiplier=1.0, monotone=False, rng=rng,
                               ledger=None, names=["Intercept", "x", "z"],
                               ident=(ident, np.array([True, True, False])))
    assert np.isinf(seen["D"][: m // 10, 2]).all() and np.isfinite(seen["D"][:, :2]).all()
    se = np.sqrt(np.diag(inf.cov))
    assert np.isfinite(se[:2]).all() and np.isnan(se[2])


def test_regroup_below_the_gate_forfeits_the_inference_share():
    """When the identification counts regroup into fewer groups than the gate needs, nothing
    is released, the reserved share counts as spent, and the reason says how many models."""
    led = Ledger()
    plan = tinf.InferencePlan(0.065, 0.065)              # planned for a passing m at eps 1
    X = np.c_[np.ones(50), np.arange(50.0)]
    inf = tinf.tukey_inference(X, X[:, 1], np.zeros((100, 2)), np.zeros(2), None, 0, plan=plan,
                               n_hat=50.0, multiplier=1.0, monotone=False,
                               rng=np.random.default_rng(0), ledger=led)
    assert np.isnan(inf.cov).all() and "release gate" in inf.method
    assert led.spent[0] == pytest.approx(0.065) and len(led.charges) == 1


def test_gate_reason_states_the_rows_needed():
    """p = 10 at n = 1e5: the reason gives the models and the rows (5 rows per column per
    group, the rule of m='auto') that would open the gate."""
    from dpstats.estimators.inference import gate
    from dpstats.estimators.tukey import choose_m
    assert gate.GATE_ROWS_PER_COLUMN == choose_m.GATE_ROWS_PER_COLUMN
    text = gate.tukey_gate_reason(303, 0.9, 11)
    need = math.ceil(gate.TUKEY_THRESHOLD * 11 / 0.9)
    assert f"{need:,} models" in text and f"{5 * 11 * need:,} rows" in text


def test_noise_guard_keeps_fully_identified_designs_whole():
    """Every coordinate identified by every group, released counts a little low by Laplace
    noise: no regroup (before: 97% of such fits regrouped into ~3x fewer groups); a level truly
    short of groups (a third identify it) still regroups."""
    from dpstats.estimators.tukey import identify
    m, p, eps = 3158, 6, 0.9
    scale = p / (identify.ID_SHARE * eps)
    low = np.full(p, m - 1.5 * scale)
    assert identify.regrouped_models(low, m, p, eps, 1e-5)[0] == m
    assert low[0] / m < 1 - math.exp(-identify.ROWS_PER_LEVEL)      # the old rule regrouped
    short = np.r_[np.full(p - 1, float(m)), m / 3]
    assert identify.regrouped_models(short, m, p, eps, 1e-5)[0] < m


@pytest.mark.parametrize("q_noise", [tinf.Q_NOISE, 0.0])
def test_counts_within_the_noise_of_zero_give_no_interval(monkeypatch, q_noise):
    """A window that holds ~no models (a missed private scale) plus Laplace noise above 5% of
    m gave standard errors ~1e-15; a count within Q_NOISE noise scales of 0 now gives none
    (with Q_NOISE = 0, the old rule, the tiny standard error is released: caught)."""
    monkeypatch.setattr(tinf, "Q_NOISE", q_noise)
    rng = np.random.default_rng(1)
    n, m = 40_000, 2000
    X = np.c_[np.ones(n), rng.normal(size=n)]
    y = X @ np.array([1.0, 2.0]) + rng.normal(size=n)
    models = fit_models(X, y, m, rng)
    plan = tinf.InferencePlan(0.065 * 0.5, 0.065)      # noise scale p / eps_counts ~ 100 models
    monkeypatch.setattr(tinf, "window_counts", lambda D, w, eps, rng, ledger=None, **kw:
                        np.array([0.5 * m, 0.06 * m]))
    inf = tinf.tukey_inference(X, y, models, np.median(models, axis=0), None, 0, plan=plan,
                               n_hat=float(n), multiplier=1.0, monotone=False, rng=rng,
                               ledger=None)
    se = np.sqrt(np.diag(inf.cov))
    assert np.isfinite(se[0])
    assert np.isnan(se[1]) == (q_noise > 0)
