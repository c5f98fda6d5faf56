"""AdaSSP on bounded, rescaled data: convergence to OLS, budget bookkeeping, sensitivities
checked against the noise actually drawn (with broken variants that must be caught), private
bounds on raw-scale data, and validation before any charge."""

import math

import numpy as np
import pytest
import statsmodels.api as sm

from dpstats.errors import ValidationError
from dpstats.estimators import adassp, get_estimator
from dpstats.estimators.bounded import bounded_design, plan_bounds
from dpstats.mechanisms import noise as _noise
from dpstats.mechanisms.accountant import Ledger
from dpstats.mechanisms.additive import analytic_gaussian_sigma
from dpstats.mechanisms.bounds import parse_bounds
from dpstats.mechanisms.gdp import log_histograms


def _data(n=4000, seed=0, d=3):
    rng = np.random.default_rng(seed)
    X = np.c_[np.ones(n), rng.uniform(-2, 2, size=(n, d))]
    beta = np.array([1.0, 0.5, -0.3, 0.8, 0.1, -0.2][: d + 1])
    return X, X @ beta + 0.1 * rng.normal(size=n)


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


def test_registry_finds_it():
    assert get_estimator("adassp") is adassp.estimate


@pytest.mark.parametrize("bounds", [(-5.0, 5.0), "auto"])
def test_large_eps_matches_statsmodels_ols(bounds):
    X, y = _data()
    ols = sm.OLS(y, X).fit().params
    est = adassp.estimate(X, y, eps=1e7, delta=1e-5, rng=np.random.default_rng(1),
                          intercept_col=0, bounds=bounds)
    np.testing.assert_allclose(est.params, ols, atol=2e-3)
    assert est.released and est.details["bounds"] == ("public" if bounds != "auto" else "private")


def test_no_intercept_column_maps_back_exactly():
    X, y = _data()
    X, y = X[:, 1:], y - 1.0
    ols = sm.OLS(y, X).fit().params
    est = adassp.estimate(X, y, eps=1e7, delta=1e-5, rng=np.random.default_rng(2),
                          intercept_col=None, bounds={"x": (-2, 6), "y": (-3, 9)})
    np.testing.assert_allclose(est.params, ols, atol=2e-3)


@pytest.mark.parametrize("bounds,method,n_charges", [((-5.0, 5.0), "hist", 3 + 1),
                                                    ("auto", "hist", 4 + 1),
                                                    ("auto", "quantile", 2 * 4 + 3 + 1)])
def test_ledger_totals_equal_the_budget(bounds, method, n_charges):
    X, y = _data()
    led = Ledger(0.7, 3e-6)
    adassp.estimate(X, y, eps=0.7, delta=3e-6, rng=np.random.default_rng(3), ledger=led,
                    intercept_col=0, bounds=bounds, bounds_method=method)
    assert len(led) == n_charges
    eps, delta = led.spent
    assert math.isclose(eps, 0.7, rel_tol=1e-12)
    assert math.isclose(delta, 3e-6, rel_tol=1e-12)


#: The fit's share of eps=0.9 (the inference stage takes its share first; it adds no Gaussian).
FIT_EPS = 0.9 * (1 - adassp.INFERENCE_SHARE)


def _expected_sigmas(p, eps, delta, B_x):
    """Sigmas derived here from first principles: B_x = sqrt(p) (intercept included), B_y = 1,
    sensitivities B_x^2 (eigenvalue), B_x^2 (Gram upper triangle), B_x (X'y), eps/3, delta/3."""
    e3, d3 = eps / 3, delta / 3
    s2 = analytic_gaussian_sigma(B_x**2, e3, d3)
    return [s2, s2, analytic_gaussian_sigma(B_x, e3, d3)]


def _sigmas_match(seen, p, eps, delta):
    exp = _expected_sigmas(p, eps, delta, math.sqrt(p))
    return len(seen) == 3 and np.allclose(seen, exp, rtol=1e-9)


def test_noise_matches_derived_sensitivities(sigmas):
    X, y = _data(d=4)
    adassp.estimate(X, y, eps=0.9, delta=1e-5, rng=np.random.default_rng(4), intercept_col=0,
                    bounds=(-3.0, 3.0))
    assert _sigmas_match(sigmas, 5, FIT_EPS, 1e-5)


def test_broken_sensitivity_ignoring_the_intercept_is_caught(sigmas, monkeypatch):
    """Teeth: B_x = sqrt(p - 1) (the intercept forgotten) under-noises every release."""
    X, y = _data(d=4)
    monkeypatch.setattr(adassp, "row_norm_bound", lambda p: math.sqrt(p - 1))
    adassp.estimate(X, y, eps=0.9, delta=1e-5, rng=np.random.default_rng(4), intercept_col=0,
                    bounds=(-3.0, 3.0))
    assert len(sigmas) == 3 and not _sigmas_match(sigmas, 5, FIT_EPS, 1e-5)


def test_broken_halved_noise_is_caught(sigmas, monkeypatch):
    """Teeth: a release with half the sensitivity (half the sigma) fails the same check."""
    real = adassp.gaussian
    monkeypatch.setattr(adassp, "gaussian",
                        lambda v, s, *a, **k: real(v, s / 2, *a, **k))
    X, y = _data(d=4)
    adassp.estimate(X, y, eps=0.9, delta=1e-5, rng=np.random.default_rng(4), intercept_col=0,
                    bounds=(-3.0, 3.0))
    assert not _sigmas_match(sigmas, 5, FIT_EPS, 1e-5)


def _to_scaled(X, y, b, intercept_col):
    """The mapped design and label of the shared bounded design (bounds ``b`` fixed)."""
    design = bounded_design(X, y, plan_bounds(X, b, intercept_col=intercept_col))
    return design.X, design.y


def _neighbour_changes(X, y, row, yrow, b):
    """How much each released statistic moves when one row is added (bounds fixed)."""
    Xs, ys = _to_scaled(X, y, b, 0)
    Xs2, ys2 = _to_scaled(np.vstack([X, row]), np.r_[y, yrow], b, 0)
    g1, g2 = Xs.T @ Xs, Xs2.T @ Xs2
    iu = np.triu_indices(X.shape[1])
    return (np.linalg.norm(g2[iu] - g1[iu]),
            abs(np.linalg.eigvalsh(g2)[0] - np.linalg.eigvalsh(g1)[0]),
            np.linalg.norm(Xs2.T @ ys2 - Xs.T @ ys))


def test_sensitivities_hold_for_adversarial_rows():
    """Rows far outside the bounds still move each statistic by at most its sensitivity."""
    X, y = _data(n=300, d=4)
    b = parse_bounds((-1.0, 1.0), 4)
    B_x = adassp.row_norm_bound(5)
    rng = np.random.default_rng(5)
    for _ in range(200):
        row = np.r_[1.0, rng.choice([-1e9, 1e9], size=4) * rng.uniform(0.5, 1, 4)]
        d_gram, d_lam, d_xy = _neighbour_changes(X, y, row, rng.choice([-1e9, 1e9]), b)
        assert d_gram <= B_x**2 + 1e-9 and d_lam <= B_x**2 + 1e-9 and d_xy <= B_x + 1e-9
    Xs, ys = _to_scaled(np.vstack([X, row]), np.r_[y, 1e12], b, 0)
    assert np.linalg.norm(Xs, axis=1).max() <= B_x + 1e-12 and np.abs(ys).max() <= 1
    # teeth: the bound that forgets the intercept is exceeded by such a row
    assert np.linalg.norm(Xs, axis=1).max() > math.sqrt(4) + 0.2


def test_histogram_sensitivity_is_sqrt_k():
    rng = np.random.default_rng(6)
    cols = rng.standard_t(2, size=(500, 3)) * 1e3
    row = np.array([[0.0, -7.5e-30, 3e40]])
    diff = log_histograms(np.vstack([cols, row])) - log_histograms(cols)
    assert np.linalg.norm(diff) == pytest.approx(math.sqrt(3))
    assert diff.sum(axis=1).tolist() == [1.0, 1.0, 1.0]


def test_private_bounds_on_raw_scale_data():
    """x ~ N(-120, 2): clipping raw values into [-1, 1] would destroy the signal; private
    bounds recover it."""
    rng = np.random.default_rng(7)
    n = 20000
    x = rng.normal(-120, 2, n)
    X = np.c_[np.ones(n), x]
    y = 50 + 3 * x + rng.normal(0, 2, n)
    led = Ledger(1.0, 1e-5)
    est = adassp.estimate(X, y, eps=1.0, delta=1e-5, rng=rng, ledger=led, intercept_col=0)
    pred = X @ est.params
    r2 = 1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2)
    assert est.details["bounds"] == "private" and r2 > 0.6
    assert abs(est.params[1] - 3) < 0.6
    lo, hi = est.clip[0], est.clip[1]
    assert lo[0] == -np.inf and -140 < lo[1] < -120 < hi[1] < -100
    assert math.isclose(led.spent[0], 1.0) and math.isclose(led.spent[1], 1e-5)


def test_bounds_dict_by_name_may_cover_more_columns():
    X, y = _data()
    names = ["Intercept", "a", "b", "c"]
    bx = {"a": (-2, 2), "b": (-2, 2), "c": (-2, 2), "dropped": (0, 1)}
    est = adassp.estimate(X, y, eps=1e7, delta=1e-5, rng=np.random.default_rng(8),
                          intercept_col=0, names=names, bounds={"x": bx, "y": (-9, 9)})
    assert est.details["bounds"] == "public"
    led = Ledger()
    with pytest.raises(ValidationError, match="bounds"):
        adassp.estimate(X, y, eps=1.0, delta=1e-5, rng=np.random.default_rng(8), ledger=led,
                        intercept_col=0, names=names, bounds={"x": {"a": (-2, 2)}, "y": (0, 1)})
    assert len(led) == 0


@pytest.mark.parametrize("kwargs", [
    {"eps": 0.0}, {"eps": float("nan")}, {"delta": 0.0}, {"delta": 1.5},
    {"bounds": "sometimes"}, {"bounds": (3, 1)}, {"bounds": {"x": (0, 1)}},
    {"intercept_col": 7}, {"intercept_col": True}, {"bounds_method": "magic"},
    {"bounds_share": 1.0}, {"q": 0.7}, {"rho": 0}, {"rng": 3},
    {"X": np.full((10, 2), np.nan)}, {"y": np.ones(3)},
])
def test_validation_errors_charge_nothing(kwargs):
    X, y = _data(n=50)
    args = {"X": X, "y": y, "eps": 1.0, "delta": 1e-5, "rng": np.random.default_rng(0),
            "intercept_col": 0, "bounds": "auto"}
    args.update(kwargs)
    led = Ledger()
    with pytest.raises(ValidationError):
        adassp.estimate(args.pop("X"), args.pop("y"), ledger=led, **args)
    assert len(led) == 0


def test_intercept_only_model():
    rng = np.random.default_rng(9)
    y = rng.normal(10, 1, 5000)
    led = Ledger()
    est = adassp.estimate(np.ones((5000, 1)), y, eps=1e6, delta=1e-5, rng=rng, ledger=led,
                          intercept_col=0)
    assert est.params[0] == pytest.approx(y.mean(), abs=0.05)
    assert len(led) == 5        # bounds, three Gaussian releases, the inference release
