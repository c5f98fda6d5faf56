"""DP-GD (full-batch, Gaussian DP composition): accuracy at large eps, ledger, sensitivity,
bounds handling and option validation (nothing charged on bad options)."""

import math

import numpy as np
import pytest
import statsmodels.api as sm

from dpstats.errors import ValidationError
from dpstats.estimators import METHODS, get_estimator
from dpstats.estimators.dpgd import DEFAULT_EPOCHS, OPTIONS, _gradient_sum, estimate
from dpstats.mechanisms.accountant import Ledger
from dpstats.mechanisms.gdp import gdp_delta, gdp_mu
from dpstats.validation import validate_options


def _logistic(n=20000, seed=0):
    rng = np.random.default_rng(seed)
    X = np.c_[np.ones(n), rng.normal(2, 3, n), rng.uniform(0, 10, n)]
    eta = -1.0 + 0.5 * X[:, 1] - 0.2 * X[:, 2]
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(float)
    return X, y


def _linear(n=20000, seed=1):
    rng = np.random.default_rng(seed)
    X = np.c_[np.ones(n), rng.normal(2, 3, n), rng.uniform(0, 10, n)]
    return X, 1.0 + 2.0 * X[:, 1] - X[:, 2] + rng.normal(size=n)


PUBLIC = {"x": [(-13.0, 17.0), (0.0, 10.0)], "y": (-40.0, 40.0)}


def test_registered_under_dpgd():
    if "dpgd" not in METHODS:
        pytest.skip("dpgd is not in the estimator registry yet")
    assert get_estimator("dpgd") is estimate


def test_large_eps_logistic_approaches_statsmodels_logit():
    X, y = _logistic()
    ref = sm.Logit(y, X).fit(disp=0).params
    est = estimate(X, y, eps=1e4, delta=1e-5, rng=np.random.default_rng(0), loss="logistic",
                   bounds={"x": PUBLIC["x"], "y": "auto"}, intercept_col=0, epochs=1500,
                   lr=12.0, n_noisy=len(y))
    assert est.released and est.ptr is None
    np.testing.assert_allclose(est.params, ref, atol=0.03)


def test_large_eps_squared_approaches_statsmodels_ols():
    X, y = _linear()
    ref = sm.OLS(y, X).fit().params
    est = estimate(X, y, eps=1e4, delta=1e-5, rng=np.random.default_rng(1), loss="squared",
                   bounds=PUBLIC, intercept_col=0, epochs=1000, lr=2.0, n_noisy=len(y))
    np.testing.assert_allclose(est.params, ref, atol=0.05)


def test_private_bounds_default_is_reasonable_at_moderate_eps():
    X, y = _logistic(40000, seed=3)
    est = estimate(X, y, eps=2.0, delta=1e-5, rng=np.random.default_rng(2), loss="logistic",
                   intercept_col=0)
    assert est.details["bounds"] == "private" and est.details["epochs"] == DEFAULT_EPOCHS
    acc = np.mean((X @ est.params > 0) == (y == 1))
    ref = np.mean((X @ sm.Logit(y, X).fit(disp=0).params > 0) == (y == 1))
    assert acc > ref - 0.03


def test_ledger_totals_and_charges():
    X, y = _logistic(5000)
    led = Ledger(1.0, 1e-5)
    est = estimate(X, y, eps=1.0, delta=1e-5, rng=np.random.default_rng(0), ledger=led,
                   loss="logistic", intercept_col=0, epochs=20)
    assert led.spent == pytest.approx((1.0, 1e-5))
    mechs = [c.mechanism for c in led.charges]
    # default "hist" bounds: one composed GDP charge (bounds + gradients) and a row count
    assert sorted(mechs) == ["gaussian (GDP)", "laplace"]
    gdp = next(c for c in led.charges if c.mechanism == "gaussian (GDP)")
    assert gdp.eps == pytest.approx(est.details["eps_gd"]) and gdp.delta == 1e-5
    assert est.details["eps_bounds"] == 0.0 and est.details["eps_n"] == 0.05
    assert est.details["bounds"] == "private"
    mu = gdp_mu(est.details["eps_gd"], 1e-5)
    assert est.details["mu"] == pytest.approx(mu)
    # the gradients get 80% of mu^2, less the inference parts' share (5%)
    assert est.details["sigma"] == pytest.approx(1.0 * math.sqrt(20) / (mu * math.sqrt(
        0.8 * 0.95)))
    assert gdp_delta(mu, est.details["eps_gd"]) <= 1e-5


def test_quantile_bounds_charge_one_release_per_column():
    X, y = _logistic(5000)
    led = Ledger(1.0, 1e-5)
    est = estimate(X, y, eps=1.0, delta=1e-5, rng=np.random.default_rng(0), ledger=led,
                   loss="logistic", intercept_col=0, epochs=20, bounds_method="quantile")
    assert led.spent == pytest.approx((1.0, 1e-5))
    mechs = [c.mechanism for c in led.charges]
    assert sorted(mechs) == ["exponential", "exponential", "gaussian (GDP)", "laplace"]
    assert est.details["eps_bounds"] == pytest.approx(0.2)
    mu = gdp_mu(est.details["eps_gd"], 1e-5)
    # all of mu^2 but the inference parts' share (5%)
    assert est.details["sigma"] == pytest.approx(1.0 * math.sqrt(20) / (mu * math.sqrt(0.95)))


def test_public_bounds_and_passed_count_charge_only_the_gradients():
    X, y = _linear(3000)
    led = Ledger(1.0, 1e-5)
    est = estimate(X, y, eps=1.0, delta=1e-5, rng=np.random.default_rng(0), ledger=led,
                   loss="squared", bounds=PUBLIC, intercept_col=0, n_noisy=2990.0, epochs=5)
    assert [c.mechanism for c in led.charges] == ["gaussian (GDP)"]
    assert led.spent == pytest.approx((1.0, 1e-5))
    assert est.details["bounds"] == "public" and est.details["n_noisy"] == 2990.0


def test_known_bounds_cost_nothing_and_mix_with_private():
    rng = np.random.default_rng(4)
    n = 4000
    X = np.c_[np.ones(n), rng.integers(0, 2, n), rng.normal(size=n)]
    y = (rng.uniform(size=n) < 0.5).astype(float)
    led = Ledger()
    est = estimate(X, y, eps=1.0, delta=1e-5, rng=rng, ledger=led, loss="logistic",
                   intercept_col=0, known_x_bounds={1: (0.0, 1.0)}, epochs=5, n_noisy=4000.0)
    assert [c.mechanism for c in led.charges] == ["gaussian (GDP)"]
    assert est.details["bounds"] == "mixed"
    assert est.clip[0][1] == 0.0 and est.clip[1][1] == 1.0
    led = Ledger()
    est = estimate(X, y, eps=1.0, delta=1e-5, rng=rng, ledger=led, loss="logistic",
                   intercept_col=0, known_x_bounds={1: (0.0, 1.0)}, epochs=5, n_noisy=4000.0,
                   bounds_method="quantile")
    assert sorted(c.mechanism for c in led.charges) == ["exponential", "gaussian (GDP)"]
    assert any("x[2]" in c.detail for c in led.charges if c.mechanism == "exponential")
    assert est.details["bounds"] == "mixed"


def test_all_zero_column_is_dropped_with_coefficient_zero():
    X, y = _logistic(5000)
    X = np.c_[X, np.zeros(len(y))]
    est = estimate(X, y, eps=5.0, delta=1e-5, rng=np.random.default_rng(0), loss="logistic",
                   intercept_col=0, epochs=10)
    assert est.dropped == (3,) and est.params[3] == 0.0
    assert np.isfinite(est.params).all()


def test_without_intercept_uses_symmetric_maps():
    rng = np.random.default_rng(5)
    X = rng.uniform(-2, 2, size=(20000, 2))
    y = 3.0 * X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=20000)
    est = estimate(X, y, eps=1e4, delta=1e-5, rng=rng, loss="squared",
                   bounds={"x": (-2.0, 2.0), "y": (-9.0, 9.0)}, epochs=2000, n_noisy=20000.0)
    np.testing.assert_allclose(est.params, [3.0, -1.0], atol=0.05)


def test_clipped_gradient_sum_has_sensitivity_clip():
    rng = np.random.default_rng(6)
    U = rng.uniform(-1, 1, size=(200, 4)) / 2.0
    y = rng.normal(0, 5, size=200)
    theta = rng.normal(0, 3, size=4)
    for clip in (0.1, 1.0, 7.0):
        full = _gradient_sum(U, y, theta, "squared", clip)
        for i in range(0, 200, 37):
            keep = np.arange(200) != i
            less = _gradient_sum(U[keep], y[keep], theta, "squared", clip)
            assert np.linalg.norm(full - less) <= clip * (1 + 1e-12)


def test_same_seed_same_result_different_seed_different():
    X, y = _logistic(3000)
    kw = dict(eps=1.0, delta=1e-5, loss="logistic", intercept_col=0, epochs=10)
    a = estimate(X, y, rng=np.random.default_rng(9), **kw).params
    b = estimate(X, y, rng=np.random.default_rng(9), **kw).params
    c = estimate(X, y, rng=np.random.default_rng(10), **kw).params
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("opts, word", [
    ({"loss": "hinge"}, "loss"), ({"lr": 0.0}, "lr"), ({"lr": float("nan")}, "lr"),
    ({"clip": -1.0}, "clip"), ({"epochs": 0}, "epochs"), ({"epochs": 2.5}, "epochs"),
    ({"epochs": True}, "epochs"), ({"bounds_share": 1.0}, "bounds_share"),
    ({"bounds_q": 0.0}, "bounds_q"), ({"bounds": "private"}, "bounds"),
])
def test_bad_options_raise_before_any_charge(opts, word):
    X, y = _logistic(500)
    led = Ledger()
    kw = {"loss": "logistic", **opts}
    with pytest.raises(ValidationError, match=word):
        estimate(X, y, eps=1.0, delta=1e-5, rng=np.random.default_rng(0), ledger=led,
                 intercept_col=0, **kw)
    assert len(led) == 0


def test_logistic_label_must_be_binary():
    X, y = _linear(500)
    led = Ledger()
    with pytest.raises(ValidationError, match="0/1"):
        estimate(X, y, eps=1.0, delta=1e-5, rng=np.random.default_rng(0), ledger=led,
                 loss="logistic", intercept_col=0)
    assert len(led) == 0


def test_check_options_defaults():
    assert validate_options(OPTIONS, {}, fixed={"loss": "squared"}) == {
        "lr": 1.0, "clip": 1.0, "epochs": DEFAULT_EPOCHS, "bounds_share": 0.2,
        "bounds_method": "hist", "bounds_q": 0.02, "inference_share": 0.05}
    assert validate_options(OPTIONS, {"lr": 0.5}, fixed={"loss": "logistic"})["lr"] == 0.5


def test_released_clipping_box():
    X, y = _logistic(3000)
    X = np.c_[X, np.zeros(len(y))]
    est = estimate(X, y, eps=2.0, delta=1e-5, rng=np.random.default_rng(0), loss="logistic",
                   bounds={"x": [(-13.0, 17.0), (0.0, 10.0), (-1.0, 1.0)], "y": "auto"},
                   intercept_col=0, epochs=5, n_noisy=3000.0)
    assert est.clip[0].tolist() == [-np.inf, -13.0, 0.0, -1.0]    # intercept: none
    assert est.clip[1].tolist() == [np.inf, 17.0, 10.0, 1.0]
    auto = estimate(X, y, eps=2.0, delta=1e-5, rng=np.random.default_rng(0), loss="logistic",
                    intercept_col=0, epochs=5, n_noisy=3000.0)
    assert auto.dropped == (3,) and np.isinf(auto.clip[0][[0, 3]]).all()


def test_default_bounds_keep_coefficients_on_scale_at_moderate_n():
    """n=3000, eps=1: with per-column quantile bounds some fits came back at 1e9-1e17 (a bound
    landing at 2**49); histogram bounds inside the GDP plan keep every fit near the truth."""
    rng = np.random.default_rng(0)
    X = np.c_[np.ones(3000), rng.normal(size=(3000, 6))]
    y = X[:, 1:].sum(axis=1) + rng.normal(size=3000)
    for seed in range(4):
        est = estimate(X, y, eps=1.0, delta=1e-5, rng=np.random.default_rng(seed),
                       loss="squared", intercept_col=0)
        assert est.released and np.abs(est.params - np.r_[0.0, np.ones(6)]).max() < 1.0
