"""Tests for the canonical Lipschitz top-k mechanism (004 Appendix A).

The distribution tests compare samples with the *exact* output distribution of Definition A.1,
computed by brute force over all k-subsets with the canonical loss
``max(0, max excluded - min included) / 2`` (no utility classes involved). For i.i.d. Exp(1)
noise and utilities ``u``, ``P(y wins) = b_y * int_0^1 prod_{y' != y} (1 - b_y' w) dw`` with
``b = exp(u - max u)`` (substitute ``w = exp(max u - z)``), a polynomial integral.
"""

from __future__ import annotations

import itertools
import math
import os
import warnings

import numpy as np
import pytest
from numpy.polynomial import polynomial as P
from scipy import integrate, stats

from dpstats.mechanisms import lipschitz_topk
from dpstats.mechanisms.accountant import Ledger
from dpstats.mechanisms.lipschitz import _class_max_noise

SCORES = np.array([0.0, 0.5, 1.3, 2.0, 3.1, 4.0])   # d = 6, spread over a few units
K, SENS, EPS = 2, 1.0, 1.0


def _win_probs(u: np.ndarray) -> np.ndarray:
    """P(argmax_i (u_i + E_i) = i) for i.i.d. E_i ~ Exp(1), exactly."""
    b = np.exp(u - u.max())
    out = np.empty(u.size)
    for i in range(u.size):
        poly = np.array([1.0])
        for j in range(u.size):
            if j != i:
                poly = P.polymul(poly, [1.0, -b[j]])
        out[i] = b[i] * P.polyval(1.0, P.polyint(poly))
    return out


def exact_distribution(scores, k, sensitivity, eps):
    """Output distribution of Definition A.1 (canonical loss, gamma = 1/2) by enumeration."""
    x = np.asarray(scores, dtype=float) / sensitivity
    subsets = list(itertools.combinations(range(x.size), k))
    u = []
    for y in subsets:
        inc, exc = x[list(y)], np.delete(x, list(y))
        loss = max(0.0, exc.max() - inc.min()) / 2 if exc.size else 0.0
        u.append(-eps / 2 * loss)
    return subsets, _win_probs(np.array(u))


def printed_algorithm2_distribution(scores, k, sensitivity, eps):
    """Exact distribution of 004's Algorithm 2 *as printed*: bodies from j_{h+1}..j_{t-1}."""
    x = np.asarray(scores, dtype=float) / sensitivity
    order = np.argsort(-x, kind="stable")
    xs = x[order]
    members, u = [tuple(order[:k])], [0.0]
    for t in range(k + 1, x.size + 1):
        for h in range(k):
            for body in itertools.combinations(range(h, t - 1), k - h - 1):
                members.append(tuple(order[:h]) + tuple(order[list(body)]) + (order[t - 1],))
                u.append(eps / 4 * (xs[t - 1] - xs[h]))
    p = _win_probs(np.array(u))
    subsets = list(itertools.combinations(range(x.size), k))
    agg = dict.fromkeys(subsets, 0.0)
    for m, pm in zip(members, p, strict=True):
        agg[tuple(sorted(int(i) for i in m))] += pm
    return subsets, np.array([agg[s] for s in subsets])


def printed_algorithm2_sample(scores, k, sensitivity, eps, rng):
    """004 Algorithm 2 line by line (class sizes binom(t-h-1, k-h-1)), for the teeth test."""
    x = np.asarray(scores, dtype=float) / sensitivity
    order = np.argsort(-x, kind="stable")
    xs = x[order]
    eps1 = eps2 = eps / 2
    H, T = k - 1, k
    v = (eps2 - eps1) / 2 * xs[k - 1] - math.log(1 - rng.random())
    for t in range(k + 1, x.size + 1):
        m = 1.0
        for h in range(k - 1, -1, -1):
            if h < k - 1:
                m *= (t - h - 1) / (k - h - 1)
            v2 = eps2 / 2 * xs[t - 1] - eps1 / 2 * xs[h] - math.log(1 - rng.random() ** (1 / m))
            if v2 > v:
                v, H, T = v2, h, t
    body = rng.choice(np.arange(H, T - 1), size=k - H - 1, replace=False)
    return np.concatenate((order[:H], order[body], order[T - 1:T]))


def chi_square_p(samples, subsets, probs) -> float:
    index = {s: i for i, s in enumerate(subsets)}
    counts = np.zeros(len(subsets))
    for s in samples:
        counts[index[tuple(sorted(int(i) for i in s))]] += 1
    return float(stats.chisquare(counts, probs * counts.sum()).pvalue)


def test_exact_reference_is_a_distribution_and_matches_quadrature():
    subsets, p = exact_distribution(SCORES, K, SENS, EPS)
    assert len(subsets) == 15 and abs(p.sum() - 1) < 1e-12 and (p > 0).all()
    u = np.array([0.0, -0.3, -1.1, -2.0])
    q = [integrate.quad(lambda z, i=i: math.exp(-(z - u[i])) * np.prod(
        [1 - math.exp(-(z - u[j])) for j in range(4) if j != i]), u.max(), np.inf)[0]
        for i in range(4)]
    np.testing.assert_allclose(_win_probs(u), q, rtol=1e-8)


def test_distribution_matches_definition_a1():
    subsets, p = exact_distribution(SCORES, K, SENS, EPS)
    rng = np.random.default_rng(20240601)
    draws = 200_000 if os.environ.get("DPSTATS_FULL", "") not in ("", "0") else 50_000
    samples = [lipschitz_topk(SCORES, K, SENS, EPS, rng) for _ in range(draws)]
    assert chi_square_p(samples, subsets, p) > 1e-3


def test_distribution_with_tied_scores_and_k3():
    scores = np.array([2.0, 0.0, 2.0, 1.0, 2.0])
    subsets, p = exact_distribution(scores, 3, 0.5, 1.5)
    rng = np.random.default_rng(17)
    samples = [lipschitz_topk(scores, 3, 0.5, 1.5, rng) for _ in range(30_000)]
    assert chi_square_p(samples, subsets, p) > 1e-3


def test_distribution_test_catches_doubled_eps():
    subsets, p = exact_distribution(SCORES, K, SENS, EPS)
    rng = np.random.default_rng(7)
    # halving the sensitivity doubles eps inside the utility: an under-noised mechanism
    samples = [lipschitz_topk(SCORES, K, SENS / 2, EPS, rng) for _ in range(20_000)]
    assert chi_square_p(samples, subsets, p) < 1e-6


def test_distribution_test_catches_printed_class_sizes():
    """004's printed classes overlap (sizes sum to 19, not C(6,2) = 15); the test rejects them."""
    from math import comb
    assert 1 + sum(comb(t - h - 1, K - h - 1) for t in range(K + 1, 7) for h in range(K)) == 19
    assert 1 + sum(comb(t - h - 2, K - h - 1) for t in range(K + 1, 7) for h in range(K)) == 15
    subsets, p = exact_distribution(SCORES, K, SENS, EPS)
    rng = np.random.default_rng(8)
    samples = [printed_algorithm2_sample(SCORES, K, SENS, EPS, rng) for _ in range(20_000)]
    assert chi_square_p(samples, subsets, p) < 1e-6
    _, q = printed_algorithm2_distribution(SCORES, K, SENS, EPS)
    assert chi_square_p(samples, subsets, q) > 1e-3     # the sampler is what it claims to be


def test_definition_is_eps_dp_but_printed_algorithm_is_not():
    x = np.arange(6.0)
    x_nb = x + np.array([-1, -1, 1, 1, 1, -1])           # every score moves by sensitivity 1
    _, p = exact_distribution(x, 3, 1.0, 1.0)
    _, q = exact_distribution(x_nb, 3, 1.0, 1.0)
    assert np.abs(np.log(p / q)).max() <= 1.0 + 1e-9
    _, p = printed_algorithm2_distribution(x, 3, 1.0, 1.0)
    _, q = printed_algorithm2_distribution(x_nb, 3, 1.0, 1.0)
    assert np.abs(np.log(p / q)).max() > 1.5             # privacy loss 1.66 > eps = 1
    rng = np.random.default_rng(3)
    for _ in range(100):                                   # random neighbours, d = 5, k = 2
        x = rng.uniform(0, 3, 5)
        x_nb = x + rng.uniform(-1, 1, 5)
        _, p = exact_distribution(x, 2, 1.0, 1.0)
        _, q = exact_distribution(x_nb, 2, 1.0, 1.0)
        assert np.abs(np.log(p / q)).max() <= 1.0 + 1e-9


@pytest.mark.parametrize(("d", "k"), [(10, 1), (10, 3), (100, 5), (500, 20), (30, 30)])
def test_huge_eps_returns_exact_topk(d, k):
    rng = np.random.default_rng(d + k)
    for _ in range(5):
        s = rng.normal(size=d)
        out = lipschitz_topk(s, k, 1.0, 1e8, rng)
        assert set(out.tolist()) == set(np.argsort(-s)[:k].tolist())
        assert out.dtype == np.int64 and (np.diff(out) > 0).all()   # sorted, distinct


@pytest.mark.parametrize(("d", "k"), [(22_283, 4), (20_000, 50)])
def test_numerics_at_scale(d, k):
    rng = np.random.default_rng(11)
    s = np.abs(rng.normal(size=d)) * 5
    s[:k] += 50.0                                         # a clear top-k
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        for eps in (0.1, 1.0, 1e3):
            out = lipschitz_topk(s, k, 1.0, eps, rng)
            assert out.shape == (k,) and np.unique(out).size == k
            assert out.min() >= 0 and out.max() < d
        assert set(lipschitz_topk(s, k, 1.0, 1e3, rng).tolist()) == set(range(k))


@pytest.mark.parametrize("m", [1, 2, 10, 10**6, math.comb(22_282, 3), math.comb(19_999, 49)])
def test_class_noise_mean_is_harmonic_number(m):
    """E[-log(1 - U^(1/m))] = H_m (004 Theorem A.3), also for astronomically large m."""
    rng = np.random.default_rng(5)
    draws = _class_max_noise(np.full(200_000, math.log(m)), rng)
    assert np.isfinite(draws).all()
    h_m = sum(1 / i for i in range(1, m + 1)) if m <= 10**6 else \
        math.log(m) + np.euler_gamma + 1 / (2 * m)
    se = draws.std() / math.sqrt(draws.size)
    assert abs(draws.mean() - h_m) < 5 * se


def test_ledger_charged_once_with_eps():
    led = Ledger(2.0, 1e-5)
    lipschitz_topk(SCORES, 2, 1.0, 0.7, np.random.default_rng(0), led, stage="selection")
    (c,) = led.charges
    assert c.mechanism == "canonical lipschitz top-k" and c.stage == "selection"
    assert c.eps == 0.7 and c.delta == 0.0


@pytest.mark.parametrize("bad", [dict(k=7), dict(k=0), dict(k=-1), dict(k=2.0),
                                 dict(sensitivity=0.0), dict(sensitivity=np.inf),
                                 dict(scores=[0.0, np.nan, 1.0]), dict(scores=[0.0, -np.inf]),
                                 dict(scores=[]), dict(eps=0.0)])
def test_invalid_arguments_raise_before_charging(bad):
    args = dict(scores=SCORES, k=2, sensitivity=1.0, eps=1.0) | bad
    led = Ledger()
    with pytest.raises(ValueError):
        lipschitz_topk(args["scores"], args["k"], args["sensitivity"], args["eps"],
                       np.random.default_rng(0), led)
    assert len(led) == 0


def test_k_equals_d_and_reproducible():
    assert lipschitz_topk(SCORES, 6, 1.0, 1.0, np.random.default_rng(0)).tolist() == \
        list(range(6))
    a = [lipschitz_topk(SCORES, 3, 1.0, 1.0, np.random.default_rng(9)).tolist() for _ in "ab"]
    assert a[0] == a[1]


def test_uniform_subset_is_uniform():
    from dpstats.mechanisms.noise import uniform_subset
    rng = np.random.default_rng(13)
    subsets = list(itertools.combinations(range(6), 3))
    draws = [uniform_subset(6, 3, rng) for _ in range(60_000)]
    assert all(len(set(s.tolist())) == 3 for s in draws[:100])
    assert chi_square_p(draws, subsets, np.full(20, 1 / 20)) > 1e-3
    assert uniform_subset(10**9, 0, rng).size == 0
    with pytest.raises(ValueError):
        uniform_subset(2, 3, rng)
