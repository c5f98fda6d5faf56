"""The Tukey estimator and its restricted exponential mechanism, incl. reference-code defects:
the sampled point has exactly the chosen depth; one added row changes exactly one model; no
overflow at d = 100 with tiny or huge coefficient scales; the point is a uniform grid point of
its region (issue 14, leak 6), checked on subnormal boxes where the grid is visible."""

import itertools
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpstats._kernels.depth import (
    GRID,
    approx_tukey_depth,
    log_depth_volumes,
    log_exact_volumes,
)
from dpstats.estimators.tukey.linear import estimate, fit_models, jitter_sort
from dpstats.mechanisms.accountant import Ledger
from dpstats.mechanisms.tukey_em import (
    grid_index,
    grid_value,
    restricted_tukey_em,
    sample_point_with_depth,
)


def _linear(n, p, seed, scale=1.0, noise=1.0):
    rng = np.random.default_rng(seed)
    X = np.c_[np.ones(n), rng.normal(size=(n, p - 1))]
    beta = np.arange(1, p + 1, dtype=float) * scale
    return X, X @ beta + noise * scale * rng.normal(size=n), beta


@pytest.mark.parametrize("m,p", [(10, 1), (11, 2), (64, 3), (301, 7), (40, 20)])
def test_sampled_point_has_exactly_the_chosen_depth(m, p):
    rng = np.random.default_rng(m + p)
    S = jitter_sort(rng.standard_t(2, size=(m, p)), rng)
    for depth in range(1, m // 2 + 1):
        for _ in range(5):
            y = sample_point_with_depth(S, depth, rng)
            assert approx_tukey_depth(y, S) == depth


def test_off_by_one_sampler_is_caught():
    """Teeth: the reference's one-level-deeper sampler fails the same depth check."""
    rng = np.random.default_rng(1)
    S = jitter_sort(rng.normal(size=(51, 3)), rng)
    bad = [approx_tukey_depth(sample_point_with_depth(S, d + 1, rng), S) == d
           for d in range(1, 25)]
    assert not any(bad)


def test_sample_is_uniform_on_the_shell_in_one_dimension():
    rng = np.random.default_rng(2)
    S = np.sort(rng.normal(size=(21, 1)), axis=0)
    i = 4
    ys = np.array([sample_point_with_depth(S, i, rng)[0] for _ in range(4000)])
    left = (S[i - 1, 0], S[i, 0])
    right = (S[21 - i - 1, 0], S[21 - i, 0])
    la, lb = left[1] - left[0], right[1] - right[0]
    # map both pieces onto [0, 1) in proportion to their lengths, then KS against uniform
    u = np.where(ys < left[1], (ys - left[0]) / (la + lb), (la + ys - right[0]) / (la + lb))
    assert stats.kstest(u, "uniform").pvalue > 1e-3


@pytest.mark.parametrize("monotone", [False, True])
def test_em_depth_distribution(monotone):
    rng = np.random.default_rng(3)
    S = jitter_sort(rng.normal(size=(40, 2)), rng)
    eps, t = 0.8, 10
    logW = log_exact_volumes(log_depth_volumes(S))
    depths = np.arange(t, 21)
    mult = eps if monotone else eps / 2
    logp = logW[t:21] + mult * depths
    p = np.exp(logp - np.logaddexp.reduce(logp))
    # the mechanism returns the point only; its depth is the depth it chose
    draws = [approx_tukey_depth(restricted_tukey_em(S, t, eps, rng, monotone=monotone), S)
             for _ in range(20000)]
    counts = np.bincount(np.array(draws) - t, minlength=depths.size)
    keep = p * 20000 > 5
    chi = stats.chisquare(counts[keep], p[keep] / p[keep].sum() * counts[keep].sum())
    assert chi.pvalue > 1e-4


def test_one_added_row_changes_exactly_one_model():
    X, y, _ = _linear(3000, 4, 0)
    m = 100
    a = fit_models(X[:-1], y[:-1], m, np.random.default_rng(9))
    b = fit_models(X, y, m, np.random.default_rng(9))
    changed = np.flatnonzero(np.any(a != b, axis=1))
    assert changed.size == 1


def test_large_eps_returns_the_partition_median():
    X, y, beta = _linear(20000, 4, 1)
    m = 500
    models = fit_models(X, y, m, np.random.default_rng(4))
    est = estimate(X, y, eps=1e6, delta=1e-5, rng=np.random.default_rng(4), m=m)
    assert est.released and not hasattr(est, "depth")     # the sampled depth is not released
    assert approx_tukey_depth(est.params, models) >= m // 2 - 1
    spread = np.subtract(*np.percentile(models, [75, 25], axis=0))
    assert np.all(np.abs(est.params - np.median(models, axis=0)) < 0.02 * spread)
    np.testing.assert_allclose(est.params, beta, atol=0.05)


def _tiny_and_huge(n: int, d: int, m: int, scale: float) -> None:
    X, y, beta = _linear(n, d, 2, scale=scale, noise=0.1)
    led = Ledger(20.0, 1e-5)
    with np.errstate(over="raise", invalid="raise"):
        est = estimate(X, y, eps=20.0, delta=1e-5, rng=np.random.default_rng(0), ledger=led,
                       m=m)
    if est.released:
        assert np.isfinite(est.params).all()
        assert np.median(np.abs(est.params / beta - 1.0)) < 0.1
    assert est.ptr is not None and np.isfinite(est.ptr.noisy_distance)
    assert led.spent[0] == pytest.approx(20.0)


@pytest.mark.parametrize("scale", [1e-12, 1e12])
def test_d30_tiny_and_huge_coefficients(scale):
    _tiny_and_huge(12000, 30, 120, scale)


@pytest.mark.slow
@pytest.mark.parametrize("scale", [1e-12, 1e12])
def test_d100_tiny_and_huge_coefficients(scale):
    """The d = 30 case at d = 100 (about a minute per scale on 2 cores)."""
    _tiny_and_huge(40000, 100, 160, scale)


def test_ptr_failure_is_an_ordinary_outcome_and_spends_the_budget():
    X, y, _ = _linear(400, 10, 5)
    led = Ledger(0.1, 1e-6)
    est = estimate(X, y, eps=0.1, delta=1e-6, rng=np.random.default_rng(0), ledger=led, m=40)
    assert not est.released and est.params is None and not est.ptr.passed
    assert led.spent == pytest.approx((0.1, 1e-6))


def test_too_few_models_releases_nothing_and_charges_nothing():
    X, y, _ = _linear(50, 3, 6)
    led = Ledger(1.0, 1e-5)
    est = estimate(X, y, eps=1.0, delta=1e-5, rng=np.random.default_rng(0), ledger=led, m=3)
    assert not est.released and est.withheld == "too_few_models" and len(led) == 0


def test_budget_split_between_test_and_mechanism():
    X, y, _ = _linear(20000, 3, 7)
    led = Ledger(1.0, 1e-5)
    estimate(X, y, eps=1.0, delta=1e-5, rng=np.random.default_rng(0), ledger=led, m=2000,
             inference_share=0.0)       # (identify="regroup" fits now have intervals too)
    # identification count (3%), then the default "swap" split of the rest: 30% / 70%
    assert [c.eps for c in led.charges] == pytest.approx([0.03, 0.3 * 0.97, 0.7 * 0.97])
    assert [c.delta for c in led.charges] == [0.0, 0.0, 1e-5]
    led = Ledger(1.0, 1e-5)
    estimate(X, y, eps=1.0, delta=1e-5, rng=np.random.default_rng(0), ledger=led, m=2000,
             identify="votes")
    assert [c.eps for c in led.charges] == pytest.approx([0.3, 0.7])


# -- the grid (issue 14, leak 6) ----------------------------------------------------------------
def test_grid_index_is_exact_for_every_float():
    rng = np.random.default_rng(5)
    xs = np.concatenate([rng.normal(size=50) * 10.0 ** rng.integers(-300, 300, size=50),
                         [0.0, -0.0, GRID, -3 * GRID, 2.0**-1022, 1.7e308, -1.7e308, 0.1]])
    for x in xs:
        k = grid_index(x)
        assert Fraction(k, 2**1074) == Fraction(float(x)) and grid_value(k) == x


def _chi2_uniform(values, support) -> float:
    counts = np.array([np.sum(values == v) for v in support])
    assert counts.sum() == values.size, "a value outside the support"
    return stats.chisquare(counts).pvalue


#: Six 1-D models at multiples of 2^-1074 (subnormal): depth 1 = {0, 1, 15..20} x GRID,
#: depth 2 = {2, 3, 4, 10..14}, depth 3 (the deepest, sampled whole) = {5..9}.
_TINY = np.array([[0.0], [2.0], [5.0], [9.0], [14.0], [20.0]]) * GRID
_TINY_REGIONS = {1: [0, 1, *range(15, 21)], 2: [2, 3, 4, *range(10, 15)], 3: list(range(5, 10))}


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_point_is_a_uniform_grid_point_of_its_region(depth):
    rng = np.random.default_rng(depth)
    ys = np.array([sample_point_with_depth(_TINY, depth, rng)[0] for _ in range(6000)])
    support = np.array(_TINY_REGIONS[depth], dtype=float) * GRID
    assert _chi2_uniform(ys, support) > 1e-4


def test_float_box_sampler_is_not_uniform_on_the_grid():
    """Teeth: ``lo + (hi - lo) U`` (the sampler before) gives the ends of the deepest box half
    the probability of the other grid points, so the same check rejects it."""
    rng = np.random.default_rng(0)
    lo, hi = _TINY[2, 0], _TINY[3, 0]
    ys = lo + (hi - lo) * rng.random(6000)
    assert _chi2_uniform(ys, np.arange(5, 10) * GRID) < 1e-6


def test_shells_are_weighted_by_grid_points_in_two_dimensions():
    """m = 6, p = 2: every grid point of exact depth 1 (brute force over the depth-1 box) is
    equally likely; the shells are chosen by their numbers of grid points."""
    S = np.array([[0, 0], [1, 2], [3, 3], [6, 4], [8, 7], [11, 9]], dtype=float) * GRID
    pts = [np.array(k, dtype=float) * GRID for k in itertools.product(range(12), range(10))]
    region = [tuple(p) for p in pts if approx_tukey_depth(p, S) == 1]
    assert len(region) == 12 * 10 - 8 * 6
    rng = np.random.default_rng(7)
    draws = [tuple(sample_point_with_depth(S, 1, rng)) for _ in range(20000)]
    counts = np.array([draws.count(r) for r in region])
    assert counts.sum() == len(draws)
    assert stats.chisquare(counts).pvalue > 1e-4
