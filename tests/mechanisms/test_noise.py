"""Tests for dpstats.mechanisms.noise: the power-of-two grids, grid Laplace and grid Gaussian."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpstats.mechanisms import noise as _noise


def on_grid(x, g: float) -> bool:
    """True when every value in ``x`` is an integer multiple of the grid step ``g``."""
    q = np.asarray(x, dtype=np.float64) / g
    return bool(np.all(np.isfinite(q)) and np.all(q == np.round(q)))


def discrete_laplace_pmf(z, t: float) -> np.ndarray:
    """P(Z = z) for P(z) proportional to exp(-|z| / t)."""
    q = math.exp(-1.0 / t)
    return (1 - q) / (1 + q) * q ** np.abs(np.asarray(z, dtype=np.float64))


# --------------------------------------------------------------------------------------------
# grid step
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [1.0, 0.5, 3.0, 1e-6, 12345.678, 2.0**40, 0.1])
def test_granularity_is_power_of_two_about_2_pow_minus_20_of_scale(scale):
    g = _noise.granularity_for(scale)
    mant, _ = math.frexp(g)
    assert mant == 0.5  # an exact power of two
    assert 2.0**-21 * scale < g <= 2.0**-20 * scale


def test_on_grid_helper_has_teeth():
    g = _noise.granularity_for(1.0)
    assert on_grid([0.0, 3 * g, -17 * g], g)
    assert not on_grid([0.0, 0.5 * g], g)
    # a floating-point Laplace sample is (almost surely) off the grid
    rng = np.random.default_rng(0)
    assert not on_grid(rng.laplace(0.0, 1.0, size=100), g)


# --------------------------------------------------------------------------------------------
# discrete Laplace
# --------------------------------------------------------------------------------------------


def _chi2_pvalue(samples: np.ndarray, t: float, zmax: int = 6) -> float:
    """Chi-square p-value of integer samples against the discrete Laplace(t) pmf.

    Cells are -zmax..zmax plus the two tails (|z| > zmax) pooled into one cell.
    """
    zs = np.arange(-zmax, zmax + 1)
    counts = np.array([(samples == z).sum() for z in zs] + [(np.abs(samples) > zmax).sum()])
    probs = discrete_laplace_pmf(zs, t)
    probs = np.append(probs, 1.0 - probs.sum())
    return float(stats.chisquare(counts, probs * len(samples)).pvalue)


def test_discrete_laplace_matches_pmf():
    rng = np.random.default_rng(12)
    t = 1.5
    z = _noise._discrete_laplace(t, 100_000, rng)
    assert np.all(z == np.round(z))
    assert _chi2_pvalue(z, t) > 1e-3
    # the same test rejects a sampler that is 20% too narrow or too wide
    assert _chi2_pvalue(z, 0.8 * t) < 1e-6
    assert _chi2_pvalue(z, 1.2 * t) < 1e-6


def test_discrete_laplace_large_scale_mean_abs():
    rng = np.random.default_rng(13)
    t = 1000.0
    z = _noise._discrete_laplace(t, 200_000, rng)
    q = math.exp(-1 / t)
    exact_mad = 2 * q / (1 - q * q)  # E|Z| for the discrete Laplace, ~ t for large t
    assert np.mean(np.abs(z)) == pytest.approx(exact_mad, rel=0.01)
    assert abs(np.mean(z)) < 5 * math.sqrt(2) * t / math.sqrt(z.size)


# --------------------------------------------------------------------------------------------
# grid Laplace
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sens, eps", [(1.0, 1.0), (2.5, 0.3), (0.01, 8.0), (3.0, 1e-3)])
def test_grid_laplace_outputs_lie_on_one_grid_for_neighbours(sens, eps):
    rng = np.random.default_rng(1)
    g = _noise.granularity_for(sens / eps)
    for value in (0.0, 1.0, sens, -0.3, 0.1 * g, 12345.678, 1e9):
        out = _noise.grid_laplace(value, sens, eps, rng)
        assert out.shape == ()
        assert on_grid(out, g), value
    vec = _noise.grid_laplace(np.array([0.0, 1.0, math.pi, -2.0]), sens, eps, rng)
    assert vec.shape == (4,) and on_grid(vec, g)


def test_grid_laplace_neighbours_share_support():
    """Mironov: neighbours' outputs live on the same lattice, with integer noise of full support."""
    rng = np.random.default_rng(2)
    sens, eps = 1.0, 0.5
    g = _noise.granularity_for(sens / eps)
    out0 = _noise.grid_laplace(np.zeros(5000), sens, eps, rng)
    out1 = _noise.grid_laplace(np.ones(5000), sens, eps, rng)
    assert on_grid(out0, g) and on_grid(out1, g)
    # the noise is spread over many grid points (not a degenerate lattice of a few values)
    assert len(np.unique(out0)) > 4900 and len(np.unique(out1)) > 4900
    # the integer noise takes both parities, so no sub-lattice separates the two inputs
    for out, v in ((out0, 0.0), (out1, 1.0)):
        units = np.round((out - v) / g).astype(np.int64)
        assert set(np.unique(units % 7).tolist()) == set(range(7))


def test_grid_laplace_rounds_the_value_to_the_grid(monkeypatch):
    sens, eps = 1.0, 1.0
    g = _noise.granularity_for(sens / eps)
    monkeypatch.setattr(_noise, "_discrete_laplace", lambda t, size, rng: np.zeros(size))
    out = _noise.grid_laplace(np.array([0.3 * g, 0.7 * g, 5.2 * g, 1.0]), sens, eps,
                              np.random.default_rng(0))
    np.testing.assert_array_equal(out, [0.0, g, 5 * g, 1.0])


def _capture_t(monkeypatch):
    seen = []
    real = _noise._discrete_laplace

    def spy(t, size, rng):
        seen.append(t)
        return real(t, size, rng)

    monkeypatch.setattr(_noise, "_discrete_laplace", spy)
    return seen


@pytest.mark.parametrize("d", [1, 2, 50])
@pytest.mark.parametrize("sens, eps", [(1.0, 0.01), (1.0, 1.0), (0.7, 3.0)])
def test_grid_rounding_is_paid_for_in_the_sensitivity(monkeypatch, d, sens, eps):
    """Worst-case neighbours: every coordinate straddles a rounding boundary.

    With integer noise P(z) ~ exp(-|z|/t) the privacy loss of any output is at most
    ||round(a/g) - round(b/g)||_1 / t; it must not exceed eps.
    """
    seen = _capture_t(monkeypatch)
    g = _noise.granularity_for(sens / eps)
    a = np.full(d, 0.499 * g)
    b = np.full(d, 0.501 * g)
    a[0] = 0.0
    b[0] = sens - 0.0021 * g * (d - 1)  # a little slack for floating-point sums
    assert np.abs(a - b).sum() <= sens  # a genuine pair of neighbours
    rounded_l1 = np.abs(np.round(a / g) - np.round(b / g)).sum()
    assert rounded_l1 >= math.floor(sens / g) + d - 1  # (near) worst case is reached
    _noise.grid_laplace(a, sens, eps, np.random.default_rng(0))
    (t,) = seen
    assert rounded_l1 / t <= eps * (1 + 1e-12)


@pytest.mark.parametrize("d, rel", [(1, 1e-5), (1000, 2e-3)])
def test_grid_noise_scale_close_to_nominal(monkeypatch, d, rel):
    """The grid's rounding surcharge inflates the noise only marginally."""
    seen = _capture_t(monkeypatch)
    sens, eps = 2.0, 1.0
    g = _noise.granularity_for(sens / eps)
    _noise.grid_laplace(np.zeros(d), sens, eps, np.random.default_rng(0))
    (t,) = seen
    assert sens / eps <= g * t <= sens / eps * (1 + rel)


def test_grid_laplace_reproducible_and_independent_coordinates():
    a = _noise.grid_laplace(np.zeros(100), 1.0, 1.0, np.random.default_rng(5))
    b = _noise.grid_laplace(np.zeros(100), 1.0, 1.0, np.random.default_rng(5))
    c = _noise.grid_laplace(np.zeros(100), 1.0, 1.0, np.random.default_rng(6))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert len(np.unique(a)) > 95


def test_grid_laplace_large_value_stays_near_value():
    out = _noise.grid_laplace(1e12, 1.0, 100.0, np.random.default_rng(3))
    assert abs(float(out) - 1e12) < 1.0


def test_gumbel_noise():
    rng = np.random.default_rng(4)
    gum = _noise.gumbel_noise(2.0, (100_000,), rng)
    assert gum.shape == (100_000,)
    assert gum.mean() == pytest.approx(2.0 * np.euler_gamma, rel=0.02)
    assert gum.std() == pytest.approx(2.0 * math.pi / math.sqrt(6), rel=0.02)


# --------------------------------------------------------------------------------------------
# grid Gaussian
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sigma", [1.0, 0.37, 3.0e5, 1e-7])
def test_gaussian_granularity_is_power_of_two_about_2_pow_minus_41_of_sigma(sigma):
    g = _noise.gaussian_granularity(sigma)
    assert math.frexp(g)[0] == 0.5
    assert 2.0**41 <= sigma / g < 2.0**42


def test_grid_gaussian_outputs_on_the_grid_with_the_right_spread():
    rng = np.random.default_rng(6)
    sigma = 3.0
    g = _noise.gaussian_granularity(sigma)
    out = _noise.grid_gaussian(np.full((2, 50_000), 7.25), 1.0, sigma, rng)
    assert out.shape == (2, 50_000) and on_grid(out, g)
    assert out.std() == pytest.approx(sigma, rel=0.01)
    assert abs(out.mean() - 7.25) < 0.05
    scalar = _noise.grid_gaussian(0.1, 1.0, sigma, rng)
    assert scalar.shape == () and on_grid(scalar, g)


def _capture_s2(monkeypatch):
    seen = []
    real = _noise._noise_discrete.discrete_gaussian

    def spy(s2, n, rng):
        seen.append(s2)
        return real(s2, n, rng)

    monkeypatch.setattr(_noise._noise_discrete, "discrete_gaussian", spy)
    return seen


@pytest.mark.parametrize("d", [1, 3, 400])
@pytest.mark.parametrize("sens, sigma", [(0.3, 4.0), (0.7, 0.05), (2.2, 1e4)])
def test_grid_gaussian_pays_for_rounding(monkeypatch, d, sens, sigma):
    """Worst-case neighbours: every coordinate moves by D = sens / sqrt(d) (in grid units
    K + frac), starting just below a rounding boundary, so it rounds one step further. The
    rounded centres' L2 distance over the noise sd must not exceed the ratio accounted for."""
    seen = _capture_s2(monkeypatch)
    g = _noise.gaussian_granularity(sigma)
    D = sens / math.sqrt(d) / g
    frac = D - math.floor(D)
    assert 0 < frac < 1
    a = np.full(d, (0.5 - frac / 2) * g)
    b = a + D * g
    assert np.linalg.norm(b - a) <= sens * (1 + 1e-12)           # genuine neighbours
    rounded = np.linalg.norm(np.round(b / g) - np.round(a / g))
    assert rounded == pytest.approx(math.sqrt(d) * (math.floor(D) + 1), rel=1e-15)
    assert rounded > sens / g                                     # nominal sigma would not do
    _noise.grid_gaussian(a, sens, sigma, np.random.default_rng(0))
    s2 = seen[0]                  # (later entries: the sampler's own redraws, same s2)
    assert set(seen) == {s2}
    assert rounded / math.sqrt(s2) <= sens / sigma
    # and the inflation is tiny
    assert math.sqrt(s2) * g <= sigma * (1 + 2.0**-41 * math.sqrt(d) * sigma / sens + 1e-12)


def test_grid_gaussian_rounds_the_value_to_the_grid(monkeypatch):
    monkeypatch.setattr(_noise._noise_discrete, "discrete_gaussian",
                        lambda s2, n, rng: np.zeros(n, dtype=np.int64))
    g = _noise.gaussian_granularity(1.0)
    out = _noise.grid_gaussian(np.array([0.3 * g, 0.7 * g, 5.2 * g, 1.0]), 1.0, 1.0,
                               np.random.default_rng(0))
    np.testing.assert_array_equal(out, [0.0, g, 5 * g, 1.0])


def test_grid_gaussian_huge_values_are_rounded_after_the_noise():
    """Beyond 2^53 grid steps the float sum rounds c + z as a whole (post-processing)."""
    out = _noise.grid_gaussian(np.full(1000, 1e9), 1.0, 1e-3, np.random.default_rng(7))
    assert np.all(np.abs(out - 1e9) < 0.01)
    assert out.std() == pytest.approx(1e-3, rel=0.1)


def test_grid_gaussian_refuses_bad_scales():
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="sigma"):
            _noise.grid_gaussian(1.0, 1.0, bad, np.random.default_rng(0))
        with pytest.raises(ValueError, match="sigma"):
            _noise.grid_gaussian(1.0, bad, 1.0, np.random.default_rng(0))


def test_gdp_symmetric_release_is_exactly_symmetric_and_on_the_grid():
    from dpstats.mechanisms.gdp import GaussianGDP
    plan = GaussianGDP(1.0, 1e-5, {"gram": (1, 1.0)}, np.random.default_rng(8))
    rng = np.random.default_rng(9)
    A = rng.normal(size=(6, 6))
    A = A @ A.T
    A[0, 1] += 1e-13                        # a computed Gram matrix need not be symmetric
    out = plan.release("gram", A, 1.0, symmetric=True)
    np.testing.assert_array_equal(out, out.T)
    assert on_grid(out, _noise.gaussian_granularity(plan.sigma("gram", 1.0)))
