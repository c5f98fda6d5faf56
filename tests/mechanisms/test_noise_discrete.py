"""Tests for dpstats.mechanisms.discrete: exact uniforms, coins, discrete Laplace and Gaussian."""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpstats.mechanisms import discrete as nd
from dpstats.mechanisms.rng import SecureGenerator

# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def dgauss_pmf(zs, s2: float) -> np.ndarray:
    """Exact N_Z(0, s2) pmf at integers ``zs`` (normaliser summed to 40 sd)."""
    r = int(40 * math.sqrt(s2)) + 5
    k = np.arange(-r, r + 1, dtype=np.float64)
    norm = np.exp(-k * k / (2 * s2)).sum()
    zs = np.asarray(zs, dtype=np.float64)
    return np.exp(-zs * zs / (2 * s2)) / norm


def dlap_pmf(zs, scale: float) -> np.ndarray:
    q = math.exp(-1.0 / scale)
    return (1 - q) / (1 + q) * q ** np.abs(np.asarray(zs, dtype=np.float64))


def chi2_p(samples, pmf, zmax: int) -> float:
    """Chi-square p-value on cells -zmax..zmax plus the pooled tails."""
    zs = np.arange(-zmax, zmax + 1)
    counts = np.array([(samples == z).sum() for z in zs] + [(np.abs(samples) > zmax).sum()])
    probs = pmf(zs)
    probs = np.append(probs, max(1.0 - probs.sum(), 0.0))
    keep = probs * len(samples) > 5
    tail = counts[~keep].sum()
    exp = probs[keep] * len(samples)
    obs = counts[keep]
    if tail or (~keep).any():
        obs, exp = np.append(obs, tail), np.append(exp, probs[~keep].sum() * len(samples))
    return float(stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue)


class CountingRng:
    """Wraps a Generator and counts the 64-bit words drawn (to check fallbacks use fresh bits)."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.words = 0

    def integers(self, low, high, size=None, dtype=np.int64):
        self.words += int(np.prod(size)) if size is not None else 1
        return self.rng.integers(low, high, size=size, dtype=dtype)


# --------------------------------------------------------------------------------------------
# full-precision uniforms
# --------------------------------------------------------------------------------------------


def test_uniform_cells_have_the_right_binade_frequencies():
    lo, width = nd.uniform_cells(np.random.default_rng(0), 400_000)
    assert np.all(lo > 0) and np.all(lo + width <= 1.0)
    # each cell is one 2^-52-relative step of a binade, exactly
    mant, ex = np.frexp(lo)
    np.testing.assert_array_equal(width, np.ldexp(1.0, ex - 53))
    # P(U in [2^-(j+1), 2^-j)) = 2^-(j+1)
    j = -ex
    counts = np.bincount(j, minlength=8)[:8]
    expected = 400_000 * 2.0 ** -(np.arange(8) + 1)
    assert stats.chisquare(counts[:6], expected[:6] * counts[:6].sum() / expected[:6].sum()
                           ).pvalue > 1e-3
    # within a binade the position is uniform
    assert stats.kstest(2 * mant[j == 0] - 1, "uniform").pvalue > 1e-3


def test_uniform_cells_go_deeper_when_the_top_bits_are_zero():
    class ZeroTop:
        """First words have 12 (then 24) leading zero bits, then ordinary words."""

        def __init__(self):
            self.calls = 0

        def integers(self, low, high, size=None, dtype=None):
            self.calls += 1
            if self.calls <= 2:
                return np.full(size, (1 << 52) - 1, dtype=np.uint64)   # top 12 bits zero
            return np.full(size, np.uint64(1) << np.uint64(63), dtype=np.uint64)

    lo, width = nd.uniform_cells(ZeroTop(), 3)
    # two zero rounds: U = 2^-24 * U' with U' in [1/2, 1)
    np.testing.assert_array_equal(lo, np.full(3, 2.0**-25))
    np.testing.assert_array_equal(width, np.full(3, 2.0**-77))


# --------------------------------------------------------------------------------------------
# exact coins
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("gamma", [0.0, 0.05, 1.0, 3.5])
def test_bernoulli_exp_has_probability_exp_minus_gamma(gamma):
    n = 200_000
    coins = nd.bernoulli_exp(np.full(n, gamma), lambda i: Fraction(gamma),
                             np.random.default_rng(1))
    k = int(coins.sum())
    assert stats.binomtest(k, n, math.exp(-gamma)).pvalue > 1e-4
    if gamma > 0:   # teeth: a 10% error in gamma is detected
        assert stats.binomtest(k, n, math.exp(-1.1 * gamma)).pvalue < 1e-4


def _cell_around(p: float):
    """A cell of width 2^-50 containing ``p`` (in [1/4, 1/2)), with exact float ends."""
    width = 2.0**-50
    return math.floor(p / width) * width, width


def test_exact_fallback_places_u_inside_its_cell():
    """When exp(-gamma) falls inside U's cell, the coin is Bernoulli((p - lo) / width)."""
    gamma = Fraction(1)
    p = math.exp(-1.0)
    lo, width = _cell_around(p)
    with localcontext() as ctx:
        ctx.prec = 60
        q = float((Decimal(-1).exp() - Decimal(lo)) / Decimal(width))
    assert 0.0 < q < 1.0
    rng = np.random.default_rng(2)
    n = 20_000
    k = sum(nd._exact_below(lo, width, gamma, rng) for _ in range(n))
    assert stats.binomtest(k, n, q).pvalue > 1e-4
    # cells entirely on one side are decided without randomness
    assert nd._exact_below(lo - 4 * width, width, gamma, rng) is True
    assert nd._exact_below(lo + 4 * width, width, gamma, rng) is False


def test_decide_below_uses_the_exact_path_only_near_the_threshold(monkeypatch):
    calls = []
    real = nd._exact_below

    def spy(lo, width, gamma, rng):
        calls.append(gamma)
        return real(lo, width, gamma, rng)

    monkeypatch.setattr(nd, "_exact_below", spy)
    lo_in, width = _cell_around(math.exp(-1.0))
    lo = np.array([lo_in, 0.1, 0.9])
    out = nd._decide_below(lo, np.full(3, width), np.ones(3), lambda i: Fraction(1),
                           np.random.default_rng(0))
    assert out[1] and not out[2]
    assert calls == [Fraction(1)]


@pytest.fixture
def wide_margin(monkeypatch):
    """A float64 margin of 0.02 sends a few per cent of all coins through the exact path."""
    calls = []
    real = nd._exact_below

    def spy(lo, width, gamma, rng):
        calls.append(gamma)
        return real(lo, width, gamma, rng)

    monkeypatch.setattr(nd, "_MARGIN", 0.02)
    monkeypatch.setattr(nd, "_exact_below", spy)
    return calls


# --------------------------------------------------------------------------------------------
# geometric, discrete Laplace, discrete Gaussian
# --------------------------------------------------------------------------------------------


def test_geometric_exp1_matches_pmf():
    v = nd.geometric_exp1(200_000, np.random.default_rng(3))
    assert v.min() >= 0
    ks = np.arange(9)
    counts = np.append(np.bincount(v, minlength=9)[:9], (v >= 9).sum())
    probs = np.append((1 - math.exp(-1)) * np.exp(-ks), math.exp(-9))
    assert stats.chisquare(counts, probs * v.size).pvalue > 1e-3


@pytest.mark.parametrize("num, den", [(1, 1), (3, 2), (5, 17)])
def test_discrete_laplace_matches_pmf(num, den):
    scale = num / den
    z = nd.discrete_laplace(num, den, 150_000, np.random.default_rng(num + den))
    assert chi2_p(z, lambda zs: dlap_pmf(zs, scale), 12) > 1e-3
    # teeth: the same test rejects a scale 10% off
    assert chi2_p(z, lambda zs: dlap_pmf(zs, 1.1 * scale), 12) < 1e-6


def test_discrete_laplace_at_grid_scale():
    """Scales near 2^21 (what grid_laplace uses): mean |z| is the exact 2q / (1 - q^2)."""
    num, den = 2**41 + 12345, 2**20
    z = nd.discrete_laplace(num, den, 200_000, np.random.default_rng(4))
    q = math.exp(-den / num)
    assert np.mean(np.abs(z)) == pytest.approx(2 * q / (1 - q * q), rel=0.01)
    assert abs(np.mean(z)) < 6 * math.sqrt(2) * num / den / math.sqrt(z.size)


def test_discrete_laplace_refuses_out_of_range_integers():
    with pytest.raises(ValueError, match="num"):
        nd.discrete_laplace(nd.MAX_NUM + 1, 1, 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="num"):
        nd.discrete_laplace(0, 1, 1, np.random.default_rng(0))


@pytest.mark.parametrize("s2", [0.25, 2.25, 100.0])
def test_discrete_gaussian_matches_exact_pmf(s2):
    z = nd.discrete_gaussian(s2, 150_000, np.random.default_rng(5))
    zmax = int(4 * math.sqrt(s2)) + 1
    assert chi2_p(z, lambda zs: dgauss_pmf(zs, s2), zmax) > 1e-3
    # teeth: a variance 10% off is rejected
    assert chi2_p(z, lambda zs: dgauss_pmf(zs, 1.1 * s2), zmax) < 1e-6


def test_discrete_gaussian_small_sigma_variance_is_the_discrete_one():
    """For sigma = 0.5 the discrete Gaussian's variance is far below sigma^2 (it is exact)."""
    s2 = 0.25
    ks = np.arange(-20, 21)
    exact_var = float((ks**2 * dgauss_pmf(ks, s2)).sum())
    z = nd.discrete_gaussian(s2, 200_000, np.random.default_rng(6))
    assert z.var() == pytest.approx(exact_var, rel=0.02)
    assert exact_var < 0.9 * s2


@pytest.mark.parametrize("sigma", [1e6, 3.0 * 2.0**41])
def test_discrete_gaussian_large_sigma_matches_the_normal(sigma):
    """At large sigma N_Z(0, s2) is the normal to within float precision: bin in sd units."""
    z = nd.discrete_gaussian(sigma * sigma, 200_000, np.random.default_rng(7)) / sigma
    edges = np.array([-np.inf, -2.5, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2.5, np.inf])
    counts = np.histogram(z, edges)[0]
    probs = np.diff(stats.norm.cdf(edges))
    assert stats.chisquare(counts, probs * z.size).pvalue > 1e-3
    assert z.var() == pytest.approx(1.0, rel=0.015)
    assert abs(z.mean()) < 0.015
    # teeth: a 5% wider normal is rejected
    wide = np.diff(stats.norm.cdf(edges / 1.05))
    assert stats.chisquare(counts, wide * z.size).pvalue < 1e-6


def test_samplers_are_exact_through_the_fallback_path(wide_margin):
    """With thousands of coins decided by the exact (decimal) path the pmfs are unchanged."""
    z = nd.discrete_gaussian(2.25, 20_000, np.random.default_rng(8))
    assert chi2_p(z, lambda zs: dgauss_pmf(zs, 2.25), 4) > 1e-3
    v = nd.geometric_exp1(20_000, np.random.default_rng(9))
    counts = np.append(np.bincount(v, minlength=6)[:6], (v >= 6).sum())
    probs = np.append((1 - math.exp(-1)) * np.exp(-np.arange(6)), math.exp(-6))
    assert stats.chisquare(counts, probs * v.size).pvalue > 1e-3
    assert len(wide_margin) > 2000
    assert any(g.denominator == 1 for g in wide_margin)        # geometric thresholds exp(-k)
    assert any(g.denominator > 1 for g in wide_margin)         # Gaussian / Laplace coins


def test_samplers_run_on_the_secure_generator():
    z = nd.discrete_gaussian(9.0, 50_000, SecureGenerator())
    assert chi2_p(z, lambda zs: dgauss_pmf(zs, 9.0), 12) > 1e-4
    y = nd.discrete_laplace(3, 2, 50_000, SecureGenerator())
    assert chi2_p(y, lambda zs: dlap_pmf(zs, 1.5), 10) > 1e-4


def test_seeded_draws_are_reproducible_and_use_fresh_words():
    a = nd.discrete_gaussian(4.0, 1000, np.random.default_rng(10))
    b = nd.discrete_gaussian(4.0, 1000, np.random.default_rng(10))
    np.testing.assert_array_equal(a, b)
    c = CountingRng(0)
    nd.discrete_gaussian((2.0**41) ** 2, 10_000, c)
    assert 4 < c.words / 10_000 < 12     # about 7 words per sample


@pytest.mark.parametrize("scale", [Fraction(1, 3), Fraction(3, 2), Fraction(2**50 + 1, 7),
                                   Fraction(1_048_577, 1), Fraction(1, 10**9)])
def test_dyadic_at_least_rounds_up_by_a_tiny_relative_amount(scale):
    num, den = nd.dyadic_at_least(scale)
    assert den & (den - 1) == 0            # power of two
    assert Fraction(num, den) >= scale
    assert Fraction(num, den) - scale <= scale * Fraction(1, 2**39) + Fraction(1, den)
    assert num <= nd.MAX_NUM or den == 1


# --------------------------------------------------------------------------------------------
# uniform integers of any size (the Tukey mechanism's grid)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rng", [np.random.default_rng(3), SecureGenerator()],
                         ids=["numpy", "secure"])
def test_uniform_below_is_uniform_for_small_and_huge_bounds(rng):
    assert nd.uniform_below([1, 1], rng) == [0, 0]
    small = np.array([v for _ in range(3000) for v in nd.uniform_below([6, 5], rng)[:1]])
    assert stats.chisquare(np.bincount(small, minlength=6)).pvalue > 1e-4
    # 3 * 2^1000: the leading "digit" v // 2^1000 is uniform on {0, 1, 2} (rejection needed:
    # 2^1002 > n), and the low bits are uniform too
    n = 3 * 2**1000
    vals = nd.uniform_below([n] * 3000, rng)
    assert all(0 <= v < n for v in vals)
    assert stats.chisquare(np.bincount([v >> 1000 for v in vals], minlength=3)).pvalue > 1e-4
    assert stats.chisquare(np.bincount([v & 7 for v in vals], minlength=8)).pvalue > 1e-4
    with pytest.raises(ValueError):
        nd.uniform_below([0], rng)
