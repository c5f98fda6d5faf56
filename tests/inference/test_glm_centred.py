"""dp_glm objective perturbation's intervals are centred at the coefficients minus the
bootstrap's estimated bias (dpstats.estimators.inference.glm.centred_covariance).

What is checked: the centre and standard error reproduce the basic bootstrap interval of the
draws; in a seeded simulation (public bounds, one steep slope, so that the ridge's shrinkage is
about one standard error) the released interval's centre is unbiased for the slope (mean z
near 0) and covers, where the old construction (symmetric about the coefficient, widened to
hold the bias: the broken variant) is a standard error off centre and wider; the result's
``conf_int``, ``tvalues`` and predictions use that centre; methods without a bias estimate keep
intervals symmetric about ``params``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.estimators import objpert
from dpstats.estimators.inference import glm as inf_glm
from dpstats.estimators.inference.mixture import exact_covariance

Z = 1.959963984540054


def test_centre_and_se_reproduce_the_basic_interval():
    rng = np.random.default_rng(0)
    D = np.c_[rng.gamma(2.0, size=20_000) - 3.0, rng.normal(size=20_000)]
    cov, bias = inf_glm.centred_covariance(D)
    lo, hi = np.quantile(D, [0.025, 0.975], axis=0)
    se = np.sqrt(np.diag(cov))
    assert np.allclose(bias - Z * se, lo) and np.allclose(bias + Z * se, hi)
    assert abs(cov[0, 1] / (se[0] * se[1])) < 0.05          # correlations from the draws


def _old(monkeypatch):
    """The construction before: symmetric about the coefficient, 95% quantile of |D|."""
    monkeypatch.setattr(inf_glm, "exact_covariance",
                        lambda b, c, M, s, centred: exact_covariance(b, c, M, s, False))


def _slope_z(reps: int) -> tuple[np.ndarray, np.ndarray]:
    """z of the slope about the interval's centre, and the interval widths."""
    z, width = [], []
    for r in range(reps):
        rng = np.random.default_rng(500 + r)
        X = np.c_[np.ones(12_000), rng.normal(size=12_000)]
        y = (rng.uniform(size=12_000) < 1 / (1 + np.exp(-2.0 * X[:, 1]))).astype(float)
        est = objpert.estimate(X, y, eps=1.0, delta=1e-5, rng=np.random.default_rng(r),
                               bounds=(-3, 3), intercept_col=0)
        se = np.sqrt(est.inference.cov[1, 1])
        if np.isfinite(se):
            bias = 0.0 if est.inference.bias is None else est.inference.bias[1]
            z.append((est.params[1] - bias - 2.0) / se)
            width.append(2 * Z * se)
    assert len(z) >= 0.8 * reps
    return np.array(z), np.array(width)


@pytest.mark.parametrize("broken", [False, True])
def test_intervals_are_centred_on_the_debiased_slope(broken, monkeypatch):
    """A slope of 2 on standard normal covariates clipped at 3 sd: the ridge shrinks the
    released slope by about a standard error. The centred interval's z has mean near 0 and
    covers; the old interval's centre (the coefficient) is off by more than half a standard
    error (it covered only by being wider)."""
    if broken:
        _old(monkeypatch)
    z, width = _slope_z(40 if broken else 120)      # 120: the mean's se 0.09 (40: 0.19)
    if broken:
        assert z.mean() < -0.5
    else:
        assert abs(z.mean()) < 0.35
        assert np.mean(np.abs(z) <= Z) >= 0.85
        _old(monkeypatch)
        assert np.median(width) < 0.9 * np.median(_slope_z(10)[1])


def _logistic_frame(n: int = 20_000) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    x = rng.normal(size=n)
    return pd.DataFrame({"x": x, "y": (rng.uniform(size=n) < 1 / (1 + np.exp(0.5 - x)))
                         .astype(float)})


def test_result_intervals_tests_and_predictions_use_the_centre():
    df = _logistic_frame()
    fit = dp.dp_glm("y ~ x", df, eps=1.0, select=None, random_state=1)
    bias = fit.inference.bias
    assert bias is not None and np.isfinite(fit.bse).all()
    centre = fit.params - bias
    ci = fit.conf_int()
    assert np.allclose((ci["lower"] + ci["upper"]) / 2, centre)
    assert np.allclose(fit.tvalues, centre / fit.bse)
    new = df.iloc[:4]
    pred = fit.get_prediction(new)
    X = np.c_[np.ones(4), new["x"]]
    assert np.allclose(pred.predicted_mean, X @ fit.params.to_numpy())   # point unchanged
    pci = pred.conf_int()
    assert np.allclose((pci["lower"] + pci["upper"]) / 2, X @ centre.to_numpy())
    assert "centred at coef minus the estimated bias" in str(fit.summary())


def test_methods_without_a_bias_estimate_stay_symmetric():
    # (BAS never estimates a bias; DP-GD can, with inference.dpgd.CENTRE switched on)
    rng = np.random.default_rng(3)
    x = rng.normal(size=20_000)
    df = pd.DataFrame({"x": x, "y": 0.5 + x + rng.normal(size=x.size)})
    fit = dp.dp_lm("y ~ x", df, eps=2.0, method="bas", select=None, random_state=1)
    assert fit.inference.bias is None and np.isfinite(fit.bse).all()
    ci = fit.conf_int()
    assert np.allclose((ci["lower"] + ci["upper"]) / 2, fit.params, equal_nan=True)


@pytest.mark.parametrize("corrected", [True, False])
def test_the_corrected_estimate_has_the_unpenalised_spread(corrected):
    """Quadratic loss, one known information ``C``, ridge ``r``, objective noise ``s``: the
    bias-corrected estimate ``(I + r C^-1) theta_r`` has error ``C^-1 (score + b)``, covariance
    ``C^-1 + s^2 C^-2`` (what the centred intervals need); the ridge minimiser's own
    covariance (the old spread, ``corrected=False``) is narrower by the shrinkage."""
    C = np.array([[50.0, 10.0], [10.0, 20.0]])
    r, s = 4.0, 3.0
    _, cov = inf_glm._ridge_model(C[None], r, np.array([1.0, 2.0]),
                                  lambda H: s**2 * (H @ H), corrected=corrected)
    Ci = np.linalg.inv(C)
    exact = np.allclose(cov[0], Ci + s**2 * Ci @ Ci)
    assert exact == corrected
    if not corrected:
        assert (np.diag(cov[0]) < np.diag(Ci + s**2 * Ci @ Ci)).all()


def _plausible(K: int, wild: float) -> np.ndarray:
    """``K`` plausible 2x2 informations around the identity (a deterministic spread); with
    ``wild`` > 0 one of them is near-singular (``wild`` its smallest eigenvalue)."""
    t = np.linspace(-1.0, 1.0, K)
    Cs = np.eye(2)[None] * (1.0 + 0.1 * t)[:, None, None]
    Cs[:, 0, 1] = Cs[:, 1, 0] = 0.05 * t
    if wild:
        Cs[0] = np.diag([1.0, wild])
    return Cs


def test_an_unstable_plug_in_keeps_the_symmetric_interval():
    """A near-singular plausible information pulls the plug-ins' mean (the bootstrap's bias
    correction) far from their median: such a fit must not be centred there (the wild
    intervals of eps 0.5); a smooth spread of informations is centred."""
    theta = np.array([0.5, 2.0])
    assert inf_glm.plugin_stable(_plausible(200, 0.0), 0.05, theta)
    assert not inf_glm.plugin_stable(_plausible(200, 1e-3), 0.05, theta)


@pytest.mark.parametrize("wild", [0.0, 1e-3])
def test_glm_inference_centres_only_a_stable_plug_in(wild, monkeypatch):
    """Through :func:`glm_inference`: the plausible informations are those above; the
    released ``bias`` (the interval's centre) is given only when the plug-in is stable."""
    Cs = _plausible(inf_glm.CURVATURE_DRAWS, wild)
    monkeypatch.setattr(inf_glm, "plausible_curvatures", lambda C, s, seed=0: (Cs, 1.0))
    inf = inf_glm.glm_inference(
        "objpert", C_rel=np.eye(2), sigma_c=0.01, theta=np.array([0.5, 2.0]), ridge=0.05,
        noise={"s": 0.01, "sigma_out": 0.0}, M=np.eye(2), icol=0, threshold=0.0,
        n_hat=20_000.0, eps=1.0, share=0.1, share_of="eps")
    assert (inf.bias is None) == (wild > 0)
    assert ("unstable" in inf.method) == (wild > 0)


@pytest.mark.parametrize("wild", [0.0, 1e-3])
def test_a_cut_tails_fit_is_centred_at_the_estimated_move(wild, monkeypatch):
    """A fit whose cut tail's move enters (``tail`` given) is centred like any other where the
    plug-in is stable, its centre moved by the tail's mean move ``mean_k C_k^-1 g_k`` (the
    rule before kept every such fit symmetric about ``params``, over-covering the skewed
    cell's slopes, 0.976-0.991); an unstable plug-in still keeps the symmetric interval."""
    Cs = _plausible(inf_glm.CURVATURE_DRAWS, wild)
    monkeypatch.setattr(inf_glm, "plausible_curvatures", lambda C, s, seed=0: (Cs, 1.0))
    kw = dict(C_rel=np.eye(2), sigma_c=0.01, theta=np.array([0.5, 2.0]), ridge=0.05,
              noise={"s": 0.01, "sigma_out": 0.0}, M=np.eye(2), icol=0, threshold=0.0,
              n_hat=20_000.0, eps=1.0, share=0.1, share_of="eps")
    g = np.array([[0.03, -0.02]])
    with_tail = inf_glm.glm_inference("objpert", **kw, tail=g)
    assert (with_tail.bias is None) == (wild > 0)
    if wild:
        return
    without = inf_glm.glm_inference("objpert", **kw)
    move = np.linalg.solve(Cs, np.broadcast_to(g, (len(Cs), 2))[..., None])[..., 0].mean(0)
    assert np.allclose(with_tail.bias - without.bias, move, rtol=0.1, atol=1e-4)
    assert "basic bootstrap" in with_tail.method
