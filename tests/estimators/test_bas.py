"""Boosted AdaSSP and its Gaussian-DP accounting: the largest mu meeting delta (against direct
evaluation and a brute-force grid, and the reference code's defect), convergence to OLS, ledger
totals, noise checked against the derived sensitivities (broken variants must be caught),
private bounds on raw-scale data, and validation before any charge."""

import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from dpstats.errors import BudgetExceededError, ValidationError
from dpstats.estimators import bas, get_estimator
from dpstats.mechanisms import gdp
from dpstats.mechanisms import noise as _noise
from dpstats.mechanisms.accountant import Ledger
from dpstats.mechanisms.gdp import GaussianGDP, gdp_delta, gdp_mu

EPSILONS = [0.05, 0.5, math.log(3), 3.0, 10.0, 30.0]


def _direct_delta(mu, eps):
    return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


@pytest.mark.parametrize("mu,eps", [(0.3, 1.0), (1.0, 1.0), (2.0, 0.5), (5.0, 10.0)])
def test_gdp_delta_matches_direct_evaluation(mu, eps):
    assert gdp_delta(mu, eps) == pytest.approx(_direct_delta(mu, eps), rel=1e-9)


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("delta", [1e-5, 1e-8])
def test_mu_is_the_largest_meeting_delta(eps, delta):
    mu = gdp_mu(eps, delta)
    assert gdp_delta(mu, eps) <= delta < gdp_delta(mu * (1 + 1e-6), eps)
    if _direct_delta(mu, eps) > 1e-13:       # where the textbook formula is still accurate
        assert _direct_delta(mu, eps) <= delta * (1 + 1e-6)


@pytest.mark.parametrize("eps", EPSILONS)
def test_mu_matches_a_brute_force_grid(eps):
    grid = np.geomspace(1e-3, 50, 200_001)
    ok = grid[[gdp_delta(m, eps) <= 1e-5 for m in grid]]
    best = ok.max()
    step = grid[1] / grid[0]
    assert best <= gdp_mu(eps, 1e-5) <= best * step


def _reference_dp_to_gdp(eps, delta):
    """The reference code's conversion: the first grid value that VIOLATES delta."""
    mu = eps**2 / (2 * np.log(1.25 / delta))
    while True:
        if delta < _direct_delta(mu, eps):
            for m in np.linspace(mu / 2, mu, 1000):
                if delta < _direct_delta(m, eps):
                    return m
        mu *= 2


@pytest.mark.parametrize("eps", [1.0, 10.0, 30.0])
def test_reference_conversion_violates_delta_and_ours_does_not(eps):
    ref = _reference_dp_to_gdp(eps, 1e-5)
    assert _direct_delta(ref, eps) > 1e-5 >= gdp_delta(gdp_mu(eps, 1e-5), eps)
    assert gdp_mu(eps, 1e-5) < ref


def test_plan_charges_once_and_refuses_unpaid_releases():
    led = Ledger(1.0, 1e-5)
    plan = GaussianGDP(1.0, 1e-5, {"a": (2, 1.0), "b": (1, 3.0)}, np.random.default_rng(0), led)
    assert len(led) == 1 and led.spent == (1.0, 1e-5)
    assert math.hypot(math.sqrt(2) * plan.mu("a"), plan.mu("b")) == pytest.approx(plan.mu_total)
    m = plan.release("a", np.zeros((4, 4)), 1.0, symmetric=True)
    assert np.array_equal(m, m.T)
    plan.release("a", 0.0, 1.0)
    with pytest.raises(BudgetExceededError):
        plan.release("a", 0.0, 1.0)
    assert len(led) == 1


def _data(n=4000, seed=0, d=3, noise=0.05):
    rng = np.random.default_rng(seed)
    X = np.c_[np.ones(n), rng.uniform(-1, 1, size=(n, d))]
    beta = np.array([0.2, 0.5, -0.3, 0.4, 0.1][: d + 1])
    return X, X @ beta + noise * rng.normal(size=n)


def test_registry_finds_it():
    assert get_estimator("bas") is bas.estimate


@pytest.mark.parametrize("bounds", [(-2.0, 2.0), "auto"])
def test_scaled_large_eps_matches_statsmodels_ols(bounds):
    X, y = _data()
    ols = sm.OLS(y, X).fit().params
    est = bas.estimate(X, y, eps=1e7, delta=1e-5, rng=np.random.default_rng(1), intercept_col=0,
                       bounds=bounds)
    np.testing.assert_allclose(est.params, ols, atol=2e-3)


def test_paper_large_eps_matches_ols_on_norm_one_rows():
    X, y = _data(d=2)
    X = X / 2.0                          # rows of norm <= 1.5 / 2: no clipping
    ols = sm.OLS(y, X).fit().params
    est = bas.estimate(X, y, eps=1e7, delta=1e-5, rng=np.random.default_rng(2), intercept_col=0,
                       variant="paper", T=200)
    np.testing.assert_allclose(est.params, ols, atol=2e-3)
    assert est.details["bounds"] == "none" and est.clip is None


@pytest.mark.parametrize("kw,n_charges", [({"bounds": (-2.0, 2.0)}, 1 + 1), ({}, 1 + 1),
                                          ({"bounds_method": "quantile"}, 2 * 4 + 1 + 1),
                                          ({"variant": "paper"}, 1)])
def test_ledger_totals_equal_the_budget(kw, n_charges):
    X, y = _data()
    led = Ledger(0.8, 2e-6)
    bas.estimate(X, y, eps=0.8, delta=2e-6, rng=np.random.default_rng(3), ledger=led,
                 intercept_col=0, **kw)
    assert len(led) == n_charges
    assert math.isclose(led.spent[0], 0.8, rel_tol=1e-12)
    assert math.isclose(led.spent[1], 2e-6, rel_tol=1e-12)


#: The Gaussian-DP plan's eps of a fit at eps=0.9 (the inference stage takes its share first).
FIT_EPS = 0.9 * (1 - bas.INFERENCE_SHARE)


@pytest.fixture
def sigmas(monkeypatch):
    """Record the standard deviation of every Gaussian noise draw (the noise actually used)."""
    seen = []
    real = _noise.grid_gaussian

    def spy(value, l2_sensitivity, sigma, rng):
        seen.append(float(sigma))
        return real(value, l2_sensitivity, sigma, rng)

    monkeypatch.setattr(_noise, "grid_gaussian", spy)
    return seen


def _implied_mu(seen, k_bounded, T):
    """GDP parameter implied by the noise drawn, with sensitivities derived here: sqrt(k) for
    the histograms, 1 for the Gram matrix, the eigenvalue and every round."""
    assert len(seen) == 1 + 2 + T
    sens = [math.sqrt(k_bounded), 1.0, 1.0] + [1.0] * T
    return math.sqrt(sum((s / sig) ** 2 for s, sig in zip(sens, seen, strict=True)))


def _accounting_holds(seen, k, T, eps, delta):
    mu = _implied_mu(seen, k, T)
    return gdp_delta(mu, eps) <= delta * (1 + 1e-9)


def test_noise_matches_derived_sensitivities(sigmas):
    X, y = _data(d=4)
    bas.estimate(X, y, eps=0.9, delta=1e-5, rng=np.random.default_rng(4), intercept_col=0, T=30)
    assert _accounting_holds(sigmas, 5, 30, FIT_EPS, 1e-5)
    assert _implied_mu(sigmas, 5, 30) == pytest.approx(gdp_mu(FIT_EPS, 1e-5), rel=1e-9)


def test_broken_halved_sigma_is_caught(sigmas, monkeypatch):
    """Teeth: a plan that draws half the sigma it accounted for fails the check."""
    real = GaussianGDP.sigma
    monkeypatch.setattr(GaussianGDP, "sigma", lambda self, part, s: real(self, part, s) / 2)
    X, y = _data(d=4)
    bas.estimate(X, y, eps=0.9, delta=1e-5, rng=np.random.default_rng(4), intercept_col=0, T=30)
    assert not _accounting_holds(sigmas, 5, 30, FIT_EPS, 1e-5)


def test_broken_histogram_sensitivity_is_caught(sigmas, monkeypatch):
    """Teeth: histograms released as if one row moved one count in total (sensitivity 1
    instead of sqrt(k)) are under-noised."""
    real = bas.hist_release

    def broken(release):
        return real(lambda v, s: release(v, 1.0))

    monkeypatch.setattr(bas, "hist_release", broken)
    X, y = _data(d=4)
    bas.estimate(X, y, eps=0.9, delta=1e-5, rng=np.random.default_rng(4), intercept_col=0, T=30)
    assert not _accounting_holds(sigmas, 5, 30, FIT_EPS, 1e-5)


def _boost_inputs(monkeypatch, **kw):
    """Run the scaled variant on adversarial data and return what boosting saw."""
    seen = {}
    real = bas.boost

    def spy(Xn, y, plan, T, shrinkage, rho, out=None, resid=None):
        seen["Xn"], seen["y"] = Xn, y
        return real(Xn, y, plan, T, shrinkage, rho, out=out, resid=resid)

    monkeypatch.setattr(bas, "boost", spy)
    X, y = _data(n=500, d=4)
    X[:5, 1:], y[:5] = 1e9, -1e9                # rows far outside the public bounds
    bas.estimate(X, y, eps=1.0, delta=1e-5, rng=np.random.default_rng(5), intercept_col=0,
                 bounds=(-1.0, 1.0), T=5, **kw)
    return seen


def test_rows_reaching_boosting_have_norm_at_most_one(monkeypatch):
    seen = _boost_inputs(monkeypatch)
    assert np.linalg.norm(seen["Xn"], axis=1).max() <= 1 + 1e-12
    assert np.abs(seen["y"]).max() <= 1


def test_broken_row_scaling_ignoring_the_intercept_is_caught(monkeypatch):
    """Teeth: dividing by sqrt(p - 1) lets rows exceed norm 1 (sensitivity 1 then fails)."""
    monkeypatch.setattr(bas, "row_norm_bound", lambda p: math.sqrt(p - 1))
    seen = _boost_inputs(monkeypatch)
    assert np.linalg.norm(seen["Xn"], axis=1).max() > 1 + 1e-6


def test_private_bounds_on_raw_scale_data():
    """x ~ N(-120, 2): the paper variant (norm clipping of raw rows) destroys the signal; the
    scaled variant with private bounds recovers it."""
    rng = np.random.default_rng(7)
    n = 20000
    x = rng.normal(-120, 2, n)
    X = np.c_[np.ones(n), x]
    y = 50 + 3 * x + rng.normal(0, 2, n)

    def r2(params):
        return 1 - np.sum((y - X @ params) ** 2) / np.sum((y - y.mean()) ** 2)

    led = Ledger(1.0, 1e-5)
    est = bas.estimate(X, y, eps=1.0, delta=1e-5, rng=rng, ledger=led, intercept_col=0)
    paper = bas.estimate(X, y, eps=1.0, delta=1e-5, rng=rng, intercept_col=0, variant="paper")
    assert est.details["bounds"] == "private" and r2(est.params) > 0.6 > r2(paper.params)
    assert -140 < est.clip[0][1] < -120 < est.clip[1][1] < -100
    assert math.isclose(led.spent[0], 1.0) and math.isclose(led.spent[1], 1e-5)


def test_log_grid_edges_contain_their_values():
    v = np.r_[-1e30, -3.7, -1e-15, 0.0, 2.0**-60, 1e-8, 1.0, 5.5, 123456.0, 1e30]
    idx = gdp.log_grid_index(v)
    left, right = gdp.log_grid_edges(idx)
    inside = (left <= v) & (v <= right)
    assert inside[1:-1].all() and np.all(np.diff(idx) > 0)
    # beyond 2^+-64 values fall into the outermost / innermost cells: still one cell each
    far = gdp.log_grid_index(np.r_[-1e300, -1e-300, 1e-300, 1e300])
    assert far.tolist() == [0, idx[3] - 1, idx[3] + 1, 2 * idx[3]]


@pytest.mark.parametrize("kwargs", [
    {"eps": -1.0}, {"delta": 0.0}, {"variant": "fancy"}, {"T": 0}, {"T": 2.5}, {"T": True},
    {"shrinkage": 0.0}, {"shrinkage": 1.5}, {"split": (1, 1)}, {"split": (1, 0, 1)},
    {"split": (1, 1, 1, 0)}, {"bounds": (1, 1)}, {"bounds_method": "guess"},
    {"intercept_col": -1}, {"rho": 2.0}, {"X": np.ones((10, 2)) * np.inf},
])
def test_validation_errors_charge_nothing(kwargs):
    X, y = _data(n=50)
    args = {"X": X, "y": y, "eps": 1.0, "delta": 1e-5, "rng": np.random.default_rng(0),
            "intercept_col": 0}
    args.update(kwargs)
    led = Ledger()
    with pytest.raises(ValidationError):
        bas.estimate(args.pop("X"), args.pop("y"), ledger=led, **args)
    assert len(led) == 0
