"""Tests for dpstats.mechanisms: Laplace, Gaussian, private count, exponential, peel top-k.

Statistical checks use fixed seeds and tolerances of many standard errors, and each is paired
with a deliberately wrong variant that the same check must reject.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from scipy import stats

from dpstats.errors import PrivacyParameterError
from dpstats.mechanisms import analytic_gaussian_sigma, gaussian, laplace, private_count
from dpstats.mechanisms import noise as _noise
from dpstats.mechanisms.accountant import Ledger

# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def draw_laplace_noise(sens: float, eps: float, n: int = 200_000, seed: int = 0,
                       chunk: int = 1000) -> np.ndarray:
    """``n`` noise draws of :func:`laplace` at value 0, in vectors of ``chunk`` coordinates.

    Chunks stay small because the grid's rounding surcharge grows with the vector length.
    """
    rng = np.random.default_rng(seed)
    return np.concatenate([laplace(np.zeros(chunk), sens, eps, rng) for _ in range(n // chunk)])


def laplace_scale_ok(noise: np.ndarray, scale: float, rtol: float = 0.02) -> bool:
    """Is ``noise`` consistent with Laplace(0, scale)? Mean |x| within rtol and mean ~ 0."""
    n = noise.size
    mad_ok = abs(np.mean(np.abs(noise)) / scale - 1.0) <= rtol
    mean_ok = abs(np.mean(noise)) <= 5.0 * math.sqrt(2.0) * scale / math.sqrt(n)
    return bool(mad_ok and mean_ok)


def on_grid(x, g: float) -> bool:
    q = np.asarray(x, dtype=np.float64) / g
    return bool(np.all(np.isfinite(q)) and np.all(q == np.round(q)))


def softmax(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    w = np.exp(x - x[np.isfinite(x)].max())
    return w / w.sum()


def chi2_p(counts, probs) -> float:
    counts = np.asarray(counts, dtype=np.float64)
    probs = np.asarray(probs, dtype=np.float64)
    return float(stats.chisquare(counts, probs / probs.sum() * counts.sum()).pvalue)


def delta_of_sigma(sigma: float, sens: float, eps: float) -> float:
    """Balle & Wang (2018) Theorem 8, evaluated with scipy.stats.norm."""
    a = sens / (2 * sigma) - eps * sigma / sens
    b = -sens / (2 * sigma) - eps * sigma / sens
    return float(stats.norm.cdf(a) - math.exp(eps + stats.norm.logcdf(b)))


def classic_sigma(sens: float, eps: float, delta: float) -> float:
    return sens * math.sqrt(2 * math.log(1.25 / delta)) / eps


# --------------------------------------------------------------------------------------------
# Laplace
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sens, eps", [(1.0, 1.0), (2.5, 0.5), (0.1, 4.0)])
def test_laplace_empirical_scale(sens, eps):
    noise = draw_laplace_noise(sens, eps, seed=int(10 * eps))
    assert laplace_scale_ok(noise, sens / eps)


def test_laplace_scale_check_catches_half_scale_sampler(monkeypatch):
    real = _noise.grid_laplace

    def half_scale(value, sensitivity, eps, rng):
        return real(value, sensitivity, 2.0 * eps, rng)

    monkeypatch.setattr(_noise, "grid_laplace", half_scale)
    noise = draw_laplace_noise(1.0, 1.0, seed=1)
    assert not laplace_scale_ok(noise, 1.0)
    assert laplace_scale_ok(noise, 0.5)  # it is a fine Laplace, just with the wrong scale


def test_laplace_scale_check_catches_biased_sampler():
    noise = draw_laplace_noise(1.0, 1.0, seed=2) + 0.02
    assert not laplace_scale_ok(noise, 1.0)


@pytest.mark.parametrize("sens, eps", [(1.0, 1.0), (1.0, 0.1), (3.0, 7.0)])
def test_laplace_neighbours_share_the_grid_support(sens, eps):
    """Outputs for neighbouring inputs 0 and 1 are all multiples of one power-of-two step."""
    g = _noise.granularity_for(sens / eps)
    rng = np.random.default_rng(3)
    out0 = np.array([laplace(0.0, sens, eps, rng) for _ in range(300)])
    out1 = np.array([laplace(1.0, sens, eps, rng) for _ in range(300)])
    vec0 = laplace(np.zeros(300), sens, eps, rng)
    vec1 = laplace(np.ones(300), sens, eps, rng)
    for out in (out0, out1, vec0, vec1):
        assert on_grid(out, g)
        assert len(np.unique(out)) > 290
    # a floating-point Laplace sampler fails the same check
    assert not on_grid(1.0 + rng.laplace(0.0, sens / eps, size=300), g)


def test_laplace_charges_once_per_call_with_sensitivity_in_detail():
    led = Ledger(10.0, 0.0)
    rng = np.random.default_rng(4)
    laplace(3.0, 2.5, 0.5, rng, led, stage="private n", what="row count")
    laplace(np.zeros(7), 0.125, 1.5, rng, led, stage="selection")
    assert len(led) == 2
    c1, c2 = led.charges
    assert (c1.stage, c1.mechanism, c1.eps, c1.delta) == ("private n", "laplace", 0.5, 0.0)
    assert "row count" in c1.detail and "sensitivity 2.5" in c1.detail
    assert (c2.stage, c2.mechanism, c2.eps, c2.delta) == ("selection", "laplace", 1.5, 0.0)
    assert "sensitivity 0.125" in c2.detail
    assert led.spent == (2.0, 0.0)


def test_laplace_scalar_and_vector_outputs():
    rng = np.random.default_rng(5)
    out = laplace(10.0, 1.0, 1e6, rng)
    assert type(out) is float and abs(out - 10.0) < 1e-3
    vec = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, 6e5]])
    outv = laplace(vec, 1.0, 1e6, rng)
    assert isinstance(outv, np.ndarray) and outv.shape == (2, 3)
    np.testing.assert_allclose(outv, vec, atol=1e-2)
    assert not np.array_equal(laplace([0.0, 0.0], 1.0, 1.0, rng), [0.0, 0.0])


@pytest.mark.parametrize("eps", [0.0, -1.0, math.nan, math.inf, "1"])
def test_laplace_bad_eps_charges_nothing(eps):
    led = Ledger()
    with pytest.raises(PrivacyParameterError):
        laplace(0.0, 1.0, eps, np.random.default_rng(0), led)
    assert len(led) == 0


@pytest.mark.parametrize("sens", [0.0, -1.0, math.nan, math.inf])
def test_laplace_bad_sensitivity_charges_nothing(sens):
    led = Ledger()
    with pytest.raises(ValueError, match="sensitivity"):
        laplace(0.0, sens, 1.0, np.random.default_rng(0), led)
    assert len(led) == 0


def test_laplace_reproducible_with_seed():
    a = laplace(np.zeros(10), 1.0, 1.0, np.random.default_rng(9))
    b = laplace(np.zeros(10), 1.0, 1.0, np.random.default_rng(9))
    np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------------------------
# Gaussian
# --------------------------------------------------------------------------------------------

GAUSS_CASES = [(1.0, 0.1, 1e-5), (1.0, 0.5, 1e-6), (1.0, 1.0, 1e-5), (2.0, 1.0, 1e-3),
               (0.3, 2.0, 1e-8), (1.0, 10.0, 1e-5), (5.0, 50.0, 1e-10)]


@pytest.mark.parametrize("sens, eps, delta", GAUSS_CASES)
def test_analytic_sigma_is_tight_balle_wang(sens, eps, delta):
    sigma = analytic_gaussian_sigma(sens, eps, delta)
    d = delta_of_sigma(sigma, sens, eps)
    assert d <= delta * (1 + 1e-9)
    assert d == pytest.approx(delta, rel=1e-6)
    # the smallest such sigma: a slightly smaller one violates the condition
    assert delta_of_sigma(sigma * (1 - 1e-4), sens, eps) > delta


@pytest.mark.parametrize("sens, eps, delta", [c for c in GAUSS_CASES if c[1] <= 1])
def test_analytic_sigma_beats_classic_for_small_eps(sens, eps, delta):
    sigma = analytic_gaussian_sigma(sens, eps, delta)
    classic = classic_sigma(sens, eps, delta)
    assert sigma < classic
    assert delta_of_sigma(classic, sens, eps) <= delta  # classic is valid, only looser


def test_analytic_sigma_valid_where_classic_fails():
    sens, eps, delta = 1.0, 10.0, 1e-5
    sigma = analytic_gaussian_sigma(sens, eps, delta)
    assert delta_of_sigma(sigma, sens, eps) <= delta * (1 + 1e-9)
    # the classic rule is not (eps, delta)-DP at eps = 10: it under-noises
    assert delta_of_sigma(classic_sigma(sens, eps, delta), sens, eps) > 2 * delta
    assert sigma > classic_sigma(sens, eps, delta)


def test_analytic_sigma_scales_with_sensitivity_and_known_value():
    s1 = analytic_gaussian_sigma(1.0, 1.0, 1e-5)
    assert s1 == pytest.approx(3.73, abs=0.005)
    assert analytic_gaussian_sigma(4.0, 1.0, 1e-5) == pytest.approx(4 * s1, rel=1e-9)
    assert analytic_gaussian_sigma(1.0, 2.0, 1e-5) < s1 < analytic_gaussian_sigma(1.0, 0.5, 1e-5)


@pytest.mark.parametrize("kwargs, err", [
    ({"sensitivity": 1.0, "eps": 1.0, "delta": 0.0}, PrivacyParameterError),
    ({"sensitivity": 1.0, "eps": 1.0, "delta": 1.0}, PrivacyParameterError),
    ({"sensitivity": 1.0, "eps": 0.0, "delta": 1e-5}, PrivacyParameterError),
    ({"sensitivity": 0.0, "eps": 1.0, "delta": 1e-5}, ValueError),
    ({"sensitivity": math.nan, "eps": 1.0, "delta": 1e-5}, ValueError),
])
def test_gaussian_bad_parameters_charge_nothing(kwargs, err):
    with pytest.raises(err):
        analytic_gaussian_sigma(**kwargs)
    led = Ledger()
    with pytest.raises(err):
        gaussian(0.0, rng=np.random.default_rng(0), ledger=led, **kwargs)
    assert len(led) == 0


def test_gaussian_empirical_std_and_charge():
    sens, eps, delta = 2.0, 0.7, 1e-6
    sigma = analytic_gaussian_sigma(sens, eps, delta)
    led = Ledger(1.0, 1e-5)
    out = gaussian(np.zeros(200_000), sens, eps, delta, np.random.default_rng(6), led,
                   stage="regression", what="X^T y")
    assert out.shape == (200_000,)
    assert np.std(out) == pytest.approx(sigma, rel=0.01)
    assert abs(np.mean(out)) < 5 * sigma / math.sqrt(out.size)
    (c,) = led.charges
    assert (c.stage, c.mechanism, c.eps, c.delta) == ("regression", "gaussian", eps, delta)
    assert "X^T y" in c.detail and "sensitivity 2" in c.detail and f"{sigma:.4g}" in c.detail
    scalar = gaussian(5.0, sens, eps, delta, np.random.default_rng(6))
    assert type(scalar) is float


# --------------------------------------------------------------------------------------------
# private count
# --------------------------------------------------------------------------------------------


def test_private_count_bias_and_tail_probability():
    # 20,000 draws in the default run (5 standard errors: 0.017 on the mean, 0.008 on the
    # tail share; dropping the shift moves the share by 0.45), 100,000 under DPSTATS_FULL=1
    draws = 100_000 if os.environ.get("DPSTATS_FULL", "") not in ("", "0") else 20_000
    n, eps, eta = 1000, 0.5, 0.05
    rng = np.random.default_rng(7)
    n_hat = np.array([private_count(n, eps, rng, eta=eta) for _ in range(draws)])
    shift = math.log(1 / (2 * eta)) / eps
    se_mean = math.sqrt(2) / eps / math.sqrt(draws)
    assert abs(n_hat.mean() - (n - shift)) < 5 * se_mean
    p_over = np.mean(n_hat > n)
    se_p = math.sqrt(eta * (1 - eta) / draws)
    assert abs(p_over - eta) < 5 * se_p
    # the check has teeth: without the shift the count would exceed n half of the time
    assert abs(np.mean(n_hat + shift > n) - eta) > 100 * se_p


def test_private_count_default_eta_is_a_lower_bound():
    rng = np.random.default_rng(8)
    n_hat = np.array([private_count(500, 1.0, rng) for _ in range(2000)])
    assert np.mean(n_hat < 500) > 0.995
    assert n_hat.mean() == pytest.approx(500 - math.log(1 / 2e-4), abs=0.2)


def test_private_count_charges_private_n_stage():
    led = Ledger(1.0, 0.0)
    private_count(100, 0.05, np.random.default_rng(0), led)
    (c,) = led.charges
    assert (c.stage, c.mechanism, c.eps, c.delta) == ("private n", "laplace", 0.05, 0.0)
    assert "sensitivity 1" in c.detail


@pytest.mark.parametrize("eta", [0.0, 0.5, -0.1, 1.0])
def test_private_count_bad_eta_charges_nothing(eta):
    led = Ledger()
    with pytest.raises(ValueError, match="eta"):
        private_count(100, 1.0, np.random.default_rng(0), led, eta=eta)
    assert len(led) == 0
