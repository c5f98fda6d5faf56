"""Tests of the auditor itself, on toy mechanisms whose privacy loss is known exactly.

The toy mechanisms draw with numpy directly: they are test fixtures, not dpstats mechanisms.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from auditor import (
    Pair,
    audit,
    cp_lower,
    cp_upper,
    eps_lower_bound,
    select_event,
)
from scipy.stats import binomtest, norm


@pytest.mark.parametrize("k, n", [(0, 50), (1, 50), (17, 50), (50, 50), (300, 20_000)])
def test_clopper_pearson_matches_scipy_exact_interval(k, n):
    a = 0.01
    ci = binomtest(k, n).proportion_ci(confidence_level=1 - 2 * a, method="exact")
    assert float(cp_lower(k, n, a)) == pytest.approx(ci.low, abs=1e-12)
    assert float(cp_upper(k, n, a)) == pytest.approx(ci.high, abs=1e-12)


def test_eps_lower_bound_is_below_the_true_ratio_and_zero_without_evidence():
    n = 100_000
    lb = float(eps_lower_bound(30_000, 10_000, n, n, 0.0, 1e-3))
    assert math.log(3.0) - 0.05 < lb < math.log(3.0)
    assert float(eps_lower_bound(5, 5, n, n, 0.0, 1e-3)) == 0.0
    # delta absorbs events rarer than itself
    assert float(eps_lower_bound(900, 10, n, n, 0.01, 1e-3)) == 0.0


def _randomized_response(p_truth: float):
    """Reports the input bit with probability ``p_truth``: eps = log(p / (1 - p)) exactly."""
    def sample(bit, n, rng):
        keep = rng.uniform(size=n) < p_truth
        return np.where(keep, bit, 1 - bit)
    return sample


RR = [Pair("bit 0 vs 1", 0, 1)]


def test_auditor_certifies_randomized_response_up_to_its_true_eps():
    true_eps = math.log(3.0)
    rep = audit(_randomized_response(0.75), RR, eps=true_eps, kind="discrete", n=40_000,
                seed=1)
    assert not rep.violated
    assert true_eps - 0.15 < rep.eps_lb <= true_eps


def test_auditor_flags_a_claim_below_the_true_eps():
    rep = audit(_randomized_response(0.75), RR, eps=math.log(3.0) - 0.3, kind="discrete",
                n=40_000, seed=2)
    assert rep.violated


def test_auditor_finds_nothing_when_the_output_ignores_the_input():
    def sample(_, n, rng):
        return rng.normal(size=(n, 3))
    rep = audit(sample, [Pair("a vs b", 0, 1)], eps=0.05, n=40_000, seed=3)
    assert not rep.violated and rep.eps_lb < 0.05


def test_fisher_projection_finds_a_shift_hidden_across_coordinates():
    """Gaussian shift of L2 length mu = 1 along a random 5-D direction: the best threshold
    event gives about log((Phi(1.5 - 1) - 0.01) / Phi(-1.5)) ~ 1.5 at delta = 0.01."""
    direction = np.random.default_rng(4).normal(size=5)
    direction /= np.linalg.norm(direction)

    def sample(shift, n, rng):
        return rng.normal(size=(n, 5)) + shift * direction
    pair = [Pair("shift 1", 0.0, 1.0)]
    rep = audit(sample, pair, eps=1.0, delta=0.01, n=60_000, seed=5)
    assert rep.violated
    best = max(math.log((norm.sf(t - 1) - 0.01) / norm.sf(t)) for t in np.linspace(0, 3, 301))
    assert 1.0 < rep.eps_lb <= best


def test_unreleased_outputs_are_an_event():
    """Releases with probability 0.5 on one input and 0.9 on the other: eps >= log 5 from
    the event 'nothing released'."""
    def sample(p, n, rng):
        out = rng.normal(size=n)
        out[rng.uniform(size=n) >= p] = np.nan
        return out
    rep = audit(sample, [Pair("0.5 vs 0.9", 0.5, 0.9)], eps=1.0, n=20_000, seed=6)
    assert rep.violated and "nothing released" in rep.best.event


def test_pilot_search_keeps_the_revealing_pair():
    decoys = [Pair(f"decoy {i}", 0.75, 0.75) for i in range(4)]
    pairs = decoys[:2] + [Pair("revealing", 0.6, 0.9)] + decoys[2:]

    def sample(p, n, rng):
        return (rng.uniform(size=n) < p).astype(int)
    rep = audit(sample, pairs, eps=0.5, kind="discrete", n=20_000, n_pilot=2_000,
                n_audit=2, seed=7)
    assert "revealing" in [r.pair for r in rep.results]
    assert rep.violated and rep.best.pair == "revealing"


def test_event_selection_on_tuples_uses_elements_and_sets():
    """Orderings of {0, 1} and {2, 3}: half and half under D0, 80/20 under D1. The best event
    is "the set is {2, 3}" (or an element or union of outcomes equivalent to it), favouring
    D0 by 0.5 / 0.2."""
    from auditor import _encode
    rng = np.random.default_rng(8)
    orders = np.array([[0, 1], [1, 0], [2, 3], [3, 2]])
    a0 = rng.permutation(np.repeat(orders, [250, 250, 250, 250], axis=0))
    a1 = rng.permutation(np.repeat(orders, [400, 400, 100, 100], axis=0))
    c0, c1, labels = _encode(a0, a1)
    assert [name for name, _ in labels] == ["outcome", "element 0", "element 1", "set"]
    ev, direction, score = select_event(c0, c1, kind="discrete", delta=0.0, alpha=1e-3,
                                        labels=labels)
    assert direction == 0 and 0.5 < score < math.log(2.5)
    assert ev.member(c0).mean() == 0.5 and ev.member(c1).mean() == pytest.approx(0.2)
